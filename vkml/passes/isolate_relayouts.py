"""Give every transpose a dispatch of its own, reading a stored value and stored in turn: the
way vkml recompiles a Vulkan module whose dispatches could race on workgroup memory.

IREE 3.13's SPIR-V codegen stages a producer it cloned into a dispatch (a widening convert
from float16) in workgroup memory when the dispatch reads it transposed, and puts no
barrier between the invocations that write it and those that read it
(``vkml.compiler.workgroup_races``, which finds such dispatches after a compile). With a
fusion fence on each side of every transpose, no dispatch computes a value and reads it
transposed: the transpose reads a stored value and its result is stored. A fence costs no
queue operation, only the stored value (``vkml.dialect.fences``).

Not in the default pipeline: most modules have no such dispatch, and keep the transposes
IREE fuses. ``vkml.compiler.compile`` adds it when the check finds a race.
"""

from __future__ import annotations

from vkml.dialect.fences import FUSION_STOPS
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import fence_fusion, find_ops

ARGUMENT = "vkml-isolate-transposes"
DESCRIPTION = "read and store every transpose across fusion fences"


def _isolate(op: ir.Operation) -> None:
    source = op.operands[0]
    owner = source.owner
    if not isinstance(owner, ir.Block) and owner.name not in FUSION_STOPS:
        op.operands[0] = fence_fusion(source, op, after=False)
    result = op.results[0]
    readers = [use.owner for use in result.uses]
    if not readers:
        return
    fenced = fence_fusion(result, op)
    for reader in readers:
        for i, operand in enumerate(reader.operands):
            if operand == result:
                reader.operands[i] = fenced


def run(module: ir.Operation) -> None:
    """Fence both sides of every ``stablehlo.transpose`` of ``module``."""
    for op in find_ops(module, lambda o: o.name == "stablehlo.transpose"):
        _isolate(op)
