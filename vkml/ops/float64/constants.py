"""The constants of vkml's float64 functions, computed here from their definitions with
Python's integers, so no table is copied from anywhere and each can be checked by reading.

Fixed-point numbers are integers scaled by ``2**bits``. pi comes from atan(1) and ln 2 from
atanh(1/3); atan is summed after halving its argument three times (atan x = 2 atan(x / (1 +
sqrt(1 + x*x)))), so its series converges fast. A float constant is the float nearest the
exact value (``Fraction`` to float rounds correctly), and a pair (hi, lo) holds the value to
about 106 bits.
"""

from __future__ import annotations

import math
from fractions import Fraction

_BITS = 1400  # bits of the fixed-point computations: 2/pi needs 51 * 24 = 1224 of them


def _atanh_fixed(x: int, bits: int) -> int:
    """atanh(x / 2**bits) * 2**bits for |x| well below 2**bits."""
    one = 1 << bits
    total, power, k = 0, x, 1
    while power:
        total += power // k
        power = power * x * x // (one * one)
        k += 2
    return total


def _atan_fixed(x: int, bits: int) -> int:
    """atan(x / 2**bits) * 2**bits."""
    one = 1 << bits
    for _ in range(3):  # atan x = 2 atan(x / (1 + sqrt(1 + x^2)))
        x = x * one // (one + math.isqrt(one * one + x * x))
    total, power, k, sign = 0, x, 1, 1
    while power:
        total += sign * (power // k)
        power = power * x * x // (one * one)
        k, sign = k + 2, -sign
    return total * 8


def _pair(value: Fraction) -> tuple[float, float]:
    hi = float(value)
    return hi, float(value - Fraction(hi))


_PI = 4 * _atan_fixed(1 << _BITS, _BITS)
PI = _pair(Fraction(_PI, 1 << _BITS))
HALF_PI = _pair(Fraction(_PI, 2 << _BITS))

# 2/pi = sum d_j * 2**(-24 * (j + 1)): the 24-bit digits the large reduction multiplies by
_TWO_OVER_PI = (1 << (2 * _BITS + 1)) // _PI
TWO_OVER_PI_DIGITS = tuple((_TWO_OVER_PI >> (_BITS - 24 * (j + 1))) & 0xFFFFFF for j in range(51))

# (2**e * 2/pi) mod 4 for the exponents e of float32 values above 2**-50 (x = M * 2**e, M
# an integer below 2**24), in three parts: t1 a multiple of 2**-25 and t2 of 2**-52 (27 bits
# each, so M * t1 and M * t2 are exact), t3 the rest rounded
FLOAT32_EXPONENTS = range(-50, 105)


def _quarter_turns(e: int) -> tuple[float, float, float]:
    scaled = _TWO_OVER_PI << e if e >= 0 else _TWO_OVER_PI >> -e  # 2**e * 2/pi * 2**_BITS
    value = Fraction(scaled % (4 << _BITS), 1 << _BITS)
    t1 = Fraction(math.floor(value * 2**25), 2**25)
    t2 = Fraction(math.floor((value - t1) * 2**52), 2**52)
    return float(t1), float(t2), float(value - t1 - t2)


FLOAT32_QUARTER_TURNS = tuple(_quarter_turns(e) for e in FLOAT32_EXPONENTS)

# ln 2 = 2 atanh(1/3); its high part has 32 bits, so k * LN2_HI is exact for |k| < 2**21
_LN2 = Fraction(2 * _atanh_fixed((1 << 200) // 3, 200), 1 << 200)
LN2_HI = math.floor(_LN2 * 2**32) / 2**32
LN2_LO = float(_LN2 - Fraction(LN2_HI))
LOG2_E = float(1 / _LN2)

# atan(i/8), i = 0..8, as pairs: the points the inverse tangent's argument is reduced to
ATAN_EIGHTHS = tuple(_pair(Fraction(_atan_fixed((i << 200) // 8, 200), 1 << 200)) for i in range(9))


def inverse_factorial(n: int) -> float:
    return float(Fraction(1, math.factorial(n)))
