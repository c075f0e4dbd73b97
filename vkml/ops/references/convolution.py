"""The reference device's ``conv``, as its emitter computes it (vkml.ops.emitters.convolution):
the input spread by its dilation and padded (a negative pad drops elements), one strided
slice per kernel tap side by side as columns, and one matrix product per group, in the
op's accumulator dtype (float32 for 16-bit floats)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import DType
from vkml.ops.references.common import cast, compute_dtype, finish


def conv(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    cdt = compute_dtype(dtype)
    # each operand in the op's dtype first, then read into the accumulator (as the emitter)
    x, w = (cast(cast(v, dtype.numpy), cdt) for v in xs)
    if 0 in shape or 0 in x.shape or 0 in w.shape:
        return finish(np.zeros(shape, cdt), dtype, shape)
    groups, stride, dilation = attrs["groups"], attrs["stride"], attrs["rhs_dilation"]
    n, c, o = x.shape[0], x.shape[1], shape[1]
    kernel, positions = w.shape[2:], shape[2:]
    x = _pad(_spread(np.moveaxis(x, 1, 0), attrs["lhs_dilation"]), attrs["padding"])
    count = n * math.prod(positions)
    taps = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        pick = tuple(
            slice(t * d, t * d + (m - 1) * s + 1, s)
            for t, d, m, s in zip(tap, dilation, positions, stride)
        )
        taps.append(x[(slice(None), slice(None), *pick)].reshape(c, 1, count))
    cols = np.concatenate(taps, axis=1).reshape(groups, -1, count)
    with np.errstate(all="ignore"):
        y = np.matmul(w.reshape(groups, o // groups, -1), cols)
    return finish(np.moveaxis(y.reshape(o, n, *positions), 0, 1), dtype, shape)


def _spread(x: np.ndarray, dilation: Sequence[int]) -> np.ndarray:
    if all(a == 1 for a in dilation):
        return x
    size = [(s - 1) * a + 1 for s, a in zip(x.shape[2:], dilation)]
    out = np.zeros(x.shape[:2] + tuple(size), x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(None, None, a) for a in dilation)] = x
    return out


def _pad(x: np.ndarray, padding: Sequence[tuple[int, int]]) -> np.ndarray:
    cut = tuple(
        slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(padding)
    )
    x = x[(slice(None), slice(None), *cut)]
    widths = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    return np.pad(x, widths)
