"""The elementwise ops that take more than operands: ``where`` (whose arms may both be
Python numbers), the casts ``astype`` and ``bitcast`` (a dtype), and the composite ``clip``.

The other elementwise ops are recorded by ``vkml.frontend.record`` from their rules. Each
function here checks its operands and raises an error naming the op and the values, or
records the op's node and returns it; ``Tensor`` and the public functions wrap it.
"""

from __future__ import annotations

from typing import Any

from vkml.dtypes import dtype_of_scalar, promote_types, to_dtype
from vkml.frontend.base import TensorBase
from vkml.frontend.host import scalar_node
from vkml.frontend.record import Operand, promoted, record, tensor_node
from vkml.graph.node import Node


def where(cond: Any, a: Any, b: Any) -> Node:
    """Elements of ``a`` where ``cond`` is true, else of ``b`` (all three broadcast)."""
    cn = tensor_node("where", cond)
    if not isinstance(a, (TensorBase, Node)) and not isinstance(b, (TensorBase, Node)):
        da, db = dtype_of_scalar(a), dtype_of_scalar(b)
        dtype = promote_types(da, db)
        an, bn = scalar_node(a, dtype, cn.device), scalar_node(b, dtype, cn.device)
    else:
        an, bn, dtype = promoted("where", a, b)
    return record("where", cn, an, bn)


def astype(x: Operand, dtype: Any) -> Node:
    """``x`` converted to ``dtype`` (floats to integers truncate toward zero; to bool is x != 0)."""
    node = tensor_node("astype", x)
    target = to_dtype(dtype)
    if target is node.dtype:
        return node
    return record("astype", node, dtype=target)


def bitcast(x: Operand, dtype: Any) -> Node:
    """``x``'s bits read as ``dtype``, which must have the same width (NumPy's ``view``).

    Exact on every device: no value is converted. Widths: 16 (float16, bfloat16),
    32 (float32, int32, uint32), 64 (float64, int64); bool has no bit pattern to share.
    A NaN that an op computed carries the device's sign and payload (not promised), so its
    bit cast can differ between devices: ``where(x != x, nan, x)`` first gives one pattern.
    """
    node = tensor_node("bitcast", x)
    target = to_dtype(dtype)
    out = record("bitcast", node, dtype=target)  # the rule checks the widths
    return node if target is node.dtype else out


def clip(x: Operand, min: Any = None, max: Any = None) -> Node:
    """``minimum(maximum(x, min), max)``; NaN in ``x`` stays NaN."""
    if min is None and max is None:
        raise ValueError("clip needs at least one of min and max")
    out = tensor_node("clip", x)
    if min is not None:
        out = record("maximum", out, min)
    if max is not None:
        out = record("minimum", out, max)
    return out
