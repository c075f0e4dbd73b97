"""Replace every float32 ``stablehlo.divide`` by correctly rounded integer long division.

Invariant: after this pass no ``stablehlo.divide`` of float32 tensors remains; each became the
32-bit integer recipe below between two bitcasts, so the quotient
is IEEE 754's (ties to even, subnormals kept) whatever the target's divide instruction does.
Vulkan allows OpFDiv 2.5 ULP of error; an NVIDIA H200 (driver 580) was 1 ULP off in 2 of ~24
quotients (ADR 0011). Only Vulkan compiles run it: llvm-cpu divides correctly.

The recipe below: float32 division spelled as 32-bit integer arithmetic, correctly rounded on every target.

Vulkan lets a driver's float divide be off by 2.5 ULP, and one measured GPU was off by 1 ULP
in about one quotient in twelve. Integer arithmetic is exact on every target, so this recipe,
which uses nothing else (32-bit only: a Vulkan device need not have int64) besides bitcasts
and selects, gives IEEE 754's quotient on every device:

- finite quotients: roundTiesToEven, subnormal results rounded correctly (never flushed),
  subnormal operands read as their values, overflow to ±inf, the sign the xor of the signs;
- ``x / ±0`` and ``±inf / y`` are ±inf, ``0 / y`` and ``x / ±inf`` are ±0 (x, y finite,
  the zero divided by something nonzero);
- NaN, with x86's rule (what NumPy, IREE's llvm-cpu and lavapipe give on the x86 machines vkml
  is tested on): a NaN ``x`` comes back with its quiet bit set, else a NaN ``y`` does; ``0 / 0``
  and ``inf / inf`` give the default NaN ``0xFFC00000``.

The 24-bit significands are long-divided to 25 quotient bits (24 kept and one to round on);
whether a remainder is left is the sticky bit, and the three decide the rounding exactly.
"""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.intbits import and_mask, const_like, or_mask, shr
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of
from vkml.dialect.types import Value
from vkml.dtypes import float32, int32, uint32

ARGUMENT = "vkml-exact-divide"
DESCRIPTION = "compute float32 division with integer arithmetic, correctly rounded on every target"


def _is_f32_divide(op: ir.Operation) -> bool:
    if op.name != "stablehlo.divide":
        return False
    return str(ir.RankedTensorType(op.results[0].type).element_type) == "f32"


def run(module: ir.Operation) -> None:
    """Rewrite each float32 divide of ``module`` (a builtin.module op) in place."""
    for op in find_ops(module, _is_f32_divide):
        b = FunctionBuilder("divide")
        t = tensor_type_of(op.operands[0].type)
        x, y = b.arg(t), b.arg(t)
        b.ret([divide_f32(b, x, y)])
        replace_with_function_body(op, b.module_text())


# -- the recipe ---------------------------------------------------------------------------

_SIGN = -(1 << 31)  # 0x80000000 as an int32
_ABS_MASK = 0x7FFFFFFF
_INF = 0x7F800000
_QUIET = 0x00400000
_DEFAULT_NAN = -0x00400000  # 0xFFC00000, x86's default NaN, as an int32
_FRACTION = (1 << 23) - 1
_IMPLICIT = 1 << 23
_BIAS = 127


