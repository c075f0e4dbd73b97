"""The published inclusive-scan order (``cumsum``), emitted as StableHLO.

To accumulate ``x`` along axis ``a`` of length n: ``y = x``; for k = 1, 2, 4, ... below n,
``y = y + shift(y, k)``, where ``shift`` moves every element k places along ``a`` and fills
the first k with -0.0 (the exact additive identity; 0 for integers). After the step for k,
element i holds the sum of elements i - 2k + 1 .. i in a fixed tree, so the result is one set
of bits on every device (Hillis and Steele's scan; the reference device runs the same steps).
It costs log2(n) elementwise passes and no loop inside a shader, so lavapipe's loop cap never
meets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.numerics import compute_dtype, sum_accumulator
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import float64, int32


def shift(b: FunctionBuilder, y: Value, axis: int, k: int, fill: Value) -> Value:
    """``y`` moved ``k`` places up ``axis``, the first ``k`` places ``fill``."""
    n = y.shape[axis]
    limit = list(y.shape)
    limit[axis] = n - k
    kept = b.slice(y, [0] * len(y.shape), limit, [1] * len(y.shape))
    low = [0] * len(y.shape)
    low[axis] = k
    return b.pad(kept, fill, low, [0] * len(y.shape))


def emit_cumsum(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    acc = compute_dtype(out.dtype) if out.dtype.is_float else sum_accumulator(xs[0].dtype)
    y = b.convert(xs[0], acc)
    axis = attrs["axis"]
    # IREE 3.13 cannot compile a pad whose fill is a non-zero 64-bit value ("'stream.yield' op
    # used resource not listed in explicit captures", on llvm-cpu and Vulkan alike), so a
    # float64 scan pads with +0.0 and keeps y itself in the first k places, which is what
    # adding -0.0 gives
    wide = acc == float64
    fill = b.constant(0.0 if wide else -0.0 if acc.is_float else 0, acc)
    position = b.iota(y.shape, axis, int32) if wide else None
    k = 1
    while k < y.shape[axis]:
        added = b.binary("add", y, shift(b, y, axis, k, fill))
        if position is not None:
            first = b.compare("LT", position, b.constant(k, int32, y.shape))
            added = b.select(first, y, added)
        y = added
        k *= 2
    return b.convert(y, out.dtype)
