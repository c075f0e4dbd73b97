"""The Array API's elementwise functions.

Most are vkml's own ops under the standard's names; the rest are compositions of them,
whose contracts follow from their parts: ``isnan``, ``isinf``, ``isfinite``, ``signbit``,
``copysign`` and the logical functions are exact; ``hypot``, ``logaddexp``, ``log2`` and
``log10`` are within a few ulp of the reference (they round more than once).
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import bool_, float64
from vkml.errors import DTypeError
from vkml.frontend import creation, functions, op_functions, operators
from vkml.frontend.tensor import Tensor

abs = op_functions.abs
acos = op_functions.acos
acosh = op_functions.acosh
asin = op_functions.asin
asinh = op_functions.asinh
atan = op_functions.atan
atanh = op_functions.atanh
ceil = op_functions.ceil
cos = op_functions.cos
cosh = op_functions.cosh
exp = op_functions.exp
expm1 = op_functions.expm1
floor = op_functions.floor
log = op_functions.log
log1p = op_functions.log1p
negative = op_functions.negative
round = op_functions.round
sign = op_functions.sign
sin = op_functions.sin
sinh = op_functions.sinh
sqrt = op_functions.sqrt
tan = op_functions.tan
tanh = op_functions.tanh
trunc = op_functions.trunc

add = op_functions.add
atan2 = op_functions.atan2
subtract = op_functions.subtract
multiply = op_functions.multiply
divide = op_functions.divide
pow = op_functions.power
floor_divide = op_functions.floor_divide
remainder = op_functions.remainder
maximum = op_functions.maximum
minimum = op_functions.minimum
equal = op_functions.equal
not_equal = op_functions.not_equal
less = op_functions.less
less_equal = op_functions.less_equal
greater = op_functions.greater
greater_equal = op_functions.greater_equal
bitwise_left_shift = op_functions.left_shift
bitwise_right_shift = op_functions.right_shift


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:
    return x if min is None and max is None else functions.clip(x, min, max)


def conj(x: Tensor, /) -> Tensor:
    """``x`` itself: vkml's numbers are real."""
    return x


def real(x: Tensor, /) -> Tensor:
    """``x`` itself: vkml's numbers are real."""
    return x


def imag(x: Tensor, /) -> Tensor:
    """Zeros like ``x``: vkml's numbers are real."""
    return creation.full(x.shape, 0, x.dtype, x.device)


def bitwise_and(x1: Any, x2: Any, /) -> Tensor:
    return Tensor(operators.bitwise("bitwise_and", x1, x2))


def bitwise_or(x1: Any, x2: Any, /) -> Tensor:
    return Tensor(operators.bitwise("bitwise_or", x1, x2))


def bitwise_xor(x1: Any, x2: Any, /) -> Tensor:
    return Tensor(operators.bitwise("bitwise_xor", x1, x2))


def bitwise_invert(x: Tensor, /) -> Tensor:
    return Tensor(operators.invert(x))


def _bools(function: str, *xs: Any) -> None:
    for x in xs:
        if isinstance(x, Tensor) and x.dtype is not bool_:
            raise DTypeError(f"'{function}' takes bool tensors, got {x.dtype}; compare first")


def logical_and(x1: Any, x2: Any, /) -> Tensor:
    _bools("logical_and", x1, x2)
    return Tensor(operators.logical("bitwise_and", x1, x2))


def logical_or(x1: Any, x2: Any, /) -> Tensor:
    _bools("logical_or", x1, x2)
    return Tensor(operators.logical("bitwise_or", x1, x2))


def logical_xor(x1: Any, x2: Any, /) -> Tensor:
    _bools("logical_xor", x1, x2)
    return Tensor(operators.logical("bitwise_xor", x1, x2))


def logical_not(x: Tensor, /) -> Tensor:
    _bools("logical_not", x)
    return x == False


def positive(x: Tensor, /) -> Tensor:
    return +x


def square(x: Tensor, /) -> Tensor:
    return x * x


def isnan(x: Tensor, /) -> Tensor:
    """True where ``x`` is NaN (never for an integer)."""
    return functions.isnan(x)


def isinf(x: Tensor, /) -> Tensor:
    """True where ``x`` is +inf or -inf (never for an integer)."""
    return functions.isinf(x)


def isfinite(x: Tensor, /) -> Tensor:
    """True where ``x`` is neither infinite nor NaN (always for an integer)."""
    return functions.isfinite(x)


def signbit(x: Tensor, /) -> Tensor:
    """True where the sign bit of ``x`` is set: -0.0 and negative NaNs included."""
    if not x.dtype.is_float:
        return x < 0 if x.dtype.kind == "int" else _filled(x, False)
    wide = x if x.dtype.bits in (32, 64) else x.astype("float32")
    bits = functions.bitcast(wide, "int64" if wide.dtype is float64 else "int32")
    return bits < 0


def copysign(x1: Tensor, x2: Any, /) -> Tensor:
    """The magnitude of ``x1`` with the sign bit of ``x2``."""
    magnitude = abs(x1)
    return functions.where(signbit(asfloat(x2, magnitude)), -magnitude, magnitude)


def asfloat(x: Any, like: Tensor) -> Tensor:
    """``x``, a tensor or a Python number (made a tensor of ``like``'s shape and dtype)."""
    return x if isinstance(x, Tensor) else creation.full(like.shape, x, like.dtype, like.device)


def _filled(x: Tensor, value: bool) -> Tensor:
    return creation.full(x.shape, value, bool_, x.device)


def hypot(x1: Tensor, x2: Any, /) -> Tensor:
    """sqrt(x1**2 + x2**2) without overflow or underflow in between; inf where either is."""
    a, b = abs(x1), abs(asfloat(x2, x1))
    big, small = maximum(a, b), minimum(a, b)
    ratio = functions.where(big == 0, 0.0, small / big)
    out = big * sqrt(ratio * ratio + 1.0)
    return functions.where((a == math.inf) | (b == math.inf), math.inf, out)


def logaddexp(x1: Tensor, x2: Any, /) -> Tensor:
    """log(exp(x1) + exp(x2)) without overflow."""
    b = asfloat(x2, x1)
    big = maximum(x1, b)
    spread = -abs(x1 - b)
    out = big + log1p(exp(spread))
    return functions.where(x1 == b, x1 + math.log(2.0), out)


def log2(x: Tensor, /) -> Tensor:
    return log(x) * (1.0 / math.log(2.0))


def log10(x: Tensor, /) -> Tensor:
    return log(x) * (1.0 / math.log(10.0))