def divide_f32(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """``x / y`` for float32 tensors of one type, correctly rounded, with integer ops only."""
    if x.dtype is not float32 or x.type != y.type:
        raise ValueError(
            f"divide_f32 divides two float32 tensors of one type, not {x.type} and {y.type}"
        )
    ux, uy = b.bitcast(x, int32), b.bitcast(y, int32)
    ax, ay = and_mask(b, ux, _ABS_MASK), and_mask(b, uy, _ABS_MASK)
    sign = and_mask(b, b.binary("xor", ux, uy), _SIGN)
    mx, ex = _unpack(b, ax)
    my, ey = _unpack(b, ay)
    # scale the dividend's significand so that the ratio lies in [1, 2)
    low = b.compare("LT", mx, my)
    mx = b.select(low, b.binary("add", mx, mx), mx)
    bias = b.select(low, const_like(b, ex, _BIAS - 1), const_like(b, ex, _BIAS))
    exponent = b.binary("add", b.binary("subtract", ex, ey), bias)
    quotient, remainder = _long_divide(b, mx, my)
    # one more bit below the quotient: set when anything is left (the sticky bit)
    inexact = b.convert(b.compare("NE", remainder, const_like(b, remainder, 0)), int32)
    bits = b.binary("or", b.binary("add", quotient, quotient), inexact)
    finite = b.binary("or", sign, _round_to_f32(b, bits, exponent))
    return b.bitcast(_special_cases(b, ux, uy, ax, ay, sign, finite), float32)


def _unpack(b: FunctionBuilder, a: Value) -> tuple[Value, Value]:
    """(significand, exponent) of the float32 whose bits are ``a`` (sign clear, finite and
    nonzero): its value is ``significand * 2**(exponent - 150)``, the significand in
    [2**23, 2**24).

    Subnormals are shifted up until their leading one reaches bit 23, their exponent lowered
    as much. For zero (and inf and NaN, replaced later) the result is some harmless value.
    """
    biased = shr(b, a, 23)
    subnormal = b.compare("EQ", biased, const_like(b, a, 0))
    significand = b.select(
        subnormal, a, b.binary("or", and_mask(b, a, _FRACTION), const_like(b, a, _IMPLICIT))
    )
    # 0 for normal numbers; at most 23 for a subnormal, 24 for zero: always below 32
    shift = b.binary("subtract", b.unary("count_leading_zeros", significand), const_like(b, a, 8))
    normalised = b.binary("shift_left", significand, shift)
    exponent = b.binary("subtract", b.binary("maximum", biased, const_like(b, a, 1)), shift)
    return normalised, exponent


def _long_divide(b: FunctionBuilder, dividend: Value, divisor: Value) -> tuple[Value, Value]:
    """(q, r) with ``q = floor(dividend * 2**24 / divisor)`` and ``r`` the remainder, for
    ``divisor <= dividend < 2 * divisor < 2**25``: q has 25 bits.

    Restoring division that keeps only the remainder, four bits a step: 6 times, shift it
    left by 4 and take out 8, 4, 2 and 1 times the divisor wherever each fits. Each of those
    is an unsigned minimum: a remainder below 2**28 that does not fit wraps past 2**31. The
    quotient is then the exact division ``(dividend * 2**24 - r) / divisor``
    (``_exact_quotient``).
    """
    # the same value in lanes that reach the result (bit 23 is set there); never 0
    divisor = or_mask(b, b.bitcast(divisor, uint32), _IMPLICIT)
    dividend = b.bitcast(dividend, uint32)
    multiples = [b.binary("shift_left", divisor, const_like(b, divisor, k)) for k in (3, 2, 1)]
    remainder = b.binary("subtract", dividend, divisor)  # the leading quotient bit is 1
    for _ in range(6):
        remainder = b.binary("shift_left", remainder, const_like(b, remainder, 4))
        for multiple in (*multiples, divisor):
            less = b.binary("subtract", remainder, multiple)
            remainder = b.binary("minimum", remainder, less)
    quotient = _exact_quotient(b, dividend, divisor, remainder)
    return b.bitcast(quotient, int32), b.bitcast(remainder, int32)


def _exact_quotient(b: FunctionBuilder, dividend: Value, divisor: Value, remainder: Value) -> Value:
    """``(dividend * 2**24 - remainder) / divisor``, a division known to leave nothing and
    to fit 25 bits, for a divisor in [2**23, 2**24).

    Write the divisor ``odd * 2**t``: the numerator is a multiple of it, and, the factor 2**t
    divided out, ``(dividend << (24 - t)) - (remainder >> t)`` modulo 2**32 is the quotient
    times ``odd``, which modulo 2**32 has an inverse: Newton's iteration ``x * (2 - odd * x)``
    doubles its correct low bits, from the 5 of ``3 * odd ^ 2`` to 40.
    """
    lowest_bit = b.binary("and", divisor, b.binary("subtract", const_like(b, divisor, 0), divisor))
    t = b.binary("subtract", const_like(b, divisor, 31), b.unary("count_leading_zeros", lowest_bit))
    odd = b.binary("shift_right_logical", divisor, t)
    numerator = b.binary(
        "subtract",
        b.binary("shift_left", dividend, b.binary("subtract", const_like(b, divisor, 24), t)),
        b.binary("shift_right_logical", remainder, t),
    )
    inverse = b.binary(
        "xor", b.binary("multiply", odd, const_like(b, odd, 3)), const_like(b, odd, 2)
    )
    for _ in range(3):
        error = b.binary("subtract", const_like(b, odd, 2), b.binary("multiply", odd, inverse))
        inverse = b.binary("multiply", inverse, error)
    return b.binary("multiply", numerator, inverse)


def _round_to_f32(b: FunctionBuilder, bits: Value, exponent: Value) -> Value:
    """The float32 bits (sign left clear) nearest, ties to even, to the value
    ``bits * 2**(exponent - 152)``, where ``bits`` is in [2**25, 2**26) with its lowest bit
    sticky and ``exponent`` the biased exponent the value has when normal.

    A normal result drops 2 bits; below the normal range (exponent < 1) it drops 3 - exponent
    bits, capped at 27, where every value rounds to zero. A rounding carry walks into the
    exponent field as it should (to the next binade, from subnormal to normal, from the largest
    binade to infinity); an exponent past the largest binade is infinity.
    """
    one = const_like(b, bits, 1)
    below = b.binary("minimum", exponent, one)
    shift = b.binary(
        "minimum", b.binary("subtract", const_like(b, bits, 3), below), const_like(b, bits, 27)
    )
    odd = and_mask(b, b.binary("shift_right_logical", bits, shift), 1)
    below_half = b.binary(
        "subtract", b.binary("shift_left", one, b.binary("subtract", shift, one)), one
    )
    rounded = b.binary(
        "shift_right_logical", b.binary("add", b.binary("add", bits, below_half), odd), shift
    )
    # wraps for exponents past 254, whose lanes take infinity instead
    field = b.binary("subtract", b.binary("maximum", exponent, one), one)
    magnitude = b.binary("add", b.binary("shift_left", field, const_like(b, bits, 23)), rounded)
    overflow = b.compare("GT", exponent, const_like(b, bits, 254))
    return b.select(overflow, const_like(b, bits, _INF), magnitude)


def _special_cases(
    b: FunctionBuilder, ux: Value, uy: Value, ax: Value, ay: Value, sign: Value, finite: Value
) -> Value:
    """``finite`` where both operands are finite and nonzero, else the IEEE result of a zero,
    infinite or NaN operand (the module docstring lists them)."""
    zero, inf = const_like(b, ax, 0), const_like(b, ax, _INF)
    x_zero, y_zero = b.compare("EQ", ax, zero), b.compare("EQ", ay, zero)
    x_inf, y_inf = b.compare("EQ", ax, inf), b.compare("EQ", ay, inf)
    invalid = b.binary("or", b.binary("and", x_zero, y_zero), b.binary("and", x_inf, y_inf))
    result = b.select(b.binary("or", x_zero, y_inf), sign, finite)
    result = b.select(b.binary("or", x_inf, y_zero), b.binary("or", sign, inf), result)
    result = b.select(invalid, const_like(b, ax, _DEFAULT_NAN), result)
    result = b.select(b.compare("GT", ay, inf), or_mask(b, uy, _QUIET), result)
    return b.select(b.compare("GT", ax, inf), or_mask(b, ux, _QUIET), result)
