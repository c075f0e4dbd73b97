"""The published pairwise summation tree, emitted as StableHLO.

To sum axes ``dims`` of ``x``: move them to the front (in order) and flatten them row-major
into one axis of length n; pad that axis with -0.0 to m, the next power of two >= n; then
repeat ``y = y[:m/2] + y[m/2:]`` until one row is left. -0.0 is the exact additive identity,
so padding changes no value. The reference interpreter implements the same order in NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import Value
from vkml.dtypes import float64, integer_range

# Halvings emitted per fused block: 2**4 = 16 slices read in one pass.
FAN_IN_LEVELS = 4


def next_power_of_two(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


Combine = Callable[[FunctionBuilder, Value, Value], Value]


def pairwise_reduce(
    b: FunctionBuilder, x: Value, dims: Sequence[int], combine: Combine, pad: float | bool
) -> Value:
    """Reduce ``x`` over ``dims`` with ``combine`` in the pairwise order, padding with
    ``pad`` (an identity of ``combine``). Returns ``x``'s shape without ``dims``; a reduction
    over zero elements is ``pad`` broadcast to that shape."""
    dims = sorted(dims)
    kept = [i for i in range(len(x.shape)) if i not in dims]
    kept_shape = tuple(x.shape[i] for i in kept)
    n = math.prod(x.shape[i] for i in dims)
    if n == 0:
        return b.broadcast(b.constant(pad, x.dtype), kept_shape)
    y = b.reshape(b.transpose(x, dims + kept), (n, *kept_shape))
    m = next_power_of_two(n)
    if m > n and x.dtype is float64:
        # a block of the identity joined on: IREE 3.13 failed to compile two float64 pads
        # by one -0.0 in a module ("'stream.yield' op used resource not listed in explicit
        # captures"; tests/py/fuzz/test_fuzz_regressions.py)
        fill = b.broadcast(b.constant(pad, x.dtype), (m - n, *kept_shape))
        y = b.concatenate([y, fill], 0, (m, *kept_shape))
    elif m > n:
        zeros = [0] * len(kept_shape)
        y = b.pad(y, b.constant(pad, x.dtype), [0, *zeros], [m - n, *zeros])
    rest = list(y.shape[1:])
    ones = [1] * (len(rest) + 1)
    while m > 1:
        # Several halvings at once: cut y into 2**k row blocks and combine them as a tree
        # whose first level pairs block r with block r + 2**k/2, exactly what k successive
        # halvings do. All blocks are slices of one value, so IREE fuses the block into one
        # dispatch that reads y once.
        k = min(FAN_IN_LEVELS, m.bit_length() - 1)
        rows = m >> k
        parts = [
            b.slice(y, [i * rows] + [0] * len(rest), [(i + 1) * rows, *rest], ones)
            for i in range(1 << k)
        ]
        while len(parts) > 1:
            h = len(parts) // 2
            parts = [combine(b, parts[i], parts[i + h]) for i in range(h)]
        y = parts[0]
        m = rows
    return b.reshape(y, kept_shape)


def add(b: FunctionBuilder, x: Value, y: Value) -> Value:
    return b.binary("add", x, y)


def pairwise_sum(b: FunctionBuilder, x: Value, dims: Sequence[int], init: Value) -> Value:
    """Sum ``x`` over ``dims`` in the pairwise order, then add ``init`` (an exact no-op for
    -0.0). A sum over zero elements is ``init``."""
    n = math.prod(x.shape[i] for i in dims)
    kept_shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    if n == 0:
        return b.broadcast(init, kept_shape)
    total = pairwise_reduce(b, x, dims, add, -0.0 if x.dtype.is_float else 0)
    return b.binary("add", total, b.broadcast(init, kept_shape))


def pairwise_extreme(
    b: FunctionBuilder, x: Value, dims: Sequence[int], op: str, init: Value
) -> Value:
    """``op`` (``"minimum"`` or ``"maximum"``) of the integers of ``x`` over ``dims`` and
    ``init``, as a pairwise tree. Exact in any order; the tree keeps every thread's work
    short where a native reduce loops over the whole axis in one thread."""
    lowest, highest = integer_range(x.dtype)
    pad = highest if op == "minimum" else lowest

    def combine(b: FunctionBuilder, p: Value, q: Value) -> Value:
        return b.binary(op, p, q)

    total = pairwise_reduce(b, x, dims, combine, pad)
    return b.binary(op, total, b.broadcast(init, total.shape))
