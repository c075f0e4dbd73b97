"""The published pairwise summation tree, emitted as StableHLO.

To sum axes ``dims`` of ``x``: move them to the front (in order) and flatten them row-major
into one axis of length n; pad that axis with -0.0 to m, the next power of two >= n; then
repeat ``y = y[:m/2] + y[m/2:]`` until one row is left. -0.0 is the exact additive identity,
so padding changes no value. The reference interpreter implements the same order in NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import Value


def next_power_of_two(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def pairwise_sum(b: FunctionBuilder, x: Value, dims: Sequence[int], init: Value) -> Value:
    """Sum ``x`` over ``dims`` in the pairwise order, then add ``init`` (an exact no-op for
    -0.0). Returns a value of ``x``'s shape without ``dims``."""
    dims = sorted(dims)
    kept = [i for i in range(len(x.shape)) if i not in dims]
    kept_shape = tuple(x.shape[i] for i in kept)
    n = math.prod(x.shape[i] for i in dims)
    if n == 0:
        return b.broadcast(init, kept_shape)
    y = b.reshape(b.transpose(x, dims + kept), (n, *kept_shape))
    m = next_power_of_two(n)
    if m > n:
        fill = b.constant(-0.0, x.dtype)
        zeros = [0] * len(kept_shape)
        y = b.pad(y, fill, [0, *zeros], [m - n, *zeros])
    full = list(y.shape)
    while m > 1:
        h = m // 2
        lower = b.slice(y, [0] * len(full), [h, *full[1:]], [1] * len(full))
        upper = b.slice(y, [h] + [0] * (len(full) - 1), [m, *full[1:]], [1] * len(full))
        y = b.binary("add", lower, upper)
        m = h
        full[0] = h
    total = b.reshape(y, kept_shape)
    return b.binary("add", total, b.broadcast(init, kept_shape))
