"""Reductions. Sums, products and amax/amin are pairwise trees (select-based max/min), so every
reduction has one published order and is bit-exact; argmax/argmin take the first index of
that extreme.

amax/amin share ``g`` evenly among tied extremes, and a NaN anywhere in a reduced slice makes
that slice's gradient NaN (PyTorch 2.13). argmax/argmin have no gradient (integer outputs).
"""

from __future__ import annotations

import numpy as np

from vkml.graph.node import Node
from vkml.ops import rules
from vkml.ops.emitters import reduce as emit
from vkml.ops.references import axes as ref
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, Spelling, table


def _keepdims(t: Handle, node: Node) -> Handle:
    """A reduction's output (or its gradient) with the reduced axes back as length 1."""
    axes = node.attr("axes")
    shape = tuple(1 if i in axes else s for i, s in enumerate(node.src[0].shape))
    return t.reshape(shape)


def grad_sum(node: Node, g: Handle, f: Algebra) -> Grads:
    divisor = node.attr("divisor")
    if divisor is not None:  # mean is a sum with a divisor
        g = g / float(divisor)
    return (_keepdims(g, node).broadcast_to(node.src[0].shape),)


def grad_prod(node: Node, g: Handle, f: Algebra) -> Grads:
    # the product of the others: out / x where no element of the slice is 0; at the one zero
    # of a slice, the product of the rest; 0 elsewhere (PyTorch's prod_backward)
    x, out, axes = f.tensor(node.src[0]), _keepdims(f.tensor(node), node), node.attr("axes")
    zero = x == 0
    zeros = f.where(zero, 1, 0).astype(out.dtype).sum(axes, keepdims=True)
    others = f.where(zero, 1.0, x).prod(axes, keepdims=True)
    at_zero = f.where(zeros == 1, others, 0.0)
    share = f.where(zero, at_zero, out / x)
    return ((_keepdims(g, node) * share).astype(node.src[0].dtype),)


def grad_extreme(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    # PyTorch's amax/amin rule: g shared evenly among the elements equal to the extreme; a
    # NaN slice matches nothing, so its gradient is g / 0 * 0 = NaN
    mask = f.where(x == _keepdims(f.tensor(node), node), 1.0, 0.0).astype(g.dtype)
    count = mask.sum(node.attr("axes"), keepdims=True)
    return (mask * (_keepdims(g, node) / count),)


REDUCE: dict[str, OpDef] = table(
    OpDef("sum", rules.accumulation, emit.emit_sum, ref.reduce_sum, True, gradient=grad_sum,
          spelling=Spelling("sum", "Sum over ``axis`` in vkml's fixed pairwise order; bool and integers sum to int64.",
                            methods=("sum",))),
    OpDef("prod", rules.accumulation, emit.emit_prod, ref.reduce_prod, True, gradient=grad_prod,
          spelling=Spelling("prod", "Product over ``axis`` in vkml's fixed pairwise order; bool and integers multiply in int64 (wrapping); an empty product is 1.",
                            methods=("prod",))),
    OpDef("amax", rules.extreme, emit.minmax(True), ref.minmax(True), True, gradient=grad_extreme,
          spelling=Spelling("amax", "Maximum over ``axis``; NaN propagates (any NaN gives NaN).", methods=("amax",))),
    OpDef("amin", rules.extreme, emit.minmax(False), ref.minmax(False), True, gradient=grad_extreme,
          spelling=Spelling("amin", "Minimum over ``axis``; NaN propagates (any NaN gives NaN).", methods=("amin",))),
    OpDef("argmax", rules.index_reduction, emit.argextreme(True), ref.argextreme(np.argmax), True,
          spelling=Spelling("argmax", "Index (int64) of the first maximum along ``axis`` (flattened if None); NaN is the maximum.",
                            methods=("argmax",))),
    OpDef("argmin", rules.index_reduction, emit.argextreme(False), ref.argextreme(np.argmin), True,
          spelling=Spelling("argmin", "Index (int64) of the first minimum along ``axis`` (flattened if None); NaN is the minimum.",
                            methods=("argmin",))),
)  # fmt: skip
