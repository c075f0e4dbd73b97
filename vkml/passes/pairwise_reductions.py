"""Rewrite every floating-point sum reduction into vkml's published pairwise tree.

Invariant: after this pass no ``stablehlo.reduce`` whose combiner is ``stablehlo.add`` over a
floating-point element type remains; each became slices and elementwise adds in the order of
``vkml.dialect.pairwise``, which the reference device uses too. Order-independent reductions
(max, min, integer sums) are left as they are.
"""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.ir import ir
from vkml.dialect.pairwise import pairwise_sum
from vkml.dialect.rewrite import (
    find_ops,
    reduce_combiner,
    replace_with_function_body,
    tensor_type_of,
)

ARGUMENT = "vkml-pairwise-reductions"
DESCRIPTION = "rewrite float sum reductions into the fixed pairwise tree"


def _is_float_sum(op: ir.Operation) -> bool:
    return reduce_combiner(op) == "add" and tensor_type_of(op.operands[0].type).dtype.is_float


def run(module: ir.Operation) -> None:
    """Rewrite each float sum reduction of ``module`` (a builtin.module op) in place."""
    for op in find_ops(module, _is_float_sum):
        x_type = tensor_type_of(op.operands[0].type)
        init_type = tensor_type_of(op.operands[1].type)
        dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        b = FunctionBuilder("pairwise")
        x, init = b.arg(x_type), b.arg(init_type)
        b.ret([pairwise_sum(b, x, dims, init)])
        replace_with_function_body(op, b.module_text())
