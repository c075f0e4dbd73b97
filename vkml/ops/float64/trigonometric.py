"""sin, cos, tan, atan, atan2, asin and acos of float64, from correctly rounded operations.

**Reduction.** ``|x| = n * pi/2 + r`` with ``|r| <= pi/4``, exact to about 2**-130 for every
finite x, the way Payne and Hanek reduce: x = M * 2**e (M an integer below 2**53) times
2/pi = sum d_j 2**(-24(j+1)) (24-bit digits, ``constants.TWO_OVER_PI_DIGITS``) is summed in
int64 as products of 24-bit digits of M (shifted so the positions line up) and d; the
digits whose products are multiples of 8 quarter turns are skipped, so a huge x costs what a
small one does. The quarter turns' fraction becomes a pair of floats and is multiplied by
pi/2 in pairs (Dekker's product, no fused multiply-add), giving r as ``r_hi + r_lo``.

**Kernels.** sin r and cos r by their Taylor series to r**17 and r**16 (the first term left
out is below 1e-19 of the result at pi/4), with r_lo's first-order term; cos keeps the
rounding error of 1 - r**2/2. tan is their quotient. atan reduces |x| > 1 to pi/2 - atan(1/|x|),
then to the nearest eighth, atan x = atan(i/8) + atan((x - i/8) / (1 + x i/8)) with |t| <=
1/16, summed to t**15. atan2 reduces the smaller magnitude over the larger and places the
angle; asin and acos are atan2 of x and sqrt((1 - x)(1 + x)).
"""

from __future__ import annotations

import math
from typing import Any

from vkml.ops.float64.backend import Math
from vkml.ops.float64.constants import (
    ATAN_EIGHTHS,
    FLOAT32_EXPONENTS,
    FLOAT32_QUARTER_TURNS,
    HALF_PI,
    PI,
    TWO_OVER_PI_DIGITS,
    inverse_factorial,
)
from vkml.ops.float64.exponential import horner

_DIGIT = 0xFFFFFF
_PAD = 46  # zero digits before d_0: a small x reads positions above 2/pi's first digit
_DIGITS = (0,) * _PAD + TWO_OVER_PI_DIGITS
_SIN_SERIES = tuple((-1) ** k * inverse_factorial(2 * k + 1) for k in range(8, 0, -1))
_COS_SERIES = tuple((-1) ** k * inverse_factorial(2 * k) for k in range(8, 1, -1))
_ATAN_SERIES = tuple((-1) ** k / (2 * k + 1) for k in range(7, 0, -1))
_TINY = 2.0**-27  # below it sin x and tan x round to x, cos x to 1
_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's split of a float into two 26-bit halves


def _split(a: Any) -> tuple[Any, Any]:
    c = _SPLITTER * a
    high = c - (c - a)
    return high, a - high


def _split_float(a: float) -> tuple[float, float]:
    return _split(a)  # Python floats round as IEEE doubles do: the same halves


_HALF_PI_SPLIT = _split_float(HALF_PI[0])


def _times_half_pi(hi: Any, lo: Any) -> tuple[Any, Any]:
    """(hi + lo) * pi/2 as a normalized pair."""
    p = hi * HALF_PI[0]
    a_hi, a_lo = _split(hi)
    b_hi, b_lo = _HALF_PI_SPLIT
    error = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    tail = error + (hi * HALF_PI[1] + lo * HALF_PI[0])
    r_hi = p + tail
    return r_hi, tail - (r_hi - p)


