"""A child Python in which ``iree.compiler`` (and everything under it) cannot be imported, as
on a deployment machine with only iree-base-runtime and NumPy installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# Runs before anything else in the child: iree.compiler and its submodules cannot be found.
BLOCK_COMPILER = """
import importlib.abc
import sys

sys.modules["iree.compiler"] = None


class BlockCompiler(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "iree.compiler" or name.startswith("iree.compiler."):
            raise ModuleNotFoundError(f"{name} is not installed here", name=name)
        return None


sys.meta_path.insert(0, BlockCompiler())
"""


def run_without_compiler(
    body: str, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``body`` (dedented) in a child Python where ``iree.compiler`` cannot be imported,
    from the repository root, with ``argv`` and ``env`` added to this process's."""
    script = BLOCK_COMPILER + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script, *argv],
        check=False, capture_output=True, text=True, cwd=ROOT, timeout=300,
        env=None if env is None else {**os.environ, **env},
    )  # fmt: skip
