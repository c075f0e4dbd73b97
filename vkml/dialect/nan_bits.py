"""Float classification spelled as integer arithmetic on the bits.

A compiler that assumes no float is NaN may fold ``x != x`` to false, reverse an ordered
compare, or let a clamp inside a transcendental swallow NaN. It cannot reason that way about
integers: these tests read the bits through ``stablehlo.bitcast_convert`` and decide with
integer compares, so they hold whatever the target assumes about floats.

Each test works on the magnitude ``bits(x) & MASK`` (the sign cleared) as a signed integer of
the float's width, which is never negative: NaN is a magnitude above infinity's bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import Value
from vkml.dtypes import DType, int32, int64

# vkml has no 16-bit integer dtype; this one only carries the bits of float16 and bfloat16
_INT16 = DType("int16", "int", 16, "i16", np.dtype(np.int16))


@dataclass(frozen=True, slots=True)
class FloatBits:
    """How one float element type is laid out: the integer type of its width, the mask that
    clears its sign, and the bits of +infinity."""

    integer: DType
    magnitude_mask: int
    infinity: int


# by MLIR element type
FLOAT_BITS: dict[str, FloatBits] = {
    "f16": FloatBits(_INT16, 0x7FFF, 0x7C00),
    "bf16": FloatBits(_INT16, 0x7FFF, 0x7F80),
    "f32": FloatBits(int32, 0x7FFFFFFF, 0x7F800000),
    "f64": FloatBits(int64, 0x7FFF_FFFF_FFFF_FFFF, 0x7FF0_0000_0000_0000),
}


def float_bits(x: Value) -> FloatBits:
    """The layout of ``x``'s element type (ValueError for a non-float)."""
    layout = FLOAT_BITS.get(x.dtype.mlir)
    if layout is None:
        raise ValueError(f"integer NaN tests read float bits, not {x.dtype}")
    return layout


def magnitude(b: FunctionBuilder, x: Value) -> Value:
    """``bits(x)`` with the sign cleared, as a (non-negative) signed integer."""
    layout = float_bits(x)
    bits = b.bitcast(x, layout.integer)
    return b.binary("and", bits, b.constant(layout.magnitude_mask, layout.integer, x.shape))


def sign_set(b: FunctionBuilder, x: Value) -> Value:
    """``x``'s sign bit is set: -0.0, the negative numbers and the NaNs with the sign set."""
    layout = float_bits(x)
    bits = b.bitcast(x, layout.integer)
    return b.compare("LT", bits, b.constant(0, layout.integer, x.shape))


def is_nan(b: FunctionBuilder, x: Value) -> Value:
    """``x`` is NaN: its magnitude is above infinity's."""
    return _against_infinity(b, "GT", x)


def is_not_nan(b: FunctionBuilder, x: Value) -> Value:
    """``x`` is not NaN (the integer spelling of ``x == x``)."""
    return _against_infinity(b, "LE", x)


def is_infinite(b: FunctionBuilder, x: Value) -> Value:
    """``x`` is +inf or -inf."""
    return _against_infinity(b, "EQ", x)


def is_zero(b: FunctionBuilder, x: Value) -> Value:
    """``x`` is +0.0 or -0.0."""
    layout = float_bits(x)
    return b.compare("EQ", magnitude(b, x), b.constant(0, layout.integer, x.shape))


def is_one(b: FunctionBuilder, x: Value) -> Value:
    """``x`` is exactly 1.0."""
    layout = float_bits(x)
    one = np.array([1.0], x.dtype.numpy).view(layout.integer.numpy)[0]
    return b.compare(
        "EQ", b.bitcast(x, layout.integer), b.constant(int(one), layout.integer, x.shape)
    )


def is_below(b: FunctionBuilder, x: Value, limit: float) -> Value:
    """``x < limit`` for a ``limit`` of -0.0 or less, or ``x`` is a NaN with the sign set: the
    sign bit is set and the magnitude is above ``|limit|``'s."""
    if not (limit <= 0 and math.copysign(1.0, limit) < 0):
        raise ValueError(f"is_below takes a limit of -0.0 or below, not {limit}")
    layout = float_bits(x)
    negative = sign_set(b, x)
    bound = np.array([-limit], np.float64).astype(x.dtype.numpy).view(layout.integer.numpy)[0]
    above = b.compare("GT", magnitude(b, x), b.constant(int(bound), layout.integer, x.shape))
    return b.binary("and", negative, above)


def is_beyond(b: FunctionBuilder, x: Value, limit: float) -> Value:
    """``|x| > limit`` for a ``limit`` of 0.0 or more (a NaN too): the magnitude's bits are
    above ``limit``'s."""
    if not limit >= 0:
        raise ValueError(f"is_beyond takes a limit of 0.0 or above, not {limit}")
    layout = float_bits(x)
    bound = np.array([limit], np.float64).astype(x.dtype.numpy).view(layout.integer.numpy)[0]
    return b.compare("GT", magnitude(b, x), b.constant(int(bound), layout.integer, x.shape))


def is_below_one(b: FunctionBuilder, x: Value) -> Value:
    """``x < 1`` (a NaN with the sign set too): the sign is set or the magnitude is below 1's."""
    layout = float_bits(x)
    negative = sign_set(b, x)
    one = np.array([1.0], x.dtype.numpy).view(layout.integer.numpy)[0]
    small = b.compare("LT", magnitude(b, x), b.constant(int(one), layout.integer, x.shape))
    return b.binary("or", negative, small)


def _against_infinity(b: FunctionBuilder, direction: str, x: Value) -> Value:
    layout = float_bits(x)
    return b.compare(
        direction, magnitude(b, x), b.constant(layout.infinity, layout.integer, x.shape)
    )
