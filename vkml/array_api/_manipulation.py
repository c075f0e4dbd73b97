"""The Array API's manipulation functions: views and joins, all lazy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.errors import AxisError, ShapeError
from vkml.frontend import creation, functions
from vkml.frontend.tensor import Tensor
from vkml.ops import shapes


def ordered_axes(op: str, axis: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``axis`` (an int or a sequence) as non-negative axes of ``shape``, in its order."""
    shapes.normalize_axes(op, axis, shape)  # checks range and repeats
    raw = axis if isinstance(axis, (tuple, list, range)) else (axis,)
    return tuple(int(a) % len(shape) for a in raw) if shape else ()


def broadcast_arrays(*arrays: Tensor) -> list[Tensor]:
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return [a.broadcast_to(*shape) for a in arrays]


def broadcast_to(x: Tensor, /, shape: Sequence[int]) -> Tensor:
    return functions.broadcast_to(x, *shape)


def concat(arrays: Sequence[Tensor], /, *, axis: int | None = 0) -> Tensor:
    if axis is None:
        return functions.concatenate([a.reshape(-1) for a in arrays], 0)
    return functions.concatenate(list(arrays), axis)


def stack(arrays: Sequence[Tensor], /, *, axis: int = 0) -> Tensor:
    return functions.stack(list(arrays), axis)


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise AxisError(f"expand_dims: axis={axis} is out of range for {x.ndim} dimensions")
    return functions.unsqueeze(x, axis)


def squeeze(x: Tensor, /, axis: int | tuple[int, ...]) -> Tensor:
    axes = shapes.normalize_axes("squeeze", axis, x.shape)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} of shape {x.shape} is not of size 1")
    return functions.reshape(x, *(n for i, n in enumerate(x.shape) if i not in axes))


def reshape(x: Tensor, /, shape: Sequence[int], *, copy: bool | None = None) -> Tensor:
    return functions.reshape(x, *shape)


def permute_dims(x: Tensor, /, axes: Sequence[int]) -> Tensor:
    return functions.permute(x, *axes)


def moveaxis(x: Tensor, source: Any, destination: Any, /) -> Tensor:
    src = ordered_axes("moveaxis", source, x.shape)
    dst = ordered_axes("moveaxis", destination, x.shape)
    if len(src) != len(dst):
        raise AxisError(f"moveaxis: {source} and {destination} name different numbers of axes")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return functions.permute(x, *order)


def flip(x: Tensor, /, *, axis: Any = None) -> Tensor:
    axes = shapes.normalize_axes("flip", axis, x.shape)
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


def roll(x: Tensor, /, shift: Any, *, axis: Any = None) -> Tensor:
    """``x`` shifted along ``axis`` (flattened when None), elements wrapping around."""
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(*x.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} differ in length")
    out = x
    for s, a in zip(shifts, axes):
        a = shapes.normalize_axes("roll", a, x.shape)[0]
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        cut = n - s % n
        head = tuple(slice(cut, None) if i == a else slice(None) for i in range(x.ndim))
        tail = tuple(slice(None, cut) if i == a else slice(None) for i in range(x.ndim))
        out = functions.concatenate([out[head], out[tail]], a)
    return out


def tile(x: Tensor, repetitions: Sequence[int], /) -> Tensor:
    reps = (1,) * (x.ndim - len(repetitions)) + tuple(repetitions)
    shape = (1,) * (len(reps) - x.ndim) + x.shape
    spread = x.reshape(*(d for n in shape for d in (1, n)))
    full = tuple(d for r, n in zip(reps, shape) for d in (r, n))
    return spread.broadcast_to(*full).reshape(*(r * n for r, n in zip(reps, shape)))


def repeat(x: Tensor, repeats: int | Tensor, /, *, axis: int | None = None) -> Tensor:
    """Each element repeated ``repeats`` times along ``axis`` (flattened when None). An int
    count stays lazy; a tensor of counts (one, or one per element along the axis) shapes the
    result by its values, so it is realized, and ``x`` is gathered lazily."""
    if axis is None:
        return repeat(x.reshape(-1), repeats, axis=0)
    a = shapes.normalize_axes("repeat", axis, x.shape)[0]
    if isinstance(repeats, Tensor):
        return _repeat_by(x, repeats.numpy(), a)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 0:
        raise ShapeError(f"repeat: repeats={repeats!r} must be a non-negative int or a tensor")
    spread = functions.unsqueeze(x, a + 1)
    shape = list(spread.shape)
    shape[a + 1] = repeats
    out = list(x.shape)
    out[a] *= repeats
    return spread.broadcast_to(*shape).reshape(*out)


def _repeat_by(x: Tensor, counts: np.ndarray, axis: int) -> Tensor:
    n = x.shape[axis]
    if counts.dtype.kind not in "iu" or counts.ndim > 1 or counts.size not in (1, n):
        raise ShapeError(
            f"repeat: a tensor of repeats must hold 1 or {n} (x's axis {axis}) integer counts, "
            f"got shape {counts.shape} of {counts.dtype}"
        )
    if (counts < 0).any():
        raise ShapeError(f"repeat: counts must be non-negative, got {counts.tolist()}")
    positions = np.repeat(np.arange(n), np.broadcast_to(counts.reshape(-1), (n,)))
    return functions.take(x, creation.tensor(positions, device=x.device), axis=axis)


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    a = shapes.normalize_axes("unstack", axis, x.shape)[0]
    return tuple(
        x[tuple(i if d == a else slice(None) for d in range(x.ndim))] for i in range(x.shape[a])
    )
