"""Every ``iree.compiler`` import vkml makes goes through this module."""

from __future__ import annotations

import functools
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence

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
    text: str, backend: str, flags: Sequence[str], timeout: float | None,
    memory: int | None = None,
) -> bytes:  # fmt: skip
    """IREE's ``compile_str`` work, with a time limit: ``iree-compile`` runs as a child process,
    killed when it runs past ``timeout`` seconds; with ``memory``, its address space is
    limited to that many bytes (util-linux's ``prlimit``, where there is one), so a compile
    that would exhaust the machine fails its allocations instead.

    Raises:
        CompilerToolError: iree-compile reported an error (its exit status and stderr).
        CompilerCrash: iree-compile was killed by a signal (a crash).
        KeyboardInterrupt: it was stopped by SIGINT (Ctrl-C in the terminal reaches it too).
        subprocess.TimeoutExpired: it ran past ``timeout`` (and was killed).

    On Linux (with util-linux's ``setpriv``) iree-compile dies with the process that started
    it: a Python killed mid-compile (``kill -9``, an out-of-memory kill) leaves no compiler
    running on.
    """
    command = compile_command(backend, flags)
    done = subprocess.run(
        _dies_with_parent(_limited(command, memory)), input=text.encode(), capture_output=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    done.args = command  # what an error names: iree-compile, not the setpriv around it
    if done.returncode == -signal.SIGINT:  # Ctrl-C reached the whole process group
        raise KeyboardInterrupt
    if done.returncode < 0:
        raise CompilerCrash(-done.returncode, done.stderr.decode(errors="replace"))
    if done.returncode != 0:
        raise CompilerToolError(done)
    return done.stdout


@functools.cache
def _setpriv() -> str | None:
    """util-linux's ``setpriv``, where it can set a parent-death signal (Linux; util-linux
    2.33 and later), else None."""
    path = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if path is None:
        return None
    try:
        usage = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if "--pdeathsig" in usage.stdout else None


def _limited(command: list[str], memory: int | None) -> list[str]:
    """``command`` run through ``prlimit --as`` (its address space at most ``memory`` bytes)
    where util-linux's prlimit is installed and a limit is asked for."""
    prlimit = (
        shutil.which("prlimit") if memory is not None and sys.platform.startswith("linux") else None
    )
    return [prlimit, f"--as={memory}", "--", *command] if prlimit else command


def _dies_with_parent(command: list[str]) -> list[str]:
    """``command`` run through ``setpriv --pdeathsig KILL`` where there is one: Linux kills it
    when the thread that started it (and waits for it) dies. No Python code runs between
    fork and exec (a ``preexec_fn`` would, and forking a threaded process that way can
    deadlock the child)."""
    setpriv = _setpriv()
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


class CompilerCrash(Exception):
    """iree-compile died of signal ``signal`` (``stderr``: what it wrote before)."""

    def __init__(self, signal: int, stderr: str) -> None:
        super().__init__(f"iree-compile died of signal {signal}")
        self.signal, self.stderr = signal, stderr
