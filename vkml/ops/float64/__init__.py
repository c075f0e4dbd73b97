"""vkml's float64 functions: one algorithm per function, written against ``backend.Math``
and run by the reference (NumPy) and by every compiled device (MLIR), so float64 results are
the same bits everywhere. IREE's llvm-cpu links no float64 sin, cos, tan, tanh or atan2, and
SPIR-V's extended instructions take no float64 at all; these need neither."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vkml.ops.float64 import exponential, hyperbolic, trigonometric
from vkml.ops.float64.backend import Math

Function = Callable[..., Any]

# op name -> its float64 algorithm (one float64 operand; atan2 takes two)
FUNCTIONS: dict[str, Function] = {
    "exp": exponential.exp,
    "expm1": exponential.expm1,
    "log": exponential.log,
    "log1p": exponential.log1p,
    "sin": trigonometric.sin,
    "cos": trigonometric.cos,
    "tan": trigonometric.tan,
    "asin": trigonometric.asin,
    "acos": trigonometric.acos,
    "atan": trigonometric.atan,
    "atan2": trigonometric.atan2,
    "tanh": hyperbolic.tanh,
    "sinh": hyperbolic.sinh,
    "cosh": hyperbolic.cosh,
    "asinh": hyperbolic.asinh,
    "acosh": hyperbolic.acosh,
    "atanh": hyperbolic.atanh,
    "sigmoid": hyperbolic.sigmoid,
}

__all__ = ["FUNCTIONS", "Math"]
