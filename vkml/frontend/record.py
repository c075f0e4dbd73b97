"""Recording an op of the table: a call's arguments as nodes, its rule's inference, the node.

``record(op, *operands, **params)`` is how the frontend records every op whose rule infers
(``vkml.ops.rules``): the generated ``vkml`` functions and ``Tensor`` methods, the operators
and the composites built of them all come here. Operands are tensors (read through
``TensorBase``), nodes, or, for ops whose operands promote together, Python numbers (weak,
as the Array API says).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkml.dtypes import DType, promote_types, result_type_with_scalar
from vkml.errors import DeviceError, DTypeError
from vkml.frontend.base import TensorBase
from vkml.frontend.host import data_node, host_array, is_scalar, scalar_node
from vkml.graph.node import Node
from vkml.ops.registry import OPS

Operand = TensorBase | Node  # what an op reads a node from


def record(op: str, *operands: Any, **params: Any) -> Node:
    """The node of ``op`` applied to ``operands`` with ``params``, checked by its rule."""
    d = OPS[op]
    rule = d.rule
    infer = rule.infer
    if infer is None:
        raise TypeError(f"op {op!r} is recorded by its own function in vkml.frontend")
    if rule.operands == "promoted":
        a, b = operands
        an, bn, common = promoted(op, a, b)
        nodes: tuple[Node, ...] = (an, bn)
    else:
        nodes = tuple([tensor_node(op, x) for x in operands])
        common = None
        if len(nodes) > 1:
            check_same_device(op, nodes)
    dtype, shape, attrs = infer(d, nodes, common, params)
    return Node(op, dtype, shape, nodes, attrs, nodes[0].device)


def tensor_node(op: str, x: Any) -> Node:
    """The node of a tensor operand (or the node itself); DTypeError for anything else."""
    if isinstance(x, TensorBase):
        return x._node
    if isinstance(x, Node):
        return x
    raise DTypeError(f"'{op}' expects a vkml.Tensor, got {type(x).__name__}: {x!r:.60}")


def check_same_device(op: str, nodes: Sequence[Node]) -> Any:
    first = nodes[0].device
    for n in nodes[1:]:
        if n.device is not first:
            raise DeviceError(f"'{op}' operands are on different devices: {first} and {n.device}")
    return first


def promoted(op: str, a: Any, b: Any) -> tuple[Node, Node, DType]:
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
        if _is_host_array(b):  # uploaded to the tensor's device; its dtype promotes (NumPy's)
            bn = data_node(b, None, an.device)
            return an, bn, promote_types(an.dtype, bn.dtype)
        dtype = result_type_with_scalar(an.dtype, _require_scalar(op, b))
        return an, scalar_node(b, dtype, an.device, op), dtype
    if bn is not None:
        if _is_host_array(a):
            an = data_node(a, None, bn.device)
            return an, bn, promote_types(an.dtype, bn.dtype)
        dtype = result_type_with_scalar(bn.dtype, _require_scalar(op, a))
        return scalar_node(a, dtype, bn.device, op), bn, dtype
    return promoted(op, data_node(a, None, None), b)


def _is_host_array(value: Any) -> bool:
    """A NumPy array or a Python list or tuple: data an operator uploads beside a tensor."""
    return isinstance(value, (list, tuple)) or (
        hasattr(value, "__array__") and not is_scalar(value) and not isinstance(value, TensorBase)
    )


def _require_scalar(op: str, value: Any) -> Any:
    if is_scalar(value):
        return value
    host_array(value)  # raises DataError naming the value
    raise DTypeError(f"'{op}': operand {value!r:.40} is not a vkml tensor or a number")
