"""The Array API's statistical, searching and utility functions.

Reductions keep vkml's contract: a fixed pairwise tree, so a sum is the same bits on every
device. ``nonzero`` has a shape that depends on the data: it realizes its input, says so in
its docstring, and returns tensors of what it found.
"""

from __future__ import annotations

from typing import Any

from vkml.dtypes import bool_, default_int, to_dtype
from vkml.errors import AxisError, DTypeError
from vkml.frontend import creation, functions, op_functions
from vkml.frontend.tensor import Tensor
from vkml.ops import shapes


def _axes(x: Tensor, axis: Any) -> tuple[int, ...]:
    return shapes.normalize_axes("reduction", axis, x.shape)


def _accumulator(x: Tensor, dtype: Any) -> Tensor:
    if dtype is not None:
        return x.astype(to_dtype(dtype))
    if x.dtype is bool_ or x.dtype.kind == "int":
        return x.astype(default_int)  # the standard's rule: the default integer
    return x


def sum(x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """The sum over ``axis`` (all axes by default); integers sum in int64 unless ``dtype``
    names another (vkml sums in 64 bits and keeps the low ones)."""
    values = _accumulator(x, dtype)
    out = op_functions.sum(values, axis, keepdims)
    return out if out.dtype is values.dtype else out.astype(values.dtype)


def prod(x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """The product over ``axis`` (all axes by default), in vkml's fixed pairwise order;
    integers multiply in int64 (wrapping) unless ``dtype`` names another."""
    values = _accumulator(x, dtype)
    out = op_functions.prod(values, axis, keepdims)
    return out if out.dtype is values.dtype else out.astype(values.dtype)


def cumulative_sum(
    x: Tensor,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
) -> Tensor:
    """The running sum along ``axis`` (needed where ``x`` has more than one axis), in vkml's
    fixed scan order; with ``include_initial`` the result starts with a zero."""
    if x.ndim == 0:
        raise AxisError("cumulative_sum takes a tensor of at least one axis, not a 0-d one")
    if axis is None:
        if x.ndim > 1:
            raise AxisError(
                f"cumulative_sum of a {x.ndim}-d tensor needs an axis; pass axis= one of "
                f"{list(range(-x.ndim, x.ndim))}"
            )
        axis = 0
    values = _accumulator(x, dtype)
    (a,) = shapes.normalize_axes("cumulative_sum", axis, x.shape)
    out = functions.cumsum(values, a)
    out = out if out.dtype is values.dtype else out.astype(values.dtype)
    if include_initial:
        start = creation.zeros(x.shape[:a] + (1,) + x.shape[a + 1 :], out.dtype, x.device)
        out = functions.concatenate([start, out], axis=a)
    return out


def mean(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    if not x.dtype.is_float:
        raise DTypeError(f"'mean' takes a floating-point tensor, got {x.dtype}; astype first")
    return functions.mean(x, axis, keepdims)


def max(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    return op_functions.amax(x, axis, keepdims)


def min(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    return op_functions.amin(x, axis, keepdims)


def var(
    x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False
) -> Tensor:
    """The variance over ``axis``, dividing by N - ``correction``."""
    return functions.var(x, axis, keepdims, correction)


def std(
    x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False
) -> Tensor:
    """The standard deviation over ``axis``, dividing by N - ``correction``."""
    return functions.std(x, axis, keepdims, correction)


def all(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero); true for none."""
    return functions.all(x, axis, keepdims)


def any(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (non-zero); false for none."""
    return functions.any(x, axis, keepdims)


def argmax(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    return op_functions.argmax(x, axis, keepdims)


def argmin(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    return op_functions.argmin(x, axis, keepdims)


def where(condition: Tensor, x1: Any, x2: Any, /) -> Tensor:
    return functions.where(condition, x1, x2)


def count_nonzero(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    return op_functions.sum((x != 0).astype(default_int), axis, keepdims)


def nonzero(x: Tensor, /) -> tuple[Tensor, ...]:
    """The indices of the non-zero elements, one tensor per axis. Their length depends on
    the data, so this realizes ``x`` (and what it depends on) first."""
    found = functions.nonzero(x, as_tuple=True)
    assert isinstance(found, tuple)
    return found
