"""Read every transpose, broadcast, reverse and contraction from stored values, and store a
transpose's result and every widened value: the way vkml recompiles a Vulkan module whose
dispatches could race on workgroup memory.

IREE 3.13's SPIR-V codegen stages a value it computes inside a dispatch in workgroup memory
when the dispatch reads it through another indexing than the one it was computed in:
transposed, broadcast along a new dimension, or as both sides of a contraction of length 1
(which IREE turns into a broadcast product). It puts no barrier between the invocations that
write the staged value and those that read it (``vkml.compiler.workgroup_races``, which finds
such dispatches after a compile). The values so staged were computed in the reading dispatch:
elementwise producers IREE fused into it, and widening conversions (float16 to float32),
which IREE clones into every dispatch that reads them, even from a stored value. So this pass
puts a fusion stop on every computed operand of those ops, and after every transpose (IREE
moves transposes past elementwise ops) and every widening conversion; a ``dot_general`` of
operands narrower than its result reads them converted and stored. A fusion stop costs no queue
operation, only the stored value (``vkml.dialect.fusion_stops``).

Not in the default pipeline: most modules have no such dispatch, and keep the fusion.
``vkml.compiler.compile`` adds it when the check finds a race.
"""

from __future__ import annotations

import re

from vkml.dialect.fusion_stops import FUSION_STOPS
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, stop_fusion

ARGUMENT = "vkml-isolate-relayouts"
DESCRIPTION = "read relayouts and contractions from stored values, store widened values"

# ops that read their operand through another indexing than their result's
RELAYOUTS = frozenset(
    {
        "stablehlo.transpose",
        "stablehlo.broadcast_in_dim",
        "stablehlo.reverse",
        "stablehlo.dot_general",
    }
)
# a value of these is stored or folded already: no fusion stop needed
_STORED = FUSION_STOPS | {"stablehlo.constant"}


def may_change(text: str) -> bool:
    """Whether the pass may change the module spelled ``text`` (a compile that found a race
    need not compile again when it would not)."""
    return any(f"{name} " in text for name in (*RELAYOUTS, "stablehlo.convert"))


def _isolate_operands(op: ir.Operation) -> None:
    for i, source in enumerate(list(op.operands)):
        owner = source.owner
        if not isinstance(owner, ir.Block) and owner.name not in _STORED:
            op.operands[i] = stop_fusion(source, op, after=False)


def _isolate_result(op: ir.Operation) -> None:
    result = op.results[0]
    readers = [use.owner for use in result.uses]
    if not readers:
        return
    stopped = stop_fusion(result, op)
    for reader in readers:
        for i, operand in enumerate(reader.operands):
            if operand == result:
                reader.operands[i] = stopped


def _widens(op: ir.Operation) -> bool:
    """A ``stablehlo.convert`` to a wider element type (``float16`` to ``float32``, ...):
    IREE clones such a conversion into every dispatch that reads its result."""
    if op.name != "stablehlo.convert":
        return False
    source = ir.RankedTensorType(op.operands[0].type).element_type
    result = ir.RankedTensorType(op.results[0].type).element_type
    return _bits(result) > _bits(source)


def _bits(element: ir.Type) -> int:
    """The width of an element type spelled ``f16``, ``bf16``, ``i1``, ``ui32``, ..."""
    width = re.search(r"\d+$", str(element))
    return int(width.group()) if width else 0


def _widen_operands(op: ir.Operation) -> None:
    """A ``dot_general`` of narrower operands than its result (float16 into float32) reads
    them widened by a conversion of its own, stored: IREE widens them inside the dispatch,
    and a contraction of length 1 becomes a broadcast product of the widened values."""
    result = ir.RankedTensorType(op.results[0].type).element_type
    for i, source in enumerate(list(op.operands)):
        ranked = ir.RankedTensorType(source.type)
        if _bits(ranked.element_type) >= _bits(result) or str(ranked.element_type)[0] != "f":
            continue
        with ir.InsertionPoint(op), op.location:
            wide = ir.RankedTensorType.get(ranked.shape, result)
            widened = ir.Operation.create(
                "stablehlo.convert", results=[wide], operands=[source]
            ).result
        op.operands[i] = stop_fusion(widened, op, after=False)


def run(module: ir.Operation) -> None:
    """Stop fusion of the operands of every relayout of ``module``, and the result of a transpose
    and of a widening conversion."""
    for op in find_ops(module, lambda o: o.name in RELAYOUTS or _widens(o)):
        if op.name == "stablehlo.dot_general":
            _widen_operands(op)
        if op.name in RELAYOUTS:
            _isolate_operands(op)
        if op.name == "stablehlo.transpose" or _widens(op):
            _isolate_result(op)
