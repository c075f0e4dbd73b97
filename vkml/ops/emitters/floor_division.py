"""``floor_divide`` and ``remainder`` with NumPy's (and Python's) results, bit for bit.

Floats follow NumPy's ``npy_divmod``: ``mod = fmod(a, b)`` (exact), ``div = (a - mod) / b``;
a ``mod`` whose sign differs from ``b``'s moves by ``b`` (and ``div`` by one), a zero ``mod``
takes ``b``'s sign, and ``div`` is rounded to the nearest integer it should be (floor, then
up where the floor is more than a half below), a zero ``div`` taking the sign of ``a / b``.
Division by zero gives ``a / b`` (±inf or NaN) and a NaN remainder.

Integers: the truncating quotient and remainder, moved toward minus infinity where the
remainder is non-zero and its sign differs from ``b``'s. A zero divisor gives 0 for both, and
``MIN // -1`` wraps to ``MIN``, as NumPy gives; neither reaches the hardware's divide, where
both are undefined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.intbits import const_like, shr
from vkml.dialect.numerics import compute_dtype
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import int32, int64

_SIGNED = {32: int32, 64: int64}


def _signs_differ(b: FunctionBuilder, x: Value, y: Value) -> Value:
    zero = const_like(b, x, 0)
    return b.compare("NE", b.compare("LT", x, zero), b.compare("LT", y, zero))


def _unsigned_quotient(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """``x // y`` of unsigned integers (``y`` non-zero) from a signed divide: IREE's SPIR-V
    backend cannot compile an unsigned divide of eight or more elements ("bitwidth emulation
    is not implemented yet on unsigned op pattern version"). Half of ``x`` divided by a ``y``
    below 2**(n-1), both then non-negative signed values, gives the quotient to within one;
    a ``y`` of 2**(n-1) or more goes into ``x`` at most once."""
    signed = _SIGNED[x.dtype.bits]
    one = const_like(b, x, 1)
    half = b.bitcast(shr(b, x, 1), signed)
    low = b.binary(
        "shift_left", b.bitcast(b.binary("divide", half, b.bitcast(y, signed)), x.dtype), one
    )
    low = b.select(
        b.compare("GE", b.binary("subtract", x, b.binary("multiply", low, y)), y),
        b.binary("add", low, one),
        low,
    )
    at_most_once = b.select(b.compare("GE", x, y), one, const_like(b, x, 0))
    return b.select(
        b.compare("GT", y, const_like(b, y, (1 << (x.dtype.bits - 1)) - 1)), at_most_once, low
    )


def _integer_divmod(b: FunctionBuilder, x: Value, y: Value) -> tuple[Value, Value]:
    zero, one = const_like(b, x, 0), const_like(b, x, 1)
    by_zero = b.compare("EQ", y, zero)
    unsafe = by_zero
    if x.dtype.kind == "int":
        by_minus_one = b.compare("EQ", y, const_like(b, x, -1))
        unsafe = b.binary("or", by_zero, by_minus_one)
    divisor = b.select(unsafe, one, y)
    # the remainder from the quotient, exact in wrapping arithmetic: IREE's SPIR-V remainder
    # of MIN took MIN for its own magnitude and came out positive (MIN % 3 was 2 on lavapipe)
    if x.dtype.kind == "uint":
        q = _unsigned_quotient(b, x, divisor)
    else:
        q = b.binary("divide", x, divisor)
    r = b.binary("subtract", x, b.binary("multiply", q, divisor))
    if x.dtype.kind == "int":
        q = b.select(by_minus_one, b.binary("subtract", zero, x), q)  # wraps at MIN
        r = b.select(by_minus_one, zero, r)
        moves = b.binary("and", b.compare("NE", r, zero), _signs_differ(b, r, y))
        q = b.select(moves, b.binary("subtract", q, one), q)
        r = b.select(moves, b.binary("add", r, y), r)
    return b.select(by_zero, zero, q), b.select(by_zero, zero, r)


def _float_divmod(b: FunctionBuilder, x: Value, y: Value) -> tuple[Value, Value]:
    zero, one = const_like(b, x, 0.0), const_like(b, x, 1.0)
    mod = b.binary("remainder", x, y)
    div = b.binary("divide", b.binary("subtract", x, mod), y)
    nonzero = b.compare("NE", mod, zero)
    moves = b.binary("and", nonzero, _signs_differ(b, y, mod))
    mod = b.select(moves, b.binary("add", mod, y), mod)
    div = b.select(moves, b.binary("subtract", div, one), div)
    # a zero remainder has the divisor's sign
    signed_zero = b.select(b.compare("LT", y, zero), const_like(b, x, -0.0), zero)
    mod = b.select(nonzero, mod, signed_zero)
    floor = b.unary("floor", div)
    up = b.compare("GT", b.binary("subtract", div, floor), const_like(b, x, 0.5))
    floor = b.select(up, b.binary("add", floor, one), floor)
    quotient = b.binary("divide", x, y)
    floor = b.select(b.compare("NE", div, zero), floor, b.binary("multiply", zero, quotient))
    # x / 0: the quotient itself (±inf, NaN); fmod already gave a NaN remainder
    floor = b.select(b.compare("EQ", y, zero), quotient, floor)
    return floor, mod


def divmod_emitter(which: int) -> Any:
    """The emitter of ``floor_divide`` (0) or ``remainder`` (1)."""

    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        cdt = compute_dtype(out.dtype)
        x, y = (b.prepare(v, out.shape, cdt) for v in xs)
        pair = _float_divmod(b, x, y) if cdt.is_float else _integer_divmod(b, x, y)
        return b.convert(pair[which], out.dtype)

    return emit
