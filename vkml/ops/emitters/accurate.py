"""Emitters for functions whose IREE lowering is inaccurate or wrong at the edges.

``log1p``, and ``asinh`` and ``atanh`` built on it, accurate near 0 on every device: IREE
lowers StableHLO's ``log_plus_one`` for SPIR-V as ``log(1 + x)``, which loses every
digit for tiny x (lavapipe gave log1p(1e-7) = 1.19e-7), and CHLO's ``asinh`` and ``atanh``
inherit it. These emitters use Goldberg's identity instead: with ``u = 1 + x`` rounded,
``log1p(x) = log(u) * (x / (u - 1))``, the quotient correcting u's rounding, and x itself
where u is 1. The same operations run on every device, so the bound is the device's log's.

``expm1`` by Kahan's identity, the mirror of Goldberg's: with ``u = exp(x)`` rounded,
``expm1(x) = (u - 1) * (x / log(u))`` (llvm-cpu's float64 expm1 was exp(x) - 1: 179,369 ulp
off at 1e-6), and ``sinh`` on it; ``tan`` as sin / cos (lavapipe's tan of a subnormal was
1.2e-7).

``atan2`` with the C standard's values where both operands are zeros or infinities: IREE's
lowering gave NaN for atan2(inf, inf) and atan2(-0.0, 0.0) on llvm-cpu.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.intbits import const_like
from vkml.dialect.nan_bits import sign_set
from vkml.dialect.numerics import compute_dtype
from vkml.dialect.types import TensorType, Value


def log1p(b: FunctionBuilder, x: Value) -> Value:
    """log(1 + x) of a float32 or float64 value."""
    one = const_like(b, x, 1.0)
    u = b.binary("add", x, one)
    out = b.binary(
        "multiply", b.unary("log", u), b.binary("divide", x, b.binary("subtract", u, one))
    )
    out = b.select(b.compare("EQ", u, one), x, out)  # tiny x (and -0.0 kept)
    return b.select(b.compare("EQ", u, const_like(b, x, math.inf)), u, out)  # log(inf) * inf / inf


def _odd(b: FunctionBuilder, x: Value, magnitude: Value) -> Value:
    """``magnitude`` (f(|x|) of an odd f) with x's sign; ±0 and NaN as x."""
    signed = b.select(
        b.compare("LT", x, const_like(b, x, 0.0)), b.unary("negate", magnitude), magnitude
    )
    return b.select(b.compare("EQ", x, const_like(b, x, 0.0)), x, signed)


def emit_log1p(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    return b.convert(log1p(b, x), out.dtype)


def emit_asinh(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``log1p(a + a*a / (1 + sqrt(1 + a*a)))`` of ``a = |x|``, and ``log(a) + log(2)`` where
    a*a would swamp 1 (a above 2**(mantissa/2 + 1)), signed as x."""
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    a = b.unary("abs", x)
    one = const_like(b, x, 1.0)
    square = b.binary("multiply", a, a)
    root = b.binary("add", one, b.unary("sqrt", b.binary("add", one, square)))
    small = log1p(b, b.binary("add", a, b.binary("divide", square, root)))
    large = b.binary("add", b.unary("log", a), const_like(b, x, math.log(2.0)))
    bits = np.finfo(x.dtype.numpy).nmant
    big = b.compare("GT", a, const_like(b, x, 2.0 ** (bits // 2 + 1)))
    return b.convert(_odd(b, x, b.select(big, large, small)), out.dtype)


def emit_atanh(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``0.5 * log1p(2a / (1 - a))`` of ``a = |x|``, signed as x (inf at 1, NaN above)."""
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    a = b.unary("abs", x)
    ratio = b.binary(
        "divide", b.binary("add", a, a), b.binary("subtract", const_like(b, x, 1.0), a)
    )
    magnitude = b.binary("multiply", log1p(b, ratio), const_like(b, x, 0.5))
    return b.convert(_odd(b, x, magnitude), out.dtype)


def emit_atan2(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    cdt = compute_dtype(out.dtype)
    y, x = (b.prepare(v, out.shape, cdt) for v in xs)
    angle = b.binary("atan2", y, x)
    zero, inf = const_like(b, x, 0.0), const_like(b, x, math.inf)
    y_negative = sign_set(b, y)

    def signed(magnitude: Value) -> Value:  # with y's sign
        return b.select(y_negative, b.unary("negate", magnitude), magnitude)

    # both zero: y itself toward +x (±0), ±pi toward -x (-0.0 included)
    zeros = b.binary("and", b.compare("EQ", y, zero), b.compare("EQ", x, zero))
    at_zeros = b.select(sign_set(b, x), signed(const_like(b, x, math.pi)), y)
    # both infinite: ±pi/4 toward +inf, ±3pi/4 toward -inf
    infs = b.binary(
        "and", b.compare("EQ", b.unary("abs", y), inf), b.compare("EQ", b.unary("abs", x), inf)
    )
    quarter = b.select(
        b.compare("GT", x, zero), const_like(b, x, math.pi / 4), const_like(b, x, 3 * math.pi / 4)
    )
    angle = b.select(infs, signed(quarter), angle)
    return b.convert(b.select(zeros, at_zeros, angle), out.dtype)


def expm1(b: FunctionBuilder, x: Value) -> Value:
    """exp(x) - 1 of a float32 or float64 value, accurate near 0."""
    one = const_like(b, x, 1.0)
    u = b.unary("exponential", x)
    less = b.binary("subtract", u, one)
    out = b.binary("multiply", less, b.binary("divide", x, b.unary("log", u)))
    out = b.select(b.compare("EQ", less, const_like(b, x, -1.0)), less, out)  # x below -17 or -37
    out = b.select(b.compare("EQ", u, one), x, out)  # tiny x (and -0.0 kept)
    return b.select(b.compare("EQ", u, const_like(b, x, math.inf)), u, out)  # inf / inf


def emit_expm1(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    return b.convert(expm1(b, x), out.dtype)


def emit_sinh(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``(e + e / (e + 1)) / 2`` of ``e = expm1(|x|)``, signed as x; ``exp(a/2) / 2 * exp(a/2)``
    where exp(a) alone would overflow before sinh does."""
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    a = b.unary("abs", x)
    half = const_like(b, x, 0.5)
    e = expm1(b, a)
    small = b.binary(
        "multiply",
        b.binary("add", e, b.binary("divide", e, b.binary("add", e, const_like(b, x, 1.0)))),
        half,
    )
    root = b.unary("exponential", b.binary("multiply", a, half))
    large = b.binary("multiply", b.binary("multiply", root, half), root)
    limit = math.log(float(np.finfo(x.dtype.numpy).max)) - 1.0
    magnitude = b.select(b.compare("GT", a, const_like(b, x, limit)), large, small)
    return b.convert(_odd(b, x, magnitude), out.dtype)


def emit_tan(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    return b.convert(b.binary("divide", b.unary("sine", x), b.unary("cosine", x)), out.dtype)
