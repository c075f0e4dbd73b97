"""exp, expm1, log and log1p of float64, from correctly rounded operations only.

exp and expm1 reduce x = k ln2 + r with |r| <= ln2 / 2 (ln 2 in two parts, the first of 32
bits, so k * LN2_HI and x - k * LN2_HI are exact), sum e**r - 1 by its Taylor series to
r**13 (the first term left out is below 4e-18 of the result) and scale by 2**k through the
exponent bits, in two steps so a subnormal result is rounded once. log splits x = 2**e * m
with m in [sqrt(1/2), sqrt(2)), and with f = m - 1 (exact) and s = f / (2 + f) sums
log(1 + f) = 2 atanh(s) = f - s * (f - R), R = 2s**2/3 + 2s**4/5 + ... to s**18.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.ops.float64.backend import Math
from vkml.ops.float64.constants import LN2_HI, LN2_LO, LOG2_E, inverse_factorial

_EXPM1_SERIES = tuple(inverse_factorial(n) for n in range(13, 1, -1))  # r**13 ... r**2
_ATANH_SERIES = tuple(2.0 / (2 * n + 3) for n in range(8, -1, -1))  # 2/19 ... 2/3
_SQRT2 = math.sqrt(2.0)
_MANTISSA = (1 << 52) - 1
# exp of anything below -746 rounds to 0 and above 710 overflows: clamping there keeps k
# within the two-step scaling's range and changes no result
_EXP_LOW, _EXP_HIGH = -746.0, 710.0


def horner(x: Any, coefficients: tuple[float, ...]) -> Any:
    """c0 * x**(n-1) + ... + c(n-1), highest power first."""
    out = coefficients[0] * x
    for c in coefficients[1:-1]:
        out = (out + c) * x
    return out + coefficients[-1]


def _power_of_two(m: Math, k: Any) -> Any:
    """2**k for an integral float64 k in [-1022, 1023]."""
    return m.from_bits((m.to_int(k) + 1023) << 52)


def scale(m: Math, y: Any, k: Any) -> Any:
    """y * 2**k for an integral float64 k in [-2044, 2046], rounded once."""
    half = m.floor(k * 0.5)
    return y * _power_of_two(m, half) * _power_of_two(m, k - half)


def _reduced(m: Math, x: Any) -> tuple[Any, Any, Any]:
    """k, r and e**r - 1 for x = k ln2 + r (NaN read as 0, x clamped to exp's range)."""
    x = m.where(x != x, m.const(0.0), x)
    x = m.where(x < _EXP_LOW, m.const(_EXP_LOW), m.where(x > _EXP_HIGH, m.const(_EXP_HIGH), x))
    k = m.rint(x * LOG2_E)
    r = (x - k * LN2_HI) - k * LN2_LO
    return k, r, r + r * r * horner(r, _EXPM1_SERIES)


def exp(m: Math, x: Any) -> Any:
    k, _, q = _reduced(m, x)
    return m.where(x != x, x, scale(m, 1.0 + q, k))


def expm1(m: Math, x: Any) -> Any:
    k, _, q = _reduced(m, x)
    near = m.abs(k) <= 56.0
    t = _power_of_two(m, m.where(near, k, m.const(0.0)))
    out = m.where(near, t * q + (t - 1.0), scale(m, 1.0 + q, k) - 1.0)
    return m.where((x == 0.0) | (x != x), x, out)  # -0.0 kept


def log(m: Math, x: Any) -> Any:
    ordinary = (x > 0.0) & (x < math.inf)
    subnormal = x < 2.0**-1022
    safe = m.where(ordinary, m.where(subnormal, x * 2.0**54, x), m.const(1.0))
    bits = m.bits(safe)
    mantissa = m.from_bits((bits & _MANTISSA) | (1023 << 52))
    high = mantissa > _SQRT2
    mantissa = m.where(high, mantissa * 0.5, mantissa)
    e = (
        m.to_float(((bits >> 52) & 0x7FF) - 1023)
        + m.where(high, m.const(1.0), m.const(0.0))
        - m.where(subnormal & ordinary, m.const(54.0), m.const(0.0))
    )
    f = mantissa - 1.0
    s = f / (2.0 + f)
    z = s * s
    body = f - s * (f - z * horner(z, _ATANH_SERIES))
    out = e * LN2_HI + (body + e * LN2_LO)
    out = m.where(x == 0.0, m.const(-math.inf), out)
    out = m.where(x < 0.0, m.const(math.nan), out)
    return m.where((x == math.inf) | (x != x), x, out)


def log1p(m: Math, x: Any) -> Any:
    """log(u) for u = 1 + x rounded, plus (x - (u - 1)) / u, the first-order term of u's
    rounding error."""
    u = 1.0 + x
    correction = (x - (u - 1.0)) / u
    out = log(m, u) + m.where((u > 0.0) & (u < math.inf), correction, m.const(0.0))
    return m.where((x == 0.0) | (x != x), x, out)
