"""Reductions, the scan, softmax and matmul: validate axes and shapes, record the node.

Like ``vkml.frontend.elementwise`` (whose operand checks they use), each function raises an error
naming the op and the values, or records the op's node (a composite such as ``softmax``
records its parts) and returns it.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import DType, default_float, int64, promote_types
from vkml.errors import DeviceError, DTypeError, ShapeError
from vkml.frontend.elementwise import (
    Operand,
    astype,
    binary,
    broadcast_shapes,
    check_inputs,
    normalize_axes,
    tensor_node,
    unary,
)
from vkml.graph.node import Node


def _reduced_shape(
    shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool
) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def sum(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Sum over ``axis`` in vkml's fixed pairwise order; bool and integers sum to int64."""
    node = tensor_node("sum", x)
    axes = normalize_axes("sum", axis, node.shape)
    dtype = node.dtype if node.dtype.is_float else int64
    shape = _reduced_shape(node.shape, axes, keepdims)
    return Node("sum", dtype, shape, (node,), (("axes", axes),), node.device)


def prod(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Product over ``axis`` in vkml's fixed pairwise order; bool and integers multiply in
    int64 (wrapping); an empty product is 1."""
    node = tensor_node("prod", x)
    axes = normalize_axes("prod", axis, node.shape)
    dtype = node.dtype if node.dtype.is_float else int64
    shape = _reduced_shape(node.shape, axes, keepdims)
    return Node("prod", dtype, shape, (node,), (("axes", axes),), node.device)


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
    dtype = node.dtype if node.dtype.is_float else int64
    return Node("cumsum", dtype, node.shape, (node,), (("axis", a),), node.device)


def mean(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Arithmetic mean: the pairwise sum divided by the element count (floats only)."""
    node = tensor_node("mean", x)
    if not node.dtype.is_float:
        raise DTypeError(
            f"'mean' needs a floating-point tensor, got {node.dtype}; use "
            f"x.astype(vkml.float32).mean(...)"
        )
    axes = normalize_axes("mean", axis, node.shape)
    count = math.prod(node.shape[a] for a in axes)
    shape = _reduced_shape(node.shape, axes, keepdims)
    attrs = (("axes", axes), ("divisor", count))
    return Node("sum", node.dtype, shape, (node,), attrs, node.device)


def _nonempty(op: str, node: Node, axes: tuple[int, ...]) -> None:
    if any(node.shape[a] == 0 for a in axes) or (not axes and node.shape and 0 in node.shape):
        raise ShapeError(
            f"'{op}' of an empty axis has no identity: shape {node.shape}, axis {axes}"
        )


def amax(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Maximum over ``axis``; NaN propagates (any NaN gives NaN)."""
    return _extreme("amax", x, axis, keepdims)


def amin(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Minimum over ``axis``; NaN propagates (any NaN gives NaN)."""
    return _extreme("amin", x, axis, keepdims)


def _extreme(op: str, x: Operand, axis: Any, keepdims: bool) -> Node:
    node = tensor_node(op, x)
    axes = normalize_axes(op, axis, node.shape)
    _nonempty(op, node, axes)
    shape = _reduced_shape(node.shape, axes, keepdims)
    return Node(op, node.dtype, shape, (node,), (("axes", axes),), node.device)


def argmax(x: Operand, axis: int | None = None, keepdims: bool = False) -> Node:
    """Index (int64) of the first maximum along ``axis`` (flattened if None); NaN is the maximum."""
    return _arg("argmax", x, axis, keepdims)


def argmin(x: Operand, axis: int | None = None, keepdims: bool = False) -> Node:
    """Index (int64) of the first minimum along ``axis`` (flattened if None); NaN is the minimum."""
    return _arg("argmin", x, axis, keepdims)


def _arg(op: str, x: Operand, axis: int | None, keepdims: bool) -> Node:
    node = tensor_node(op, x)
    if axis is None:
        if math.prod(node.shape) == 0:
            raise ShapeError(f"'{op}' of an empty tensor (shape {node.shape}) has no answer")
        shape = (1,) * len(node.shape) if keepdims else ()
        return Node(op, int64, shape, (node,), (("axis", None),), node.device)
    one = axis if hasattr(axis, "__index__") else (axis,)  # a tuple is "not an integer"
    (ax,) = normalize_axes(op, one, node.shape) or (0,)
    _nonempty(op, node, (ax,))
    shape = _reduced_shape(node.shape, (ax,), keepdims)
    return Node(op, int64, shape, (node,), (("axis", ax),), node.device)


def softmax(x: Operand, axis: int = -1) -> Node:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``; 16-bit floats compute in float32."""
    xs, original = _upcast("softmax", x)
    normalize_axes("softmax", axis, xs.shape)  # so that an error names softmax, not amax
    shifted = binary("sub", xs, amax(xs, axis, keepdims=True))
    e = unary("exp", shifted)
    return astype(binary("div", e, sum(e, axis, keepdims=True)), original)


def log_softmax(x: Operand, axis: int = -1) -> Node:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``; never NaN for finite input."""
    xs, original = _upcast("log_softmax", x)
    normalize_axes("log_softmax", axis, xs.shape)
    shifted = binary("sub", xs, amax(xs, axis, keepdims=True))
    total = sum(unary("exp", shifted), axis, keepdims=True)
    return astype(binary("sub", shifted, unary("log", total)), original)


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
    dtype = promote_types(an.dtype, bn.dtype)
    check_inputs("matmul", dtype)
    a2 = an if len(an.shape) > 1 else _reshaped(an, (1, an.shape[0]))
    b2 = bn if len(bn.shape) > 1 else _reshaped(bn, (bn.shape[0], 1))
    sa, sb = a2.shape, b2.shape
    if sa[-1] != sb[-2]:
        raise ShapeError(
            f"'matmul': inner dimensions differ: {an.shape} @ {bn.shape} ({sa[-1]} != {sb[-2]})"
        )
    batch = broadcast_shapes("matmul", sa[:-2], sb[:-2])
    out = Node("matmul", dtype, (*batch, sa[-2], sb[-1]), (a2, b2), (), an.device)
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
    return Node("reshape", node.dtype, shape, (node,), (), node.device)
