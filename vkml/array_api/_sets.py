"""The Array API's set functions and ``searchsorted``.

How many unique values a tensor holds depends on its data, so the ``unique_*`` functions
realize their input (and what it depends on) and return tensors of what they found, as
``nonzero`` does. NaNs are each unique, as the standard says. ``searchsorted`` stays lazy: it
counts, for each value, the sorted elements below it (or not above it), a broadcast
comparison and a sum.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from vkml.dtypes import default_int
from vkml.errors import ShapeError
from vkml.frontend import creation, functions, op_functions
from vkml.frontend.tensor import Tensor


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique(x: Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    data = x.numpy().reshape(-1)
    values, first, inverse, counts = np.unique(
        data, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    return values, first, inverse.reshape(x.shape), counts


def _on(x: Tensor, array: np.ndarray, integer: bool = False) -> Tensor:
    return creation.tensor(array.astype(np.int64) if integer else array, device=x.device)


def unique_values(x: Tensor, /) -> Tensor:
    """The distinct values of ``x``, sorted (realizes ``x``)."""
    return _on(x, _unique(x)[0])


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The distinct values of ``x`` and how often each occurs (realizes ``x``)."""
    values, _, _, counts = _unique(x)
    return UniqueCountsResult(_on(x, values), _on(x, counts, True))


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The distinct values of ``x`` and, for each element, the index of its value (realizes
    ``x``)."""
    values, _, inverse, _ = _unique(x)
    return UniqueInverseResult(_on(x, values), _on(x, inverse, True))


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """Values, first indices, inverse indices and counts (realizes ``x``)."""
    values, first, inverse, counts = _unique(x)
    return UniqueAllResult(
        _on(x, values), _on(x, first, True), _on(x, inverse, True), _on(x, counts, True)
    )


def searchsorted(x1: Tensor, x2: Tensor, /, *, side: str = "left", sorter: Any = None) -> Tensor:
    """Where each element of ``x2`` would go in the sorted 1-d ``x1`` to keep it sorted:
    before its equals (``side='left'``) or after them (``'right'``). ``sorter``, positions
    that sort ``x1`` (``argsort(x1)``), reads ``x1`` in that order."""
    if x1.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be 1-d, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side={side!r} must be 'left' or 'right'")
    if sorter is not None:
        x1 = functions.take(x1, sorter, axis=0)
    column = x1.reshape(x1.shape[0], *([1] * x2.ndim))
    before = column < x2 if side == "left" else column <= x2
    return op_functions.sum(before.astype(default_int), 0)
