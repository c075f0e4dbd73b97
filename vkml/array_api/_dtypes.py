"""The Array API's data type functions: ``finfo``, ``iinfo``, ``isdtype``, ``result_type``,
``can_cast``, ``astype``, over vkml's dtypes (``docs/dtypes.md``).

vkml has the standard's ``bool``, ``int32``, ``int64``, ``uint32``, ``float32`` and
``float64``; ``float16`` and ``bfloat16`` are extra real floating types. There are no 8- or
16-bit integers, no ``uint64`` and no complex types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vkml.dtypes import DType, bool_, integer_range, promote_types, to_dtype
from vkml.errors import DTypeError
from vkml.frontend import functions
from vkml.frontend.base import TensorBase
from vkml.frontend.tensor import Tensor

# isdtype's kinds: each a test on a dtype
_KINDS = {
    "bool": lambda d: d.kind == "bool",
    "signed integer": lambda d: d.kind == "int",
    "unsigned integer": lambda d: d.kind == "uint",
    "integral": lambda d: d.kind in ("int", "uint"),
    "real floating": lambda d: d.kind == "float",
    "complex floating": lambda d: False,
    "numeric": lambda d: d.kind != "bool",
}


@dataclass(frozen=True)
class finfo_object:
    """What ``finfo`` returns: the limits of a floating-point dtype."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    """What ``iinfo`` returns: the limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: DType


def _dtype(value: Any, function: str) -> DType:
    if isinstance(value, TensorBase):
        return value.dtype
    try:
        return to_dtype(value)
    except DTypeError:
        raise DTypeError(f"'{function}' takes a dtype or a tensor, got {value!r:.60}") from None


def finfo(type: Any, /) -> finfo_object:
    """The limits of a floating-point dtype (or of a tensor's dtype)."""
    dtype = _dtype(type, "finfo")
    if not dtype.is_float:
        raise DTypeError(f"'finfo' takes a floating-point dtype, got {dtype}; use iinfo")
    info = np.finfo(dtype.numpy)
    return finfo_object(
        dtype.bits, float(info.eps), float(info.max), float(info.min),
        float(info.smallest_normal), dtype,
    )  # fmt: skip


def iinfo(type: Any, /) -> iinfo_object:
    """The limits of an integer dtype (or of a tensor's dtype)."""
    dtype = _dtype(type, "iinfo")
    if not dtype.is_integer or dtype is bool_:
        raise DTypeError(f"'iinfo' takes an integer dtype, got {dtype}; use finfo")
    low, high = integer_range(dtype)
    return iinfo_object(dtype.bits, high, low, dtype)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or a
    tuple of these."""
    if not isinstance(dtype, DType):
        raise DTypeError(f"'isdtype' takes a vkml dtype, got {dtype!r:.60}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str) and kind in _KINDS:
        return bool(_KINDS[kind](dtype))
    raise ValueError(f"'isdtype': kind={kind!r:.60} is not a dtype or one of {', '.join(_KINDS)}")


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype the standard's promotion gives its operands: tensors, dtypes and (weak)
    Python scalars."""
    dtypes = [d.dtype if isinstance(d, TensorBase) else d for d in arrays_and_dtypes]
    strong = [to_dtype(d) for d in dtypes if not isinstance(d, (bool, int, float))]
    if not strong:
        raise DTypeError("'result_type' needs at least one tensor or dtype")
    out = strong[0]
    for d in strong[1:]:
        out = _promote(out, d)
    for scalar in (d for d in dtypes if isinstance(d, (bool, int, float))):
        if isinstance(scalar, float) and not out.is_float:
            raise DTypeError(f"'result_type': a float does not promote with {out}")
        if isinstance(scalar, int) and not isinstance(scalar, bool) and out is bool_:
            raise DTypeError("'result_type': an int does not promote with bool")
    return out


def _promote(a: DType, b: DType) -> DType:
    if (a is bool_) != (b is bool_) or (a.is_float != b.is_float):
        raise DTypeError(
            f"the Array API promotes no {a} with {b} (bool, integers and floats are kept "
            f"apart); convert one with astype first"
        )
    return promote_types(a, b)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether the standard's promotion lets ``from_`` (a dtype or tensor) become ``to``."""
    source, target = _dtype(from_, "can_cast"), _dtype(to, "can_cast")
    try:
        return _promote(source, target) is target
    except DTypeError:
        return False


def astype(x: Tensor, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """``x`` converted to ``dtype`` (and moved to ``device`` when given)."""
    out = functions.astype(x, dtype)
    return out if device is None else out.to(device)
