"""The ``vkml`` functions that are not generated from the op definitions: each returns the
``Tensor`` of the node its op function records (``ops``, ``views``), with that function's
signature and docstring."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec

from vkml.frontend import elementwise, indexing, reductions, sorting, views
from vkml.frontend.tensor import Tensor, wrap
from vkml.graph.node import Node

P = ParamSpec("P")


def _public(record: Callable[P, Node]) -> Callable[P, Tensor]:
    """``record`` returning a tensor: the operand itself where the op changed nothing."""

    @functools.wraps(record)
    def function(*args: P.args, **kwargs: P.kwargs) -> Tensor:
        return wrap(record(*args, **kwargs), *args)

    return function


where = _public(elementwise.where)
astype = _public(elementwise.astype)
bitcast = _public(elementwise.bitcast)
clip = _public(elementwise.clip)
sum = _public(reductions.sum)
prod = _public(reductions.prod)
cumsum = _public(reductions.cumsum)
take = _public(indexing.take)
take_along_axis = _public(indexing.take_along_axis)
scatter_add = _public(indexing.scatter_add)  # take_along_axis's transpose (its gradient)
place_at = _public(indexing.place_at)  # x[i]'s transpose (its gradient)
sort = _public(sorting.sort)
argsort = _public(sorting.argsort)
mean = _public(reductions.mean)
amax = _public(reductions.amax)
amin = _public(reductions.amin)
argmax = _public(reductions.argmax)
argmin = _public(reductions.argmin)
softmax = _public(reductions.softmax)
log_softmax = _public(reductions.log_softmax)
matmul = _public(reductions.matmul)
reshape = _public(views.reshape)
permute = _public(views.permute)
transpose = _public(views.transpose)
broadcast_to = _public(views.broadcast_to)
expand = _public(views.expand)
squeeze = _public(views.squeeze)
unsqueeze = _public(views.unsqueeze)
concatenate = _public(views.concatenate)
stack = _public(views.stack)


def add(a: Any, b: Any) -> Tensor:
    """Elementwise ``a + b``."""
    return wrap(elementwise.binary("add", a, b))


def subtract(a: Any, b: Any) -> Tensor:
    """Elementwise ``a - b``."""
    return wrap(elementwise.binary("sub", a, b))


def multiply(a: Any, b: Any) -> Tensor:
    """Elementwise ``a * b``."""
    return wrap(elementwise.binary("mul", a, b))


def divide(a: Any, b: Any) -> Tensor:
    """Elementwise ``a / b`` (true division: integers give float32)."""
    return wrap(elementwise.binary("div", a, b))


def floor_divide(a: Any, b: Any) -> Tensor:
    """Elementwise ``a // b``: the quotient rounded toward minus infinity (NumPy's values; an
    integer divided by zero gives 0)."""
    return wrap(elementwise.binary("floor_divide", a, b))


def remainder(a: Any, b: Any) -> Tensor:
    """Elementwise ``a % b``, with the sign of ``b`` (NumPy's and Python's; an integer modulo
    zero gives 0)."""
    return wrap(elementwise.binary("remainder", a, b))


def power(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ** b``."""
    return wrap(elementwise.binary("pow", a, b))


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum; NaN in either operand gives NaN (PyTorch semantics)."""
    return wrap(elementwise.binary("maximum", a, b))


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum; NaN in either operand gives NaN (PyTorch semantics)."""
    return wrap(elementwise.binary("minimum", a, b))


def atan2(a: Any, b: Any) -> Tensor:
    """Elementwise angle of the point (b, a) in radians, in [-pi, pi] (floats; integers
    are converted to float32)."""
    return wrap(elementwise.binary("atan2", a, b))


def equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a == b`` (bool)."""
    return wrap(elementwise.compare("eq", a, b))


def not_equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a != b`` (bool; true where either is NaN)."""
    return wrap(elementwise.compare("ne", a, b))


def less(a: Any, b: Any) -> Tensor:
    """Elementwise ``a < b`` (bool)."""
    return wrap(elementwise.compare("lt", a, b))


def less_equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a <= b`` (bool)."""
    return wrap(elementwise.compare("le", a, b))


def greater(a: Any, b: Any) -> Tensor:
    """Elementwise ``a > b`` (bool)."""
    return wrap(elementwise.compare("gt", a, b))


def greater_equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >= b`` (bool)."""
    return wrap(elementwise.compare("ge", a, b))


def bitwise_and(a: Any, b: Any) -> Tensor:
    """Elementwise ``a & b`` (integers only)."""
    return wrap(elementwise.bitwise("bitwise_and", a, b))


def bitwise_or(a: Any, b: Any) -> Tensor:
    """Elementwise ``a | b`` (integers only)."""
    return wrap(elementwise.bitwise("bitwise_or", a, b))


def bitwise_xor(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ^ b`` (integers only)."""
    return wrap(elementwise.bitwise("bitwise_xor", a, b))


def left_shift(a: Any, b: Any) -> Tensor:
    """Elementwise ``a << b`` (integers only); an amount outside [0, bits) gives 0."""
    return wrap(elementwise.bitwise("left_shift", a, b))


def right_shift(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >> b`` (integers only): logical on uint32, arithmetic on signed
    integers; an amount outside [0, bits) gives 0, or -1 for a negative signed ``a``."""
    return wrap(elementwise.bitwise("right_shift", a, b))
