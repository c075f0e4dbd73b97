"""Every ``iree.compiler`` import vkml makes goes through this module."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Sequence

from iree.compiler import ir, passmanager
from iree.compiler.tools import CompilerOptions, CompilerToolError
from iree.compiler.tools.core import TempFileSaver, build_compile_command_line
from iree.compiler.version import VERSION as COMPILER_VERSION

__all__ = [
    "COMPILER_VERSION",
    "CompilerCrash",
    "CompilerToolError",
    "compile_command",
    "compile_stablehlo",
    "ir",
    "parse_module",
    "passmanager",
]


def parse_module(text: str, context: ir.Context) -> ir.Module:
    """Parse MLIR ``text`` in ``context`` (which has every IREE input dialect registered)."""
    return ir.Module.parse(text, context)


def compile_command(backend: str, flags: Sequence[str]) -> list[str]:
    """The ``iree-compile`` command line that reads StableHLO on stdin and writes the
    ``.vmfb`` for ``backend`` to stdout."""
    options = CompilerOptions(
        target_backends=[backend], input_type="stablehlo", extra_args=list(flags)
    )
    with TempFileSaver.implicit() as saver:
        return build_compile_command_line("-", saver, options)


def compile_stablehlo(
    text: str, backend: str, flags: Sequence[str], timeout: float | None
) -> bytes:
    """IREE's ``compile_str`` work, with a time limit: ``iree-compile`` runs as a child process,
    killed when it runs past ``timeout`` seconds.

    Raises:
        CompilerToolError: iree-compile reported an error (its exit status and stderr).
        CompilerCrash: iree-compile was killed by a signal (a crash).
        KeyboardInterrupt: it was stopped by SIGINT (Ctrl-C in the terminal reaches it too).
        subprocess.TimeoutExpired: it ran past ``timeout`` (and was killed).
    """
    done = subprocess.run(
        compile_command(backend, flags), input=text.encode(), capture_output=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    if done.returncode == -signal.SIGINT:  # Ctrl-C reached the whole process group
        raise KeyboardInterrupt
    if done.returncode < 0:
        raise CompilerCrash(-done.returncode, done.stderr.decode(errors="replace"))
    if done.returncode != 0:
        raise CompilerToolError(done)
    return done.stdout


class CompilerCrash(Exception):
    """iree-compile died of signal ``signal`` (``stderr``: what it wrote before)."""

    def __init__(self, signal: int, stderr: str) -> None:
        super().__init__(f"iree-compile died of signal {signal}")
        self.signal, self.stderr = signal, stderr
