"""Sorting along an axis: ``argsort`` records the op (vkml.ops.sorting), ``sort`` gathers
with its positions. Both are stable: equal elements keep their order, -0.0 and +0.0 are
equal, and NaN sorts after +inf (before it when descending), as in NumPy and PyTorch."""

from __future__ import annotations

from vkml.errors import DTypeError
from vkml.frontend import indexing, views
from vkml.frontend.record import Operand, record, tensor_node
from vkml.graph.node import Node
from vkml.ops import shapes


def _flag(op: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise DTypeError(f"'{op}': {name}={value!r} is not a bool; pass True or False")
    return value


def _axis(op: str, axis: object, shape: tuple[int, ...]) -> int:
    return shapes.one_axis(op, axis, shape or (1,))  # a 0-d tensor sorts as one element


def argsort(x: Operand, axis: int = -1, descending: bool = False) -> Node:
    """The int64 positions along ``axis`` that sort ``x`` (stably; see the module)."""
    node = tensor_node("argsort", x)
    descending = _flag("argsort", "descending", descending)
    a = _axis("argsort", axis, node.shape)
    if not node.shape:  # one element: position 0
        return views.reshape(argsort(views.reshape(node, 1), 0, descending))
    return record("argsort", node, axis=a, descending=descending)


def sort(x: Operand, axis: int = -1, descending: bool = False) -> Node:
    """``x`` sorted along ``axis`` (stably; see the module): ``take_along_axis`` at
    ``argsort``'s positions, so its gradient is the gather's."""
    node = tensor_node("sort", x)
    descending = _flag("sort", "descending", descending)
    a = _axis("sort", axis, node.shape)
    if not node.shape:
        return node
    return indexing.take_along_axis(node, argsort(node, a, descending), a)
