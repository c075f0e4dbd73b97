"""The reference device's float64 functions: ``vkml.ops.float64``'s algorithms run on NumPy
arrays, so the reference performs the compiled devices' operations in their order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import DType
from vkml.ops.float64 import FUNCTIONS
from vkml.ops.references.common import Reference, cast, finish


class NumpyMath:
    """``vkml.ops.float64.backend.Math`` on NumPy float64, int64 and bool arrays."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def const(self, value: float) -> np.ndarray:
        return np.full(self.shape, value, np.float64)

    def where(self, cond: Any, on_true: Any, on_false: Any) -> Any:
        return np.where(cond, on_true, on_false)

    def floor(self, x: Any) -> Any:
        return np.floor(x)

    def rint(self, x: Any) -> Any:
        return np.rint(x)

    def sqrt(self, x: Any) -> Any:
        return np.sqrt(x)

    def abs(self, x: Any) -> Any:
        return np.abs(x)

    def to_int(self, x: Any) -> Any:
        return np.asarray(x).astype(np.int64)

    def to_float(self, i: Any) -> Any:
        return np.asarray(i).astype(np.float64)

    def bits(self, x: Any) -> Any:
        return np.asarray(x, np.float64).view(np.int64)

    def from_bits(self, i: Any) -> Any:
        return np.asarray(i, np.int64).view(np.float64)

    def lookup(self, table: tuple[int, ...] | tuple[float, ...], index: Any) -> Any:
        kind = np.int64 if isinstance(table[0], int) else np.float64
        return np.asarray(table, kind)[index]


def evaluate(name: str, *operands: np.ndarray, narrow: bool = False) -> np.ndarray:
    """Function ``name`` of float64 ``operands`` (of one shape); ``narrow``: they hold float32
    values, and the float32 reduction is used (sin, cos, tan)."""
    arrays = [np.asarray(x, np.float64) for x in operands]
    extra = {"narrow": True} if narrow else {}
    with np.errstate(all="ignore"):
        out = FUNCTIONS[name](NumpyMath(arrays[0].shape), *arrays, **extra)
    return np.asarray(out, np.float64)


def with_float64(name: str, other: Reference, narrow: bool = False) -> Reference:
    """The reference of op ``name``: vkml's float64 function for a float64 result,
    ``other`` for any other dtype; with ``narrow``, a float32 or 16-bit result is the float64
    function's rounded to float32, then to the 16-bit type (``emitters.float64.with_float64``)."""

    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        if dtype.name != "float64" and not (narrow and dtype.is_float):
            return other(xs, dtype, shape, attrs)
        operands = np.broadcast_arrays(*(cast(x, np.dtype(np.float64)) for x in xs))
        wide = evaluate(name, *operands, narrow=dtype.name != "float64")
        return finish(wide if dtype.name == "float64" else wide.astype(np.float32), dtype, shape)

    return ref
