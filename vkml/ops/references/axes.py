"""The reference device's interpreter for the ops along axes: matmul, the reductions, the scan,
the gathers and argsort, each in the published order its emitter runs (vkml.dialect.pairwise,
vkml.ops.emitters.scan, .gather), so the compiled devices can be checked against it bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import DType, int64
from vkml.ops.references.common import (
    Reference,
    cast,
    compute_dtype,
    finish,
    scalar,
    select_max,
    select_min,
)


def matmul(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    # each operand in the op's dtype first (an integer rounded to a 16-bit float), then read
    # into the accumulator, as the emitter's dot_general reads it
    cdt = compute_dtype(dtype)
    a, b = (cast(cast(x, dtype.numpy), cdt) for x in xs)
    with np.errstate(all="ignore"):
        return finish(np.matmul(a, b), dtype, shape)


def pairwise_reduce(
    x: np.ndarray,
    axes: Sequence[int],
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray],
    pad: float | bool,
) -> np.ndarray:
    """Reduce ``x`` over ``axes`` in vkml's published pairwise order (vkml.dialect.pairwise)."""
    axes = sorted(axes)
    kept = [i for i in range(x.ndim) if i not in axes]
    kept_shape = tuple(x.shape[i] for i in kept)
    n = math.prod(x.shape[i] for i in axes)
    if n == 0:
        return np.full(kept_shape, scalar(pad, x.dtype))
    y = np.transpose(x, axes + kept).reshape((n, *kept_shape))
    m = 1 if n <= 1 else 1 << (n - 1).bit_length()
    if m > n:
        y = np.concatenate([y, np.full((m - n, *kept_shape), scalar(pad, x.dtype))])
    while m > 1:
        h = m // 2
        y = combine(y[:h], y[h:m])
        m = h
    return y.reshape(kept_shape)


def pairwise_sum(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """Sum ``x`` over ``axes`` in vkml's published pairwise order; an empty sum is +0.0."""
    if math.prod(x.shape[i] for i in axes) == 0:
        return pairwise_reduce(x, axes, np.add, 0.0)
    return pairwise_reduce(x, axes, np.add, -0.0) + np.array(-0.0, x.dtype)


def _extreme(dtype: np.dtype, largest: bool) -> float | int | bool:
    if dtype.kind == "b":
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.max if largest else info.min)
    return math.inf if largest else -math.inf


def _keep(y: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(y).reshape(shape)


def reduce_sum(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    x = xs[0]
    axes = list(attrs["axes"])
    if dtype.is_float:
        acc = compute_dtype(dtype)
        with np.errstate(all="ignore"):
            total = pairwise_sum(cast(x, acc), axes)
            if attrs.get("divisor") is not None:
                total = total / scalar(attrs["divisor"], acc)
    else:
        total = np.asarray(np.sum(cast(x, int64.numpy), axis=tuple(axes), dtype=np.int64))
    return finish(_keep(total, shape), dtype, shape)


def reduce_prod(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    acc = compute_dtype(dtype)  # float32 for the 16-bit floats; int64 for integers and bool
    with np.errstate(all="ignore"):
        total = pairwise_reduce(cast(xs[0], acc), list(attrs["axes"]), np.multiply, 1)
    return finish(_keep(total, shape), dtype, shape)


def cumsum(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """The inclusive scan in vkml's published order (vkml.ops.emitters.scan)."""
    axis = attrs["axis"]
    y = cast(xs[0], compute_dtype(dtype))
    n, k = y.shape[axis], 1
    fill = scalar(-0.0 if y.dtype.kind == "f" else 0, y.dtype)
    with np.errstate(all="ignore"):
        while k < n:
            head = np.full(_with(y.shape, axis, k), fill)
            y = y + np.concatenate([head, np.take(y, range(n - k), axis=axis)], axis=axis)
            k *= 2
    return finish(y, dtype, shape)


def order_key(x: np.ndarray) -> np.ndarray:
    """Integer keys in vkml's sort order (vkml.ops.emitters.sort): -0.0 as +0.0, NaN largest."""
    if x.dtype.kind in "biu":
        return x.astype(np.int64) if x.dtype.itemsize < 8 or x.dtype.kind != "u" else x
    wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    signed = np.dtype(f"i{wide.dtype.itemsize}")
    bits = wide.view(signed).astype(np.int64)
    mask = (1 << (8 * wide.dtype.itemsize - 1)) - 1
    key = np.where(bits < 0, bits ^ mask, bits)
    key = np.where((bits & mask) == 0, 0, key)
    return np.where(np.isnan(wide), mask, key)


def argsort(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """NumPy's stable argsort of the keys; descending sorts the inverted keys."""
    key = order_key(xs[0])
    if attrs["descending"]:
        key = ~key
    return finish(np.argsort(key, axis=attrs["axis"], kind="stable"), dtype, shape)


def _with(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    return shape[:axis] + (size,) + shape[axis + 1 :]


def _positions(idx: np.ndarray, n: int) -> np.ndarray:
    """Indices along an axis of length n: negative ones wrap once, the rest clamp."""
    i = idx.astype(np.int64)
    i = np.where(i < 0, i + n, i)
    return np.clip(i, 0, max(n - 1, 0))


def take_along_axis(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    x, idx = xs
    axis = attrs["axis"]
    return finish(np.take_along_axis(x, _positions(idx, x.shape[axis]), axis), dtype, shape)


def scatter_add(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """Per output position, the pairwise sum of the selected elements (vkml.ops.emitters.gather)."""
    g, idx = xs
    axis, n = attrs["axis"], shape[attrs["axis"]]
    acc = compute_dtype(dtype)
    g = cast(g, acc)
    here = np.expand_dims(_positions(idx, n), axis) == np.arange(n).reshape(
        (n,) + (1,) * (g.ndim - axis)
    )
    fill = scalar(-0.0 if acc.kind == "f" else 0, acc)
    chosen = np.where(here, np.expand_dims(g, axis), fill)
    with np.errstate(all="ignore"):
        total = pairwise_reduce(chosen, [axis + 1], np.add, fill.item())
        if acc.kind == "f":
            total = total + scalar(0.0, acc)
    return finish(total, dtype, shape)


def minmax(largest: bool) -> Reference:
    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        combine = select_max if largest else select_min
        pad = _extreme(xs[0].dtype, not largest)
        return finish(
            _keep(pairwise_reduce(xs[0], attrs["axes"], combine, pad), shape), dtype, shape
        )

    return ref


def argextreme(fn: Callable[..., np.ndarray]) -> Reference:
    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        # NumPy's argmax/argmin already take the first extreme and treat NaN as the extreme.
        return finish(_keep(fn(xs[0], axis=attrs["axis"]), shape), dtype, shape)

    return ref


def index_at(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """Position ``xs[1]`` (in range) of ``axis``, kept as an axis of length 1."""
    x, pos = xs
    return finish(np.take(x, [int(pos)], axis=attrs["axis"]), dtype, shape)


def place_at(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """``xs[0]`` at position ``xs[1]`` of ``axis`` in zeros of ``shape`` (+0.0)."""
    g, pos = xs
    out = np.zeros(shape, dtype=g.dtype)
    index = [slice(None)] * len(shape)
    index[attrs["axis"]] = slice(int(pos), int(pos) + 1)
    out[tuple(index)] = g
    return finish(out, dtype, shape)
