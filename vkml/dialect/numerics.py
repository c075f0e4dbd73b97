"""The arithmetic choices the op emitters and vkml's passes share: the dtype 16-bit floats
compute in, the dtype a sum accumulates in, and maximum and minimum as compare and select
(NaN propagates, ties keep the first operand), exact on every backend."""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import Value
from vkml.dtypes import DType, float32, int64


def compute_dtype(dtype: DType) -> DType:
    """The dtype arithmetic of ``dtype`` is carried out in: float32 for the 16-bit floats."""
    return float32 if dtype.bits == 16 and dtype.is_float else dtype


def sum_accumulator(dtype: DType) -> DType:
    """The dtype a sum of ``dtype`` accumulates in."""
    if dtype.is_float:
        return compute_dtype(dtype)
    return int64


def select_max(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """``x if (x >= y or x is NaN) else y``: NaN propagates, a tie keeps ``x`` (NumPy's rule).

    Spelled as compare and select because backends lower a native maximum differently for
    signed zeros (IREE's llvm-cpu gave max(-0.0, +0.0) = -0.0 for f32 but +0.0 for f16);
    compare and select are exact everywhere.
    """
    keep = b.compare("GE", x, y)
    if x.dtype.is_float:
        keep = b.binary("or", keep, b.compare("NE", x, x))
    return b.select(keep, x, y)


def select_min(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """``x if (x <= y or x is NaN) else y`` (see ``select_max``)."""
    keep = b.compare("LE", x, y)
    if x.dtype.is_float:
        keep = b.binary("or", keep, b.compare("NE", x, x))
    return b.select(keep, x, y)
