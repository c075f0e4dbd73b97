"""Ctrl-C while the compiler is first imported: the import finishes, then the interrupt is
raised. An interrupt inside ``iree.compiler``'s native module init aborted the process
(SIGABRT, "exception not rethrown"; reproduced by a SIGINT 40 ms into a first realize)."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import importlib.abc, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the test runner left
from vkml.compiler import cache
from vkml.compiler.target import CPU_TARGET
assert "iree.compiler" not in sys.modules


class Interrupting(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "iree.compiler":  # Ctrl-C as the compiler's import begins
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, Interrupting())
try:
    cache.compile_module("module {}", CPU_TARGET)
except KeyboardInterrupt:
    print("interrupted", "vkml.compiler.compile" in sys.modules)
"""


def test_an_interrupt_during_the_compiler_import_waits_for_it() -> None:
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["interrupted", "True"], run.stdout + run.stderr
