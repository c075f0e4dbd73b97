"""tanh, sinh, cosh, asinh, acosh, atanh and sigmoid of float64, on vkml's exp, expm1, log
and log1p (``exponential.py``), by the usual identities chosen to keep accuracy near 0 and
to avoid overflow before the result overflows:

- tanh |x| = e / (e + 2), e = expm1(2|x|); 1 above 22 (1 - tanh 22 < 2**-62);
- sinh |x| = (e + e / (e + 1)) / 2, e = expm1(|x|); cosh x = (E + 1 / E) / 2, E = exp(|x|);
  both exp(|x|/2) / 2 * exp(|x|/2) above log(max) - 1, where exp(|x|) alone overflows;
- asinh |x| = log1p(|x| + x**2 / (1 + sqrt(1 + x**2))), and log|x| + ln 2 above 2**27;
- acosh x = log1p(t + sqrt(2t + t**2)), t = x - 1, below 2; log(x + sqrt(x**2 - 1)) to
  2**27; log x + ln 2 above; NaN below 1;
- atanh |x| = log1p(2|x| / (1 - |x|)) / 2;
- sigmoid x = 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) (so a subnormal
  result is not lost to exp(-x) overflowing).
"""

from __future__ import annotations

import math
from typing import Any

from vkml.ops.float64.backend import Math
from vkml.ops.float64.constants import LN2_HI, LN2_LO
from vkml.ops.float64.exponential import exp, expm1, log, log1p

_LN2 = LN2_HI + LN2_LO
_OVERFLOWS = math.log(1.7976931348623157e308) - 1.0
_LARGE = 2.0**27  # above it 1 + x**2 is x**2 and x**2 - 1 is x**2


def _signed(m: Math, x: Any, magnitude: Any) -> Any:
    """f(|x|) of an odd f with x's sign; ±0 and NaN as x."""
    out = m.where(x < 0.0, -magnitude, magnitude)
    return m.where((x == 0.0) | (x != x), x, out)


def tanh(m: Math, x: Any) -> Any:
    a = m.abs(x)
    e = expm1(m, a + a)
    return _signed(m, x, m.where(a > 22.0, m.const(1.0), e / (e + 2.0)))


def _large_exp(m: Math, a: Any) -> Any:
    root = exp(m, a * 0.5)
    return (root * 0.5) * root


def sinh(m: Math, x: Any) -> Any:
    a = m.abs(x)
    e = expm1(m, a)
    small = (e + e / (e + 1.0)) * 0.5
    return _signed(m, x, m.where(a > _OVERFLOWS, _large_exp(m, a), small))


def cosh(m: Math, x: Any) -> Any:
    a = m.abs(x)
    big = exp(m, a)
    out = m.where(a > _OVERFLOWS, _large_exp(m, a), (big + 1.0 / big) * 0.5)
    return m.where(x != x, x, out)


def asinh(m: Math, x: Any) -> Any:
    a = m.abs(x)
    square = a * a
    small = log1p(m, a + square / (1.0 + m.sqrt(1.0 + square)))
    return _signed(m, x, m.where(a > _LARGE, log(m, a) + _LN2, small))


def acosh(m: Math, x: Any) -> Any:
    t = x - 1.0
    near = log1p(m, t + m.sqrt(t + t + t * t))
    middle = log(m, x + m.sqrt(x * x - 1.0))
    out = m.where(x < 2.0, near, m.where(x > _LARGE, log(m, x) + _LN2, middle))
    out = m.where(x < 1.0, m.const(math.nan), out)
    return m.where(x != x, x, out)


def atanh(m: Math, x: Any) -> Any:
    a = m.abs(x)
    return _signed(m, x, log1p(m, (a + a) / (1.0 - a)) * 0.5)


def sigmoid(m: Math, x: Any) -> Any:
    e = exp(m, -m.abs(x))
    out = m.where(x < 0.0, e, m.const(1.0)) / (1.0 + e)
    return m.where(x != x, x, out)
