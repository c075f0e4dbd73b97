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
one) and sorted in p(p+1)/2 compare-exchange steps, each a reshape, two selects per carried
value and a concatenate: no loop inside a shader, so lavapipe's 65,535-iteration cap never
meets it. Stage k (k = 2, 4, ..., m) first compares each block of k with its own mirror
image (position i with k - 1 - i), which leaves both halves bitonic and every element of
the low half below every one of the high half; then steps j = k/4, ..., 1 compare each
position with the one j further (half-cleaners), all in the same direction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def _exchange(
    b: FunctionBuilder, lo: tuple[Value, Value], hi: tuple[Value, Value]
) -> tuple[tuple[Value, Value], tuple[Value, Value]]:
    """(key, position) pairs put in order: the smaller of each pair into ``lo``."""
    (lk, lp), (hk, hp) = lo, hi
    before = b.compare("LT", hk, lk)
    tie = b.binary("and", b.compare("EQ", hk, lk), b.compare("LT", hp, lp))
    swap = b.binary("or", before, tie)
    return (
        (b.select(swap, hk, lk), b.select(swap, hp, lp)),
        (b.select(swap, lk, hk), b.select(swap, lp, hp)),
    )


def _step(
    b: FunctionBuilder, pair: tuple[Value, Value], j: int, mirror: bool
) -> tuple[Value, Value]:
    """One compare-exchange over rows of length m: position i (bit j clear) against i + j,
    or, when ``mirror``, each block of 2j against its mirror image."""
    rows, m = pair[0].shape
    split = (rows, m // (2 * j), 2, j)
    halves = []
    for v in pair:
        v = b.reshape(v, split)
        low = b.slice(v, [0, 0, 0, 0], [rows, m // (2 * j), 1, j], [1, 1, 1, 1])
        high = b.slice(v, [0, 0, 1, 0], [rows, m // (2 * j), 2, j], [1, 1, 1, 1])
        halves.append((low, b.reverse(high, [3]) if mirror else high))
    (lk, hk), (lp, hp) = halves
    (lk, lp), (hk, hp) = _exchange(b, (lk, lp), (hk, hp))
    out = []
    for low, high in ((lk, hk), (lp, hp)):
        high = b.reverse(high, [3]) if mirror else high
        out.append(b.reshape(b.concatenate([low, high], 2, split), (rows, m)))
    return out[0], out[1]


def sorted_positions(b: FunctionBuilder, key: Value) -> Value:
    """The int32 positions that put each row of ``key`` (rows, n) in (key, position) order."""
    rows, n = key.shape
    m = 1 if n <= 1 else 1 << (n - 1).bit_length()
    pad = b.constant(_largest(key.dtype), key.dtype, ())
    pair = (b.pad(key, pad, [0, 0], [0, m - n]), b.iota((rows, m), 1, int32))
    k = 2
    while k <= m:
        pair = _step(b, pair, k // 2, mirror=True)
        j = k // 4
        while j >= 1:
            pair = _step(b, pair, j, mirror=False)
            j //= 2
        k *= 2
    return b.slice(pair[1], [0, 0], [rows, n], [1, 1])


def emit_argsort(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x, axis = xs[0], attrs["axis"]
    perm = [d for d in range(len(x.shape)) if d != axis] + [axis]
    moved = b.transpose(x, perm)
    n = x.shape[axis]
    rows = 1
    for d in moved.shape[:-1]:
        rows *= d
    key = order_key(b, b.reshape(moved, (rows, n)))
    if attrs["descending"]:
        key = b.unary("not", key)
    positions = b.reshape(sorted_positions(b, key), moved.shape)
    back = [perm.index(d) for d in range(len(perm))]
    return b.convert(b.transpose(positions, back), out.dtype)
