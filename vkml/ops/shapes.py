"""Shape arithmetic the ops' rules share: NumPy broadcasting, axis arguments, reduced shapes.

Each function raises an error naming the op and the values it was given, so that a user's
mistake is reported in the words of the call that made it.
"""

from __future__ import annotations

import functools
from typing import Any

from vkml.errors import AxisError, ShapeError


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


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """``shape`` with ``axes`` removed, or kept as length 1."""
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def one_axis(op: str, axis: Any, shape: tuple[int, ...]) -> int:
    """``axis``, which must be one integer (a tuple is refused by name, as not an integer),
    as a non-negative axis of ``shape``; 0 for a 0-d shape, read as one element."""
    one = axis if hasattr(axis, "__index__") else (axis,)
    return (normalize_axes(op, one, shape) or (0,))[0]
