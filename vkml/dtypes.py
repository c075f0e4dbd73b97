"""The dtype vocabulary: names, NumPy and MLIR spellings, and type promotion.

Promotion follows the Python Array API standard where it defines a result (within bool,
within integers, within floats). Where it leaves a case open, vkml follows PyTorch: bool
combined with a number gives that number's dtype, an integer combined with a float gives the
float, and bfloat16 with float16 gives float32. Python scalars are *weak*: they never widen
a tensor's dtype; they only pick the kind (an int tensor plus a Python float is float32).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from vkml.errors import DTypeError

__all__ = [
    "DType",
    "bfloat16",
    "bool_",
    "default_float",
    "default_int",
    "dtype_of_scalar",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "int32",
    "int64",
    "integer_range",
    "promote_types",
    "result_type_with_scalar",
    "to_dtype",
    "uint32",
]


@dataclass(frozen=True, slots=True, eq=False)
class DType:
    """One element type. There is one instance per name, so ``==`` and hashing are identity."""

    name: str
    kind: str  # "bool", "int", "uint", "float"
    bits: int
    mlir: str  # element type in MLIR text (stablehlo spelling)
    numpy: np.dtype

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    def __repr__(self) -> str:
        return f"vkml.{self.name}"

    def __str__(self) -> str:
        return self.name


bool_ = DType("bool", "bool", 1, "i1", np.dtype(np.bool_))
int32 = DType("int32", "int", 32, "i32", np.dtype(np.int32))
int64 = DType("int64", "int", 64, "i64", np.dtype(np.int64))
uint32 = DType("uint32", "uint", 32, "ui32", np.dtype(np.uint32))
float16 = DType("float16", "float", 16, "f16", np.dtype(np.float16))
bfloat16 = DType("bfloat16", "float", 16, "bf16", np.dtype(ml_dtypes.bfloat16))
float32 = DType("float32", "float", 32, "f32", np.dtype(np.float32))
float64 = DType("float64", "float", 64, "f64", np.dtype(np.float64))

ALL: tuple[DType, ...] = (bool_, int32, int64, uint32, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME["bool_"] = bool_
DTYPE_NAMES = frozenset(_BY_NAME)  # every name a dtype goes by
_BY_NUMPY = {d.numpy: d for d in ALL}

default_float = float32
default_int = int64

_FLOAT_RANK = {float16: 1, bfloat16: 1, float32: 2, float64: 3}


def to_dtype(value: object) -> DType:
    """Return the vkml dtype named by ``value`` (a DType, a name, a NumPy dtype or type)."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is not None:
            return found
    else:
        try:
            # byte order is how data is stored, not what it holds: '>f4' is float32
            found = _BY_NUMPY.get(np.dtype(value).newbyteorder("="))  # type: ignore[call-overload]
        except TypeError:
            found = None
        if found is not None:
            return found
    known = ", ".join(d.name for d in ALL)
    raise DTypeError(
        f"unsupported dtype {value!r}; vkml knows {known}: convert the data first, "
        f"e.g. np.asarray(data, np.int32) or np.asarray(data, np.float32)"
    )


def integer_range(dtype: DType) -> tuple[int, int]:
    """The smallest and largest value of an integer (or bool) dtype."""
    if dtype.kind == "bool":
        return 0, 1
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def from_numpy(dtype: np.dtype) -> DType:
    """The vkml dtype of a NumPy array's dtype (raises DTypeError for others)."""
    return to_dtype(dtype)


def promote_types(a: DType | str, b: DType | str) -> DType:
    """The dtype of a binary operation on two tensors of dtypes ``a`` and ``b`` (vkml dtypes
    or anything ``to_dtype`` takes)."""
    if not isinstance(a, DType):
        a = to_dtype(a)
    if not isinstance(b, DType):
        b = to_dtype(b)
    if a is b:
        return a
    if a.kind == "bool":
        return b
    if b.kind == "bool":
        return a
    if a.is_float or b.is_float:
        if not a.is_float:
            return b
        if not b.is_float:
            return a
        if _FLOAT_RANK[a] == _FLOAT_RANK[b]:  # float16 with bfloat16
            return float32
        return a if _FLOAT_RANK[a] > _FLOAT_RANK[b] else b
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    # signed with unsigned: the smallest signed type that holds both
    return int64


def dtype_of_scalar(value: object) -> DType:
    """The dtype a Python scalar gets when it stands alone (``vkml.tensor(3.0)``)."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return default_int
    if isinstance(value, (float, np.floating)):
        return default_float
    raise DTypeError(f"{value!r} of type {type(value).__name__} is not a number")


def result_type_with_scalar(tensor_dtype: DType, value: object) -> DType:
    """The dtype of ``tensor op scalar``: the scalar is weak and never widens the tensor."""
    if isinstance(value, (bool, np.bool_)):
        return tensor_dtype
    if isinstance(value, (int, np.integer)):
        return default_int if tensor_dtype is bool_ else tensor_dtype
    if isinstance(value, (float, np.floating)):
        return tensor_dtype if tensor_dtype.is_float else default_float
    raise DTypeError(f"{value!r} of type {type(value).__name__} is not a number")
