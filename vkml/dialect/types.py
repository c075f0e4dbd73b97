"""Tensor types and literal spellings in MLIR text."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vkml.dtypes import DType


@dataclass(frozen=True, slots=True)
class TensorType:
    """A ranked tensor type: ``tensor<2x3xf32>``."""

    shape: tuple[int, ...]
    dtype: DType

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype.mlir}>"

    def with_shape(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype: DType) -> TensorType:
        return TensorType(self.shape, dtype)


@dataclass(frozen=True, slots=True)
class Value:
    """An SSA value in the function being built."""

    name: str
    type: TensorType

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> DType:
        return self.type.dtype


def literal(value: float | bool, dtype: DType) -> str:
    """The exact MLIR spelling of a scalar of ``dtype``: floats by their bit pattern."""
    if dtype.kind == "bool":
        return "true" if value else "false"
    if dtype.is_integer:
        return str(int(value))
    bits = np.array([value], dtype=np.float64).astype(dtype.numpy).view(f"u{dtype.itemsize}")
    return f"0x{int(bits[0]):0{dtype.itemsize * 2}X}"


def float_bits_f32(value: float) -> str:
    """The hexadecimal spelling of ``value`` rounded to float32."""
    return f"0x{struct.unpack('<I', struct.pack('<f', value))[0]:08X}"


def string_attr(text: str) -> str:
    """``text`` as an MLIR string attribute."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def reflection_attr(entries: Mapping[str, str]) -> str:
    """An ``iree.reflection`` dictionary of string entries (IREE keeps strings only: a bool
    comes back as '-1' and an array is dropped)."""
    inner = ", ".join(f"{key} = {string_attr(value)}" for key, value in entries.items())
    return f"iree.reflection = {{{inner}}}"
