"""Elementwise ops and the axis checks: validate, infer shape and dtype, record a node.

Every function here checks its operands (dtypes, shapes, axes, devices) and raises a specific
error naming the op and the values; otherwise it records the op's node (or, for a composite
such as ``clip``, the nodes of its parts) and returns it. Operands are tensors (read
through ``TensorBase``), nodes, or Python scalars (weak, as the Array API says). ``Tensor``
and the public functions wrap the node they get back.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from vkml.dtypes import (
    DType,
    bool_,
    default_float,
    dtype_of_scalar,
    promote_types,
    result_type_with_scalar,
    to_dtype,
)
from vkml.errors import AxisError, DeviceError, DTypeError, ShapeError
from vkml.frontend.base import TensorBase
from vkml.frontend.host import data_node, host_array, is_scalar, scalar_node
from vkml.graph.node import Node
from vkml.ops.registry import OPS

Operand = TensorBase | Node  # what an op reads a node from


def check_same_device(op: str, nodes: Sequence[Node]) -> Any:
    first = nodes[0].device
    for n in nodes[1:]:
        if n.device is not first:
            raise DeviceError(f"'{op}' operands are on different devices: {first} and {n.device}")
    return first


def broadcast_shapes(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of two shapes; ShapeError naming ``op`` and both shapes."""
    if a == b:
        return a
    result = _broadcast(a, b)
    if result is None:
        raise ShapeError(
            f"'{op}': shapes {a} and {b} cannot be broadcast together (trailing dimensions "
            f"must be equal or 1)"
        )
    return result


@functools.lru_cache(maxsize=4096)
def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The broadcast shape of ``a`` and ``b``, or None; cached, as a model uses few shapes."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def _operands(op: str, a: Any, b: Any) -> tuple[Node, Node, DType]:
    """Both operands as nodes, with the promoted dtype (Python scalars are weak)."""
    # the operators' common cases first, kept short (benchmark 1): a tensor and a float,
    # two tensors
    if isinstance(a, TensorBase):
        an: Node | None = a._node
        if type(b) is float and a._node.dtype.is_float:
            return a._node, scalar_node(b, a._node.dtype, a._node.device), a._node.dtype
    else:
        an = a if isinstance(a, Node) else None
    bn = b._node if isinstance(b, TensorBase) else b if isinstance(b, Node) else None
    if an is not None and bn is not None:
        if an.device is not bn.device:
            raise DeviceError(
                f"'{op}' operands are on different devices: {an.device} and {bn.device}"
            )
        return an, bn, promote_types(an.dtype, bn.dtype)
    if an is not None:
        dtype = result_type_with_scalar(an.dtype, _require_scalar(op, b))
        return an, scalar_node(b, dtype, an.device, op), dtype
    if bn is not None:
        dtype = result_type_with_scalar(bn.dtype, _require_scalar(op, a))
        return scalar_node(a, dtype, bn.device, op), bn, dtype
    return _operands(op, data_node(a, None, None), b)


def _require_scalar(op: str, value: Any) -> Any:
    if is_scalar(value):
        return value
    if hasattr(value, "__array__") or isinstance(value, (list, tuple)):
        raise DTypeError(
            f"'{op}': operand of type {type(value).__name__} is not a vkml tensor; wrap it "
            f"with vkml.tensor(...) on the same device first"
        )
    host_array(value)  # raises DataError naming the value
    raise DTypeError(f"'{op}': operand {value!r:.40} is not a vkml tensor or a number")


_NUMBER_ONLY = frozenset(name for name, d in OPS.items() if d.inputs == "number")


def check_inputs(op: str, dtype: DType) -> None:
    """Reject a bool operand of an op that takes numbers only, naming the remedy."""
    if dtype is bool_ and op in _NUMBER_ONLY:
        raise DTypeError(
            f"'{op}' does not accept bool tensors; convert first, e.g. x.astype(vkml.int32)"
        )


def binary(op: str, a: Any, b: Any) -> Node:
    """``a op b`` for an arithmetic op of the table (add, sub, mul, div, pow, maximum, ...)."""
    an, bn, dtype = _operands(op, a, b)
    if dtype is bool_ and op in _NUMBER_ONLY:
        check_inputs(op, dtype)
    if (op == "div" or OPS[op].inputs == "float") and not dtype.is_float:
        dtype = default_float  # true division (as Python and NumPy), atan2 of integers
    shape = (
        an.shape
        if an.shape == bn.shape or not bn.shape
        else broadcast_shapes(op, an.shape, bn.shape)
    )
    return Node(op, dtype, shape, (an, bn), (), an.device)


def compare(op: str, a: Any, b: Any) -> Node:
    """Elementwise comparison; the result is bool."""
    an, bn, dtype = _operands(op, a, b)
    check_inputs(op, dtype)
    shape = broadcast_shapes(op, an.shape, bn.shape)
    return Node(op, bool_, shape, (an, bn), (), an.device)


