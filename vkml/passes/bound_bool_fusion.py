"""Store a boolean value where IREE would recompute a large cone of it in every reader.

IREE 3.13 fuses a producer whose results are all ``i1`` into *every* consumer, however many
it has (DispatchCreation's ``areFusableAsElementwiseOps``: "aggressively fuse to avoid i1
buffers"). Each consumer then holds a copy of the producer, and of the producers fused into
it, so a chain of boolean values that each feed two or three later booleans is copied
exponentially often: 144 chained ``vkml.cond`` of bools (433 ops) ran IREE's compiler past
600 s; 20 of them took 118 s, 14 of them 35 s, nearly all in ``ElementwiseOpFusionPass``
(found by the fuzz campaign, ``benchmarks/results/stress-findings.md``).

Invariant: within a block, no boolean value read by more than one op (other than the
terminator) has a fused cone of more than ``LIMIT`` boolean producers, counted with
repetition (the op copies IREE's fusion would make of it in each reader). Where one would,
its readers read it through a fusion stop (``vkml.dialect.fusion_stops``, IREE's
``compute_barrier``): the value is computed once and stored, and each reader's cone starts
there. What is returned reads the value itself. The values are unchanged and the fusion stops
cost nothing at run time: the 40-step chain of the tests compiles to one queue submission
with them, to 20 (each a host wait) with ``stablehlo.optimization_barrier`` in their place.
A round trip through ``i8`` instead was seen through by IREE's canonicalizer, and a
reshape or slice of the result then became a copy IREE 3.13 cannot compile ("write
affecting operations on global resources are restricted to workgroup distributed
contexts").
"""

from __future__ import annotations

from vkml.dialect.fusion_stops import FUSION_STOPS
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, stop_fusion

ARGUMENT = "vkml-bound-bool-fusion"
DESCRIPTION = "store a boolean where IREE would copy a large fused cone into each reader"

# Boolean producers a reader may recompute: small enough that no compile notices, large
# enough that ordinary comparisons, masks, NaN tests and the builder's predicated turns
# (cones of 4 in a 100-turn loop) are never stored.
LIMIT = 32


def _is_bool(value: ir.Value) -> bool:
    try:
        return str(ir.RankedTensorType(value.type).element_type) == "i1"
    except ValueError:  # not a ranked tensor
        return False


_TERMINATORS = ("func.return", "stablehlo.return")
# Ops IREE fuses into nothing: their boolean results start a cone (of 0).
_UNFUSED = FUSION_STOPS | {"stablehlo.while", "stablehlo.if", "stablehlo.case"}


def _readers(value: ir.Value) -> list[ir.Operation]:
    """The ops other than a block's terminator that read ``value``."""
    return [use.owner for use in value.uses if use.owner.name not in _TERMINATORS]


def _store(op: ir.Operation, value: ir.Value) -> ir.Value:
    """Route the readers of ``value`` (not a terminator: a returned value stays as it is)
    through a fusion stop; returns the value they read."""
    readers = _readers(value)
    kept = stop_fusion(value, op)
    for reader in readers:
        for i, operand in enumerate(reader.operands):
            if operand == value:
                reader.operands[i] = kept
    return kept


def _bound_block(block: ir.Block) -> None:
    cone: dict[ir.Value, int] = {}  # boolean value -> producers IREE would fuse with it
    for op in list(block.operations):
        op = op.operation
        results = list(op.results)
        if op.name in _UNFUSED or not results or not all(_is_bool(r) for r in results):
            continue
        size = 1 + sum(cone.get(v, 0) for v in op.operands)
        for result in results:
            cone[result] = size
            if size > LIMIT and len(_readers(result)) > 1:
                cone[_store(op, result)] = 0


def run(module: ir.Operation) -> None:
    """Bound the boolean cones of every block of ``module`` (loop and branch bodies too)."""
    blocks = [
        block
        for op in find_ops(module, lambda o: len(o.regions) > 0)
        for region in op.regions
        for block in region.blocks
    ]
    for block in blocks:
        _bound_block(block)