def reduce_quarter_turns(m: Math, a: Any) -> tuple[Any, Any, Any]:
    """n (int64, 0..7) and r_hi + r_lo with a = n * pi/2 + r (mod 8 quarter turns), for a
    positive normal float64 a."""
    bits = m.bits(a)
    e = ((bits >> 52) & 0x7FF) - 1075  # a = M * 2**e
    mantissa = (bits & ((1 << 52) - 1)) | (1 << 52)
    u = e + (21 + 24 * 50)  # positive: // and % floor
    shift = u % 24
    g = u // 24 - 50
    # M * 2**shift in four 24-bit digits; every shift amount is in [0, 64)
    m_digits = (
        (mantissa << shift) & _DIGIT,
        (mantissa >> (24 - shift)) & _DIGIT,
        (mantissa >> (48 - shift)) & _DIGIT,
        (mantissa >> (72 - shift)) & _DIGIT,
    )
    d = [m.lookup(_DIGITS, g + (_PAD - 1 + t)) for t in range(11)]
    # a * 2/pi * 2**21 = sum_k v_k 2**(-24k), positions k < 0 being multiples of 8 turns
    v = [sum((m_digits[i] * d[k + i] for i in range(1, 4)), m_digits[0] * d[k]) for k in range(8)]
    for k in range(7, 0, -1):  # carries: every v_k (k > 0) becomes one 24-bit digit
        v[k - 1] = v[k - 1] + (v[k] >> 24)
        v[k] = v[k] & _DIGIT
    top = v[0] & _DIGIT  # 3 bits of quarter turns, 21 of fraction
    n = (top + (1 << 20)) >> 21
    fraction = top - (n << 21)
    a_part = m.to_float(fraction * (1 << 24) + v[1]) * 2.0**-45
    b_part = m.to_float((v[2] << 24) + v[3]) * 2.0**-93
    c_part = m.to_float((v[4] << 24) + v[5]) * 2.0**-141
    hi = a_part + b_part
    lo = (b_part - (hi - a_part)) + c_part
    r_hi, r_lo = _times_half_pi(hi, lo)
    return n & 7, r_hi, r_lo


def reduce_float32(m: Math, a: Any) -> tuple[Any, Any, Any]:
    """``reduce_quarter_turns`` for a float32 value a (positive, above 2**-27) held in a
    float64: a = M * 2**e with M below 2**24, and (2**e * 2/pi) mod 4 = t1 + t2 + t3 from a
    table by exponent (``constants.FLOAT32_QUARTER_TURNS``): M * t1 and M * t2 are exact, so
    the quarter turns are found with a few float64 operations instead of the int64 digits."""
    bits = m.bits(a)
    mantissa = m.to_float(((bits & ((1 << 52) - 1)) | (1 << 52)) >> 29)
    index = ((bits >> 52) & 0x7FF) - (1046 + FLOAT32_EXPONENTS.start)
    t1, t2, t3 = (m.lookup(tuple(t[i] for t in FLOAT32_QUARTER_TURNS), index) for i in range(3))
    p1 = mantissa * t1
    p1 = p1 - 4.0 * m.floor(p1 * 0.25)
    p2, p3 = mantissa * t2, mantissa * t3
    n = m.rint(p1 + p2)
    f = (p1 - n) + p2  # exact: both are multiples of 2**-52 below 1 in magnitude
    hi = f + p3
    r_hi, r_lo = _times_half_pi(hi, p3 - (hi - f))
    return m.to_int(n) & 7, r_hi, r_lo


def _sin_kernel(r: Any, r_lo: Any) -> Any:
    z = r * r
    return r + (z * r * horner(z, _SIN_SERIES) + (r_lo - (0.5 * z) * r_lo))


def _cos_kernel(r: Any, r_lo: Any) -> Any:
    z = r * r
    half = 0.5 * z
    w = 1.0 - half
    return w + (((1.0 - w) - half) + (z * z * horner(z, _COS_SERIES) - r * r_lo))


def _reduced(m: Math, x: Any, narrow: bool) -> tuple[Any, Any, Any, Any]:
    """quadrant n (0..3), sin r and cos r for |x|, and whether x is tiny or not finite;
    ``narrow``: x holds a float32 value."""
    a = m.abs(x)
    odd = (a < _TINY) | ~(a < math.inf)  # NaN included
    reduce = reduce_float32 if narrow else reduce_quarter_turns
    n, r_hi, r_lo = reduce(m, m.where(odd, m.const(1.0), a))
    return n & 3, _sin_kernel(r_hi, r_lo), _cos_kernel(r_hi, r_lo), odd