def unary(op: str, x: Operand) -> Node:
    """An elementwise op of one operand; float-only ops turn integers into float32."""
    node = tensor_node(op, x)
    dtype = node.dtype
    check_inputs(op, dtype)
    if OPS[op].inputs == "float" and not dtype.is_float:
        dtype = default_float
    return Node(op, dtype, node.shape, (node,), (), node.device)


def tensor_node(op: str, x: Any) -> Node:
    """The node of a tensor operand (or the node itself); DTypeError for anything else."""
    if isinstance(x, TensorBase):
        return x._node
    if isinstance(x, Node):
        return x
    raise DTypeError(f"'{op}' expects a vkml.Tensor, got {type(x).__name__}: {x!r:.60}")


def where(cond: Any, a: Any, b: Any) -> Node:
    """Elements of ``a`` where ``cond`` is true, else of ``b`` (all three broadcast)."""
    cn = tensor_node("where", cond)
    if not isinstance(a, (TensorBase, Node)) and not isinstance(b, (TensorBase, Node)):
        da, db = dtype_of_scalar(a), dtype_of_scalar(b)
        dtype = promote_types(da, db)
        an, bn = scalar_node(a, dtype, cn.device), scalar_node(b, dtype, cn.device)
    else:
        an, bn, dtype = _operands("where", a, b)
    check_same_device("where", [cn, an, bn])
    shape = broadcast_shapes("where", broadcast_shapes("where", cn.shape, an.shape), bn.shape)
    return Node("where", dtype, shape, (cn, an, bn), (), cn.device)


def astype(x: Operand, dtype: Any) -> Node:
    """``x`` converted to ``dtype`` (floats to integers truncate toward zero; to bool is x != 0)."""
    node = tensor_node("astype", x)
    target = to_dtype(dtype)
    if target is node.dtype:
        return node
    return Node("astype", target, node.shape, (node,), (), node.device)


def bitwise(op: str, a: Any, b: Any) -> Node:
    """``a op b`` for the integer-only ops: bitwise_and/or/xor, left_shift, right_shift.

    Operands promote as for arithmetic (a Python int is weak); the result has the promoted
    integer dtype. A shift by an amount outside ``[0, bits)`` gives 0 (or -1 for ``>>`` of a
    negative signed value), as StableHLO defines it; ``>>`` is logical on uint32 and
    arithmetic on signed integers, as in NumPy.
    """
    an, bn, dtype = _operands(op, a, b)
    if not dtype.is_integer or bool_ in (an.dtype, bn.dtype):
        raise DTypeError(
            f"'{op}' needs integer operands, got {an.dtype} and {bn.dtype}; use "
            f"vkml.bitcast(x, vkml.uint32) to reach the bits of a float32"
        )
    shape = broadcast_shapes(op, an.shape, bn.shape)
    return Node(op, dtype, shape, (an, bn), (), an.device)


def bitcast(x: Operand, dtype: Any) -> Node:
    """``x``'s bits read as ``dtype``, which must have the same width (NumPy's ``view``).

    Exact on every device: no value is converted. Widths: 16 (float16, bfloat16),
    32 (float32, int32, uint32), 64 (float64, int64); bool has no bit pattern to share.
    A NaN that an op computed carries the device's sign and payload (not promised), so its
    bit cast can differ between devices: ``where(x != x, nan, x)`` first gives one pattern.
    """
    node = tensor_node("bitcast", x)
    target = to_dtype(dtype)
    if bool_ in (node.dtype, target) or node.dtype.bits != target.bits:
        raise DTypeError(
            f"'bitcast' needs two non-bool dtypes of one width, got {node.dtype} "
            f"({node.dtype.bits} bits) to {target} ({target.bits} bits); use astype to convert values"
        )
    if target is node.dtype:
        return node
    return Node("bitcast", target, node.shape, (node,), (), node.device)


def clip(x: Operand, min: Any = None, max: Any = None) -> Node:
    """``minimum(maximum(x, min), max)``; NaN in ``x`` stays NaN."""
    if min is None and max is None:
        raise ValueError("clip needs at least one of min and max")
    out = tensor_node("clip", x)
    if min is not None:
        out = binary("maximum", out, min)
    if max is not None:
        out = binary("minimum", out, max)
    return out


# -- axes ----------------------------------------------------------------------------------
def normalize_axes(op: str, axis: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``axis`` (None, int or tuple) as sorted non-negative axes of ``shape``."""
    ndim = len(shape)
    if axis is None:
        return tuple(range(ndim))
    raw = tuple(axis) if isinstance(axis, (tuple, list, range)) else (axis,)
    out = []
    for a in raw:
        if isinstance(a, bool) or not hasattr(a, "__index__"):
            raise AxisError(f"'{op}': axis {a!r} is not an integer")
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise AxisError(
                f"'{op}': axis {a} is out of range for a tensor of shape {shape} "
                f"(rank {ndim}); use an axis in [{-ndim}, {ndim})"
            )
        a = a % ndim if ndim else 0
        if a in out:
            raise AxisError(f"'{op}': axis {a} is repeated in {axis!r}")
        out.append(a)
    return tuple(sorted(out)) if ndim else ()
