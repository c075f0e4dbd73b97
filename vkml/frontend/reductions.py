"""The reductions and contractions that take more than an operand and axes: ``mean`` (a sum
with a divisor), the scan ``cumsum`` (which flattens first), the composites ``softmax`` and
``log_softmax``, and ``matmul`` (NumPy's 1-D promotions).

The plain reductions (sum, prod, amax, amin, argmax, argmin) are recorded by
``vkml.frontend.record`` from their rules. Each function here raises an error naming the op
and the values, or records the op's node (a composite records its parts) and returns it.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import DType, default_float
from vkml.errors import DeviceError, DTypeError, ShapeError
from vkml.frontend.elementwise import astype
from vkml.frontend.record import Operand, record, tensor_node
from vkml.graph.node import Node
from vkml.ops.shapes import normalize_axes, reduced_shape


def cumsum(x: Operand, axis: int | None = None) -> Node:
    """Running sum along ``axis`` (of the flattened tensor if None) in vkml's fixed scan
    order; bool and integers sum in int64."""
    node = tensor_node("cumsum", x)
    if axis is None:
        node = _reshaped(node, (math.prod(node.shape),))
        axis = 0
    (a,) = normalize_axes("cumsum", axis, node.shape) or (0,)
    if not node.shape:
        node = _reshaped(node, (1,))
    return record("cumsum", node, axis=a)


def mean(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Arithmetic mean: the pairwise sum divided by the element count (floats only)."""
    node, axes, count = float_reduction("mean", x, axis)
    shape = reduced_shape(node.shape, axes, keepdims)
    attrs = (("axes", axes), ("divisor", count))
    return Node("sum", node.dtype, shape, (node,), attrs, node.device)


def float_reduction(op: str, x: Operand, axis: Any) -> tuple[Node, tuple[int, ...], int]:
    """The node of ``x``, which must be floating-point (a DTypeError naming ``op`` and the
    remedy), the axes ``axis`` names and the count of elements each result reduces."""
    node = tensor_node(op, x)
    if not node.dtype.is_float:
        raise DTypeError(
            f"'{op}' needs a floating-point tensor, got {node.dtype}; use "
            f"x.astype(vkml.float32).{op}(...)"
        )
    axes = normalize_axes(op, axis, node.shape)
    return node, axes, math.prod(node.shape[a] for a in axes)


def softmax(x: Operand, axis: int = -1) -> Node:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``; 16-bit floats compute in float32."""
    xs, original = _upcast("softmax", x)
    normalize_axes("softmax", axis, xs.shape)  # so that an error names softmax, not amax
    shifted = record("sub", xs, record("amax", xs, axis=axis, keepdims=True))
    e = record("exp", shifted)
    return astype(record("div", e, record("sum", e, axis=axis, keepdims=True)), original)


def log_softmax(x: Operand, axis: int = -1) -> Node:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``; never NaN for finite input."""
    xs, original = _upcast("log_softmax", x)
    normalize_axes("log_softmax", axis, xs.shape)
    shifted = record("sub", xs, record("amax", xs, axis=axis, keepdims=True))
    total = record("sum", record("exp", shifted), axis=axis, keepdims=True)
    return astype(record("sub", shifted, record("log", total)), original)


def _upcast(op: str, x: Operand) -> tuple[Node, DType]:
    """``x`` in float32 or wider, and the dtype the result goes back to."""
    node = tensor_node(op, x)
    if node.dtype.is_float and node.dtype.bits > 16:
        return node, node.dtype
    original = node.dtype if node.dtype.is_float else default_float
    return astype(node, default_float), original


# -- contraction ---------------------------------------------------------------------------
def matmul(a: Operand, b: Operand) -> Node:
    """Matrix product with NumPy's rules: batched, broadcasting, 1-D operands promoted."""
    an, bn = tensor_node("matmul", a), tensor_node("matmul", b)
    if an.device is not bn.device:
        raise DeviceError(
            f"'matmul' operands are on different devices: {an.device} and {bn.device}"
        )
    if not an.shape or not bn.shape:
        raise ShapeError(
            f"'matmul' needs operands of rank >= 1, got shapes {an.shape} and {bn.shape}"
        )
    a2 = an if len(an.shape) > 1 else _reshaped(an, (1, an.shape[0]))
    b2 = bn if len(bn.shape) > 1 else _reshaped(bn, (bn.shape[0], 1))
    sa, sb = a2.shape, b2.shape
    if sa[-1] != sb[-2]:
        raise ShapeError(
            f"'matmul': inner dimensions differ: {an.shape} @ {bn.shape} ({sa[-1]} != {sb[-2]})"
        )
    out = record("matmul", a2, b2)
    batch = out.shape[:-2]
    if len(an.shape) == 1 and len(bn.shape) == 1:
        return _reshaped(out, ())
    if len(an.shape) == 1:
        return _reshaped(out, (*batch, sb[-1]))
    if len(bn.shape) == 1:
        return _reshaped(out, (*batch, sa[-2]))
    return out


def _reshaped(node: Node, shape: tuple[int, ...]) -> Node:
    """``node`` as ``shape``, which has its element count (matmul's 1-D promotions, cumsum's
    flattening)."""
    return record("reshape", node, shape=shape)
