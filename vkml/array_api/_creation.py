"""The Array API's creation functions, over ``vkml.frontend.creation``.

Tensors are immutable, so ``asarray(t)`` of a tensor with the dtype and device asked for is
``t`` itself whatever ``copy`` says: nothing can tell a copy from the original.
"""

from __future__ import annotations

from typing import Any

from vkml.devices.registry import device as resolve_device
from vkml.dtypes import bool_, default_float, to_dtype
from vkml.errors import DataError
from vkml.frontend import creation, functions
from vkml.frontend.tensor import Tensor


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
) -> Tensor:
    """``obj`` (a tensor, a NumPy array, nested sequences, a scalar, a DLPack producer) as a
    tensor. ``copy=False`` refuses where it would have to copy; ``copy=True`` always copies
    data that is not a vkml tensor."""
    target = to_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        moved = device is not None and resolve_device(device) is not obj.device
        if copy is False and (moved or (target is not None and target is not obj.dtype)):
            raise ValueError(
                "asarray(copy=False) cannot change a tensor's dtype or device without a "
                "copy; pass copy=None"
            )
        out = obj.to(device) if moved else obj
        return out if target is None else out.astype(target)
    if copy is False:
        if not hasattr(obj, "__dlpack__"):
            raise ValueError(
                f"asarray(copy=False) can share only memory a DLPack producer exports, "
                f"not a {type(obj).__name__}; pass copy=None"
            )
        try:
            shared = creation.from_dlpack(obj, device=device, copy=False)
        except BufferError as exc:  # the standard's error for a copy refused
            raise ValueError(str(exc)) from exc
        if target is not None and target is not shared.dtype:
            raise ValueError("asarray(copy=False) cannot change the dtype; pass copy=None")
        return shared
    if isinstance(obj, float) and target is None:
        target = default_float
    try:
        return creation.tensor(obj, dtype=target, device=device)
    except DataError:
        if hasattr(obj, "__dlpack__"):
            return creation.from_dlpack(obj, device=device, copy=True)
        raise


def _float_default(dtype: Any) -> Any:
    return default_float if dtype is None else dtype


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return creation.zeros(shape, _float_default(dtype), device)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return creation.ones(shape, _float_default(dtype), device)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Zeros: vkml never hands out uninitialised memory."""
    return zeros(shape, dtype=dtype, device=device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return creation.full(shape, fill_value, dtype, device)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    return creation.zeros_like(x, dtype, device)


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    return creation.ones_like(x, dtype, device)


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    return zeros_like(x, dtype=dtype, device=device)


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return creation.full_like(x, fill_value, dtype, device)


def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> Tensor:
    return creation.arange(start, stop, step, dtype, device)


def linspace(
    start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
    endpoint: bool = True,
) -> Tensor:  # fmt: skip
    target = _float_default(dtype)
    if endpoint or num == 0:
        return creation.linspace(start, stop, num, target, device)
    return creation.linspace(start, stop, num + 1, target, device)[:num]


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
    device: Any = None,
) -> Tensor:  # fmt: skip
    """Ones on the ``k``-th diagonal, zeros elsewhere."""
    return creation.eye(n_rows, n_cols, k, _float_default(dtype), device)


def _triangle(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"tril/triu need a matrix or a stack of them, got shape {x.shape}")
    n, m = x.shape[-2:]
    offset = creation.arange(m, device=x.device).reshape(1, m) - creation.arange(
        n, device=x.device
    ).reshape(n, 1)
    keep = offset <= k if lower else offset >= k
    zero = False if x.dtype is bool_ else 0
    return functions.where(keep, x, zero)


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    """``x`` with the elements above the ``k``-th diagonal zeroed."""
    return _triangle(x, k, lower=True)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    """``x`` with the elements below the ``k``-th diagonal zeroed."""
    return _triangle(x, k, lower=False)


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids of 1-d tensors (``indexing`` 'xy', Cartesian, or 'ij', matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing={indexing!r} must be 'xy' or 'ij'")
    sizes = [a.size for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) >= 2 else i
        shape = [1] * len(arrays)
        shape[axis] = a.size
        out.append(a.reshape(*shape).broadcast_to(*sizes))
    return out


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    return creation.from_dlpack(x, device=device, copy=copy)
