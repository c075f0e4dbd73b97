"""``pow`` of floats with IEEE 754's (C's, NumPy's, PyTorch's) values at every operand.

IREE lowers StableHLO's ``power`` of floats as ``exp(y * log(x))`` with no sign handling:
llvm-cpu and lavapipe gave NaN for ``(-2.0) ** 3``, ``(-0.0) ** -3``, ``1 ** inf`` and
``NaN ** 0``. This emitter raises ``|x|`` (where that lowering is right) and restates the rest:
a negative ``x`` takes an odd integer ``y``'s sign and is NaN under any other finite ``y``;
``x ** ±0`` and ``1 ** y`` are 1 whatever the other operand (NaN included), and so is
``(-1) ** ±inf``.

IREE's integer ``power`` squares six times, so it took the exponent mod 64 (``3 ** 64`` was 1):
integers are raised here by squaring once per bit of the exponent's dtype, wrapping as NumPy's
do, and a negative exponent gives ``1 / x**|y|`` truncated toward zero (the reference's rule).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.intbits import and_mask, const_like, shr
from vkml.dialect.nan_bits import is_infinite, is_zero, sign_set
from vkml.dialect.numerics import compute_dtype
from vkml.dialect.types import TensorType, Value


def _is_integer(b: FunctionBuilder, y: Value) -> Value:
    """``y`` is a whole number; ±inf counts (its floor is itself), NaN does not."""
    return b.compare("EQ", b.unary("floor", y), y)


def _is_odd(b: FunctionBuilder, y: Value) -> Value:
    """``y`` is an odd whole number: beyond 2**mantissa every float is even, ±inf too."""
    half = b.unary("floor", b.binary("multiply", y, const_like(b, y, 0.5)))
    twice = b.binary("multiply", half, const_like(b, y, 2.0))
    return b.binary("and", _is_integer(b, y), b.compare("NE", twice, y))


def float_pow(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """``x ** y`` of two float32 or float64 values of one shape."""
    negative = sign_set(b, x)
    p = b.binary("power", b.unary("abs", x), y)
    out = b.select(b.binary("and", negative, _is_odd(b, y)), b.unary("negate", p), p)
    # a negative finite base under a finite non-integer exponent (an infinite one is whole)
    finite_negative = b.binary("and", negative, b.unary("not", is_infinite(b, x)))
    undefined = b.binary(
        "and",
        b.binary("and", finite_negative, b.unary("not", is_zero(b, x))),
        b.unary("not", _is_integer(b, y)),
    )
    out = b.select(undefined, const_like(b, x, math.nan), out)
    one = const_like(b, x, 1.0)
    minus_one_to_infinity = b.binary(
        "and", b.compare("EQ", x, const_like(b, x, -1.0)), is_infinite(b, y)
    )
    unit = b.binary(
        "or", b.binary("or", is_zero(b, y), b.compare("EQ", x, one)), minus_one_to_infinity
    )
    return b.select(unit, one, out)


def int_pow(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """``x ** y`` of two integer values of one shape and dtype, exact at every exponent."""
    one, zero = const_like(b, x, 1), const_like(b, x, 0)
    result, base, rest = one, x, y
    signed = x.dtype.kind == "int"
    turns = x.dtype.bits - 1 if signed else x.dtype.bits  # a negative y is decided below
    for turn in range(turns):
        bit = b.compare("NE", and_mask(b, rest, 1), zero)
        result = b.select(bit, b.binary("multiply", result, base), result)
        if turn < turns - 1:
            base, rest = b.binary("multiply", base, base), shr(b, rest, 1)
    if not signed:
        return result
    # 1 / x**|y|: 1 for x = 1, ±1 for x = -1 (the sign of an odd y), 0 otherwise
    odd = b.compare("NE", and_mask(b, y, 1), zero)
    minus_one = const_like(b, x, -1)
    unit_sign = b.select(odd, minus_one, one)
    reciprocal = b.select(
        b.compare("EQ", x, one), one, b.select(b.compare("EQ", x, minus_one), unit_sign, zero)
    )
    return b.select(b.compare("LT", y, zero), reciprocal, result)


def emit_pow(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    cdt = compute_dtype(out.dtype)
    x, y = (b.prepare(v, out.shape, cdt) for v in xs)
    result = float_pow(b, x, y) if cdt.is_float else int_pow(b, x, y)
    return b.convert(result, out.dtype)
