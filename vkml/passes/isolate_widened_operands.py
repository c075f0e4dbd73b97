"""Compute every matmul operand that is widened from narrower data in a dispatch of its own.

IREE 3.13 treats an elementwise op whose full-rank input is narrower than its result (a
"bit extend": ``f16 -> f32``, with whatever follows it, such as Vulkan's float fence) as part
of its consumer, and clones it into the matmul's dispatch. Its SPIR-V ``BaseDistribute``
pipeline then writes that operand into workgroup memory, one element per invocation, and
reads it back in other invocations with no barrier in between: on lavapipe the first rows of
``x.astype(float32) @ w`` came back with terms missing (``tests/py/frontend/
test_matmul_operands.py``). IREE has no flag against it, so only Vulkan compiles run this pass
(``pipelines.VULKAN_PASSES``); a 16-bit matmul needs none of it, since ``emit_matmul`` gives
IREE its 16-bit operands, which the matmul widens as it reads them.

Invariant: no ``stablehlo.dot_general`` operand is computed, through ops IREE fuses, from a
non-constant, non-scalar value of a narrower element type; where one was, it passes through a
fusion stop (``vkml.dialect.fusion_stops``: IREE's dispatch formation fuses and
clones nothing across it), so the widening runs in a dispatch of its own and the matmul reads
the result from memory. The fusion stop costs no queue operation: until 2026-12-05 this pass used
``stablehlo.optimization_barrier``, which IREE 3.13 turns into a host wait between two
submissions (~1 ms on an H200).
"""

from __future__ import annotations

from vkml.dialect.fusion_stops import FUSION_STOPS
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, stop_fusion

ARGUMENT = "vkml-isolate-widened-operands"
DESCRIPTION = "give each matmul operand widened from narrower data its own dispatch (Vulkan)"

# Ops that start a dispatch of their own (or carry values between them): the walk back from
# an operand stops there. Everything else (elementwise ops, converts, broadcasts, reshapes,
# transposes, slices) IREE may fuse into the operand's producer.
_ROOTS = FUSION_STOPS | {
    "stablehlo." + name for name in ("dot_general", "reduce", "while", "if", "case", "sort")
}


def _bits(t: ir.Type) -> int:
    element = ir.RankedTensorType(t).element_type
    return 1 if str(element) == "i1" else int(element.width)


def _narrowest_input(value: ir.Value) -> int | None:
    """The fewest bits of any non-constant, non-scalar value the ops IREE could fuse into
    ``value``'s producer read (None if they read none)."""
    narrowest: int | None = None
    seen: set[ir.Value] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        owner = v.owner
        op = None if isinstance(owner, ir.Block) else owner.operation
        if op is None or op.name in _ROOTS:  # a function argument or another dispatch's result
            if ir.RankedTensorType(v.type).rank > 0:
                bits = _bits(v.type)
                narrowest = bits if narrowest is None else min(narrowest, bits)
            continue
        if op.name == "stablehlo.constant":
            continue  # a literal is folded into the code that uses it
        stack.extend(op.operands)
    return narrowest


def run(module: ir.Operation) -> None:
    """Put each widened operand of a ``dot_general`` of ``module`` behind a barrier."""
    dots = find_ops(module, lambda op: op.name == "stablehlo.dot_general")
    for dot in dots:
        for i, operand in enumerate(list(dot.operands)):
            narrowest = _narrowest_input(operand)
            if narrowest is None or narrowest >= _bits(operand.type):
                continue
            dot.operands[i] = stop_fusion(operand, dot, after=False)
