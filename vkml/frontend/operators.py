"""The Tensor operators: arithmetic, comparison and bitwise (``a + b``, ``a < b``, ``a & b``).

Each records the op's node through ``vkml.frontend.elementwise`` and makes a tensor of it with
``_of``. On bool tensors ``&``, ``|``, ``^`` and ``~`` are logical (NumPy's and the
Array API's rule), recorded as selects and comparisons: the bitwise ops take integers only.
"""

from __future__ import annotations

from typing import Any, Self

from vkml.dtypes import bool_, integer_range
from vkml.errors import DTypeError
from vkml.frontend import elementwise
from vkml.frontend.base import TensorBase
from vkml.frontend.record import record, tensor_node
from vkml.graph.node import Node


def _is_bool(x: Any) -> bool:
    if isinstance(x, TensorBase):
        return x.dtype is bool_
    return isinstance(x, bool)


def logical(op: str, a: Any, b: Any) -> Node:
    """``a op b`` for ``op`` in and/or/xor of two bool operands (tensors or Python bools)."""
    if op == "bitwise_and":
        return elementwise.where(a, b, False)
    if op == "bitwise_or":
        return elementwise.where(a, True, b)
    return record("ne", a, b)


def bitwise(op: str, a: Any, b: Any) -> Node:
    """``a op b`` for a bitwise op: logical when both operands are bool."""
    if op in ("bitwise_and", "bitwise_or", "bitwise_xor") and _is_bool(a) and _is_bool(b):
        return logical(op, a, b)
    return record(op, a, b)


def invert(x: Any) -> Node:
    """``~x``: every bit flipped (an integer), or the negation of a bool."""
    node = tensor_node("bitwise_invert", x)
    if node.dtype is bool_:
        return record("eq", node, False)
    if not node.dtype.is_integer:
        raise DTypeError(
            f"'bitwise_invert' needs integer operands, got {node.dtype}; use "
            f"vkml.bitcast(x, vkml.uint32) to reach the bits of a float32"
        )
    ones = -1 if node.dtype.kind == "int" else integer_range(node.dtype)[1]
    return record("bitwise_xor", node, ones)


class Operators(TensorBase):
    """Mixed into ``Tensor``, which defines ``_of``: its Python operators."""

    __slots__ = ()

    def _of(self, node: Node) -> Self:
        """The tensor of ``node``."""
        raise NotImplementedError

    def __add__(self, other: Any) -> Self:
        return self._of(record("add", self, other))

    def __radd__(self, other: Any) -> Self:
        return self._of(record("add", other, self))

    def __sub__(self, other: Any) -> Self:
        return self._of(record("sub", self, other))

    def __rsub__(self, other: Any) -> Self:
        return self._of(record("sub", other, self))

    def __mul__(self, other: Any) -> Self:
        return self._of(record("mul", self, other))

    def __rmul__(self, other: Any) -> Self:
        return self._of(record("mul", other, self))

    def __truediv__(self, other: Any) -> Self:
        return self._of(record("div", self, other))

    def __rtruediv__(self, other: Any) -> Self:
        return self._of(record("div", other, self))

    def __floordiv__(self, other: Any) -> Self:
        return self._of(record("floor_divide", self, other))

    def __rfloordiv__(self, other: Any) -> Self:
        return self._of(record("floor_divide", other, self))

    def __mod__(self, other: Any) -> Self:
        return self._of(record("remainder", self, other))

    def __rmod__(self, other: Any) -> Self:
        return self._of(record("remainder", other, self))

    def __pow__(self, other: Any) -> Self:
        return self._of(record("pow", self, other))

    def __rpow__(self, other: Any) -> Self:
        return self._of(record("pow", other, self))

    def __neg__(self) -> Self:
        return self._of(record("neg", self))

    def __pos__(self) -> Self:
        return self

    def __abs__(self) -> Self:
        return self._of(record("abs", self))

    # ``x == None`` is Python's identity test, False (as PyTorch's), not a tensor of None
    def __eq__(self, other: object) -> Self:  # type: ignore[override]
        if other is None:
            return NotImplemented
        return self._of(record("eq", self, other))

    def __ne__(self, other: object) -> Self:  # type: ignore[override]
        if other is None:
            return NotImplemented
        return self._of(record("ne", self, other))

    def __lt__(self, other: Any) -> Self:
        return self._of(record("lt", self, other))

    def __le__(self, other: Any) -> Self:
        return self._of(record("le", self, other))

    def __gt__(self, other: Any) -> Self:
        return self._of(record("gt", self, other))

    def __ge__(self, other: Any) -> Self:
        return self._of(record("ge", self, other))

    def __and__(self, other: Any) -> Self:
        return self._of(bitwise("bitwise_and", self, other))

    def __rand__(self, other: Any) -> Self:
        return self._of(bitwise("bitwise_and", other, self))

    def __or__(self, other: Any) -> Self:
        return self._of(bitwise("bitwise_or", self, other))

    def __ror__(self, other: Any) -> Self:
        return self._of(bitwise("bitwise_or", other, self))

    def __xor__(self, other: Any) -> Self:
        return self._of(bitwise("bitwise_xor", self, other))

    def __rxor__(self, other: Any) -> Self:
        return self._of(bitwise("bitwise_xor", other, self))

    def __lshift__(self, other: Any) -> Self:
        return self._of(record("left_shift", self, other))

    def __rlshift__(self, other: Any) -> Self:
        return self._of(record("left_shift", other, self))

    def __rshift__(self, other: Any) -> Self:
        return self._of(record("right_shift", self, other))

    def __rrshift__(self, other: Any) -> Self:
        return self._of(record("right_shift", other, self))

    def __invert__(self) -> Self:
        return self._of(invert(self))