def _odd_input(m: Math, x: Any, tiny: Any) -> Any:
    """The value for a tiny x (``tiny``), an infinite one (NaN) or NaN (itself)."""
    return m.where(m.abs(x) < _TINY, tiny, m.where(x != x, x, m.const(math.nan)))


def _by_quadrant(m: Math, n: Any, values: tuple[Any, Any, Any, Any]) -> Any:
    return m.where(
        n == 0, values[0], m.where(n == 1, values[1], m.where(n == 2, values[2], values[3]))
    )


def sin(m: Math, x: Any, narrow: bool = False) -> Any:
    n, s, c, odd = _reduced(m, x, narrow)
    out = _by_quadrant(m, n, (s, c, -s, -c))
    out = m.where(x < 0.0, -out, out)
    return m.where(odd, _odd_input(m, x, x), out)


def cos(m: Math, x: Any, narrow: bool = False) -> Any:
    n, s, c, odd = _reduced(m, x, narrow)
    out = _by_quadrant(m, n, (c, -s, -c, s))
    return m.where(odd, _odd_input(m, x, m.const(1.0)), out)


def tan(m: Math, x: Any, narrow: bool = False) -> Any:
    n, s, c, odd = _reduced(m, x, narrow)
    out = m.where((n & 1) == 0, s / c, -c / s)
    out = m.where(x < 0.0, -out, out)
    return m.where(odd, _odd_input(m, x, x), out)


def _atan_unit(m: Math, u: Any) -> Any:
    """atan u for u in [0, 1] (not NaN)."""
    i = m.rint(u * 8.0)
    point = i * 0.125
    t = (u - point) / (1.0 + u * point)
    series = t + t * (t * t) * horner(t * t, _ATAN_SERIES)
    index = m.to_int(i)
    hi = m.lookup(tuple(h for h, _ in ATAN_EIGHTHS), index)
    lo = m.lookup(tuple(lo for _, lo in ATAN_EIGHTHS), index)
    return hi + (lo + series)


def _complement(angle: Any, constant: tuple[float, float]) -> Any:
    """constant - angle, the constant given as a pair."""
    return constant[0] - (angle - constant[1])


def atan(m: Math, x: Any) -> Any:
    a = m.abs(x)
    inverse = a > 1.0
    u = m.where(inverse, 1.0 / a, a)
    angle = _atan_unit(m, m.where(u == u, u, m.const(0.0)))
    angle = m.where(inverse, _complement(angle, HALF_PI), angle)
    out = m.where(x < 0.0, -angle, angle)
    return m.where((x == 0.0) | (x != x), x, out)


def atan2(m: Math, y: Any, x: Any) -> Any:
    ay, ax = m.abs(y), m.abs(x)
    steep = ay > ax
    u = m.where(steep, ax / ay, ay / ax)
    u = m.where(u == u, u, m.const(1.0))  # both zero or both infinite: set below
    angle = _atan_unit(m, u)
    angle = m.where(steep, _complement(angle, HALF_PI), angle)
    x_negative = m.bits(x) < 0  # -0.0 too
    angle = m.where(x_negative, _complement(angle, PI), angle)
    zeros = (ay == 0.0) & (ax == 0.0)
    angle = m.where(zeros, m.where(x_negative, m.const(PI[0]), m.const(0.0)), angle)
    out = m.where(m.bits(y) < 0, -angle, angle)
    return m.where(y != y, y, m.where(x != x, x, out))


def asin(m: Math, x: Any) -> Any:
    return atan2(m, x, m.sqrt((1.0 - x) * (1.0 + x)))


def acos(m: Math, x: Any) -> Any:
    return atan2(m, m.sqrt((1.0 - x) * (1.0 + x)), x)
