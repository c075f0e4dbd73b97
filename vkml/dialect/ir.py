"""Every ``iree.compiler`` import vkml makes goes through this module."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence

from iree.compiler import ir, passmanager
from iree.compiler.tools import CompilerOptions, CompilerToolError
from iree.compiler.tools.core import TempFileSaver, build_compile_command_line
from iree.compiler.version import VERSION as COMPILER_VERSION

# IREE ships no Python module for the stablehlo dialect. MLIR's bindings look for one each
# time they wrap a stablehlo op and do not remember the miss: a search of sys.path per op,
# half of vkml's pass time on a 3,000-op module. A None entry answers the search at once.
sys.modules.setdefault("iree.compiler.dialects.stablehlo", None)  # type: ignore[arg-type]

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

    On Linux iree-compile dies with the process that started it: a Python killed mid-compile
    (``kill -9``, an out-of-memory kill) leaves no compiler running on.
    """
    done = subprocess.run(
        compile_command(backend, flags), input=text.encode(), capture_output=True,
        timeout=timeout, check=False, preexec_fn=_dies_with(os.getpid()),
    )  # fmt: skip
    if done.returncode == -signal.SIGINT:  # Ctrl-C reached the whole process group
        raise KeyboardInterrupt
    if done.returncode < 0:
        raise CompilerCrash(-done.returncode, done.stderr.decode(errors="replace"))
    if done.returncode != 0:
        raise CompilerToolError(done)
    return done.stdout


_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """Linux's ``prctl``, ready to call in a child between fork and exec (no lookup left to
    do there); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes, prctl.restype = [ctypes.c_int, ctypes.c_ulong], ctypes.c_int
    return prctl  # type: ignore[no-any-return]


_PRCTL = _prctl()


def _dies_with(parent: int) -> Callable[[], None] | None:
    """What the compiler's child process runs before exec: ask Linux to SIGKILL it when
    ``parent`` (the thread that started it, which waits for it) dies, and exit at once if
    ``parent`` is already gone."""
    prctl = _PRCTL
    if prctl is None:
        return None

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return arm


class CompilerCrash(Exception):
    """iree-compile died of signal ``signal`` (``stderr``: what it wrote before)."""

    def __init__(self, signal: int, stderr: str) -> None:
        super().__init__(f"iree-compile died of signal {signal}")
        self.signal, self.stderr = signal, stderr
