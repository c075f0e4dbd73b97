"""Each dispatch's code as IREE has it right before SPIR-V, written to files during a compile.

The checks that read IREE's own code for a Vulkan target (``loop_budget``: no loop past a
driver's cap; ``workgroup_races``: no shared memory read before another invocation wrote it)
read these files. By then every loop is an ``scf.for`` with explicit bounds and every buffer a
``memref`` with its storage class, and the IR is still MLIR text.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

DUMP_BEFORE = "iree-convert-to-spirv"


def dump_flags(directory: Path) -> list[str]:
    """The IREE compiler flags that write each executable's pre-SPIR-V IR under ``directory``."""
    return [f"--mlir-print-ir-before={DUMP_BEFORE}", f"--mlir-print-ir-tree-dir={directory}"]


def dump_files(directory: Path) -> Iterable[Path]:
    """The IR files IREE wrote under ``directory`` (one per executable variant)."""
    return sorted(directory.rglob(f"*{DUMP_BEFORE}.mlir"))
