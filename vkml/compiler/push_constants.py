"""The push-constant check: every executable vkml emits for Vulkan must fit the 128 bytes of
push constants that every conformant Vulkan device provides (``maxPushConstantsSize`` is at
least 128), so a compiled module runs on any device of its target.

IREE passes a dispatch's dynamic scalars as 32-bit push constants; the count is in each
executable's pipeline layout (``#hal.pipeline.layout<constants = N, ...>``). This compiles
the module once more with IREE's executable-source dump and reads those layouts.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from vkml.compiler.compile import compile_timeout
from vkml.compiler.target import Target
from vkml.dialect.ir import compile_stablehlo
from vkml.passes.run import run_passes

VULKAN_GUARANTEED_BYTES = 128
_LAYOUT = re.compile(r"#hal\.pipeline\.layout<constants\s*=\s*(\d+)")


def push_constant_bytes(text: str, target: Target) -> dict[str, int]:
    """Push-constant bytes of every executable IREE makes from ``text`` for ``target``."""
    with tempfile.TemporaryDirectory(prefix="vkml-executables-") as tmp:
        dump = f"--iree-hal-dump-executable-sources-to={tmp}"
        compile_stablehlo(
            run_passes(text), target.backend, [*target.iree_flags, dump], compile_timeout()
        )
        sizes: dict[str, int] = {}
        for source in sorted(Path(tmp).glob("*.mlir")):
            counts = [int(n) for n in _LAYOUT.findall(source.read_text(encoding="utf-8"))]
            sizes[source.stem] = 4 * max(counts, default=0)
    return sizes


def oversized(text: str, target: Target, limit: int = VULKAN_GUARANTEED_BYTES) -> dict[str, int]:
    """The executables of ``text`` whose push constants exceed ``limit`` bytes."""
    return {name: size for name, size in push_constant_bytes(text, target).items() if size > limit}
