"""``argsort`` as a bitonic network, in StableHLO.

Every element gets an integer *key* whose signed order is the sort order (``order_key``):
an integer's own value (unsigned ones with the sign bit flipped), a float's bits with the
magnitude bits of negatives inverted, -0.0 read as +0.0 and every NaN as the largest key.
For a descending sort the key is inverted bitwise (``~k`` reverses the order exactly, NaN
first as in ``torch.sort(descending=True)``). Each key travels with its position, and two
elements compare by (key, position), so no two compare equal: the network's answer is the
one stable order, the same on every device and the same as NumPy's stable argsort of the
keys (the reference device).

The row is padded to m = 2^p with the largest key (padding positions come after every real
one) and sorted in p(p+1)/2 compare-exchange steps, each a reshape, the exchange (a minimum
and a maximum of packed int64s for 32-bit keys, four selects for 64-bit ones) and a
concatenate: no loop inside a shader, so lavapipe's 65,535-iteration cap never meets it.
Stage k (k = 2, 4, ..., m) first compares each block of k with its own mirror image
(position i with k - 1 - i), which leaves both halves bitonic and every element of the low
half below every one of the high half; then steps j = k/4, ..., 1 compare each position with
the one j further (half-cleaners), all in the same direction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import DType, float32, int32, int64


def order_key(b: FunctionBuilder, x: Value) -> Value:
    """int32 keys (int64 for 64-bit dtypes) in the sort order of ``x`` (see above)."""
    if x.dtype.is_float and x.dtype.bits == 16:
        x = b.convert(x, float32)  # exact, NaN and -0.0 included; then float32's keys
    dtype = x.dtype
    key_type = int64 if dtype.bits == 64 else int32
    if dtype.kind in ("bool", "int"):
        return b.convert(x, key_type)
    if dtype.kind == "uint":  # flip the sign bit: unsigned order as signed order
        bits = b.bitcast(x, key_type)
        return b.binary("xor", bits, b.constant(-(1 << (dtype.bits - 1)), key_type, x.shape))
    bits = b.bitcast(x, key_type)
    magnitude_mask = (1 << (dtype.bits - 1)) - 1
    magnitude = b.binary("and", bits, b.constant(magnitude_mask, key_type, x.shape))
    negative = b.compare("LT", bits, b.constant(0, key_type, x.shape))
    flipped = b.binary("xor", bits, b.constant(magnitude_mask, key_type, x.shape))
    key = b.select(negative, flipped, bits)
    zero = b.compare("EQ", magnitude, b.constant(0, key_type, x.shape))
    key = b.select(zero, b.constant(0, key_type, x.shape), key)
    nan = b.compare("GT", magnitude, b.constant(_INF_BITS[dtype.bits], key_type, x.shape))
    return b.select(nan, b.constant(_largest(key_type), key_type, x.shape), key)


_INF_BITS = {32: 0x7F800000, 64: 0x7FF0000000000000}


def _largest(key_type: DType) -> int:
    return (1 << (key_type.bits - 1)) - 1


Values = tuple[Value, ...]
Exchange = Callable[[FunctionBuilder, Values, Values], tuple[Values, Values]]


def _exchange_pairs(b: FunctionBuilder, lo: Values, hi: Values) -> tuple[Values, Values]:
    """(key, position) pairs put in order: the smaller of each pair into ``lo``."""
    (lk, lp), (hk, hp) = lo, hi
    before = b.compare("LT", hk, lk)
    tie = b.binary("and", b.compare("EQ", hk, lk), b.compare("LT", hp, lp))
    swap = b.binary("or", before, tie)
    return (
        (b.select(swap, hk, lk), b.select(swap, hp, lp)),
        (b.select(swap, lk, hk), b.select(swap, lp, hp)),
    )


def _exchange_packed(b: FunctionBuilder, lo: Values, hi: Values) -> tuple[Values, Values]:
    """Packed (key, position) int64s put in order: a minimum and a maximum."""
    return (b.binary("minimum", lo[0], hi[0]),), (b.binary("maximum", lo[0], hi[0]),)


def _step(b: FunctionBuilder, values: Values, j: int, mirror: bool, exchange: Exchange) -> Values:
    """One compare-exchange over rows of length m: position i (bit j clear) against i + j,
    or, when ``mirror``, each block of 2j against its mirror image."""
    rows, m = values[0].shape
    split = (rows, m // (2 * j), 2, j)
    lows, highs = [], []
    for v in values:
        v = b.reshape(v, split)
        lows.append(b.slice(v, [0, 0, 0, 0], [rows, m // (2 * j), 1, j], [1, 1, 1, 1]))
        high = b.slice(v, [0, 0, 1, 0], [rows, m // (2 * j), 2, j], [1, 1, 1, 1])
        highs.append(b.reverse(high, [3]) if mirror else high)
    low_out, high_out = exchange(b, tuple(lows), tuple(highs))
    out = []
    for low, high in zip(low_out, high_out):
        high = b.reverse(high, [3]) if mirror else high
        out.append(b.reshape(b.concatenate([low, high], 2, split), (rows, m)))
    return tuple(out)


def _network(b: FunctionBuilder, values: Values, exchange: Exchange) -> Values:
    """The bitonic network over rows of length m = 2^p (see the module)."""
    m, k = values[0].shape[1], 2
    while k <= m:
        values = _step(b, values, k // 2, True, exchange)
        j = k // 4
        while j >= 1:
            values = _step(b, values, j, False, exchange)
            j //= 2
        k *= 2
    return values


def sorted_positions(b: FunctionBuilder, key: Value) -> Value:
    """The int64 positions that put each row of ``key`` (rows, n) in (key, position) order.
    A 32-bit key and its position travel packed in one int64 (key * 2^32 + position, whose
    order is the pair's), so each exchange is one minimum and one maximum."""
    rows, n = key.shape
    m = 1 if n <= 1 else 1 << (n - 1).bit_length()
    key = b.pad(key, b.constant(_largest(key.dtype), key.dtype, ()), [0, 0], [0, m - n])
    positions = b.iota((rows, m), 1, int64)
    if key.dtype is int32:
        high = b.binary("shift_left", b.convert(key, int64), b.constant(32, int64, key.shape))
        (packed,) = _network(b, (b.binary("or", high, positions),), _exchange_packed)
        low = b.binary("and", packed, b.constant((1 << 32) - 1, int64, key.shape))
        return b.slice(low, [0, 0], [rows, n], [1, 1])
    _, positions = _network(b, (key, positions), _exchange_pairs)
    return b.slice(positions, [0, 0], [rows, n], [1, 1])


def emit_argsort(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x, axis = xs[0], attrs["axis"]
    perm = [d for d in range(len(x.shape)) if d != axis] + [axis]
    moved = b.transpose(x, perm)
    n = x.shape[axis]
    rows = math.prod(moved.shape[:-1])
    key = order_key(b, b.reshape(moved, (rows, n)))
    if attrs["descending"]:
        key = b.unary("not", key)
    positions = b.reshape(sorted_positions(b, key), moved.shape)
    back = [perm.index(d) for d in range(len(perm))]
    return b.convert(b.transpose(positions, back), out.dtype)
