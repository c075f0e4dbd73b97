"""Making tensors: from data (uploaded once) or lazily (full, arange, linspace)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.dtypes import (
    ALL,
    bool_,
    default_float,
    default_int,
    dtype_of_scalar,
    float32,
    from_numpy,
    to_dtype,
)
from vkml.errors import DataError, DTypeError, ShapeError, UnsupportedOperatorError
from vkml.frontend.devices import Device, cpu, device as get_device
from vkml.graph.node import Node
from vkml.frontend.ops import _python, check_fits, wrap
from vkml.frontend.realize import realize_nodes
from vkml.frontend.tensor import Tensor


_NUMPY_DTYPES = {d.numpy: d for d in ALL}


def _resolve_device(device: Any) -> Device:
    return cpu if device is None else get_device(device)


def _host_array(data: Any) -> np.ndarray:
    """``data`` as a NumPy array, with a DataError naming what is wrong with it."""
    if isinstance(data, (str, bytes)):
        raise DataError(f"cannot make a tensor from {type(data).__name__} {data!r:.40}: not numeric")
    try:
        array = np.asarray(data)
    except (ValueError, TypeError) as exc:
        raise DataError(
            f"cannot make a tensor from {type(data).__name__}: {exc} (ragged nested lists "
            f"need equal lengths at each level)"
        ) from exc
    if array.dtype.kind in "OUSVcmM" and array.dtype.name != "bfloat16":
        raise DataError(
            f"cannot make a tensor from data of NumPy dtype {array.dtype} "
            f"({type(data).__name__}): vkml tensors hold bool, integer or float numbers"
        )
    return array


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor holding a copy of ``data`` (nested lists, scalars or a NumPy array).

    Python floats become float32 and Python ints int64 (as PyTorch); a NumPy array keeps
    its dtype. The data is copied to the device once, now.

    Args:
        data: numbers, nested sequences of equal lengths, a NumPy array or a Tensor.
        dtype: a vkml dtype or its name; default inferred as above.
        device: a Device or a name such as ``"cpu"``; default ``vkml.cpu``.
        requires_grad: make it a leaf that ``backward()`` stores a ``.grad`` on.
    """
    out = _tensor(data, dtype, device)
    if not requires_grad:
        return out
    return (out.detach() if out is data else out).requires_grad_()  # a new leaf, as torch


def _tensor(data: Any, dtype: Any, device: Any) -> Tensor:
    if type(data) is np.ndarray and dtype is None:
        # the common case kept short: the upload copies, so no astype copy is needed
        target = _NUMPY_DTYPES.get(data.dtype)
        if target is not None:
            dev = cpu if device is None else get_device(device)
            if dev.supports("astype", target):
                storage = dev.upload(data, target)
                return Tensor(Node("data", target, data.shape, (), (), dev, storage))
    if isinstance(data, Tensor):
        out = data.to(_resolve_device(device) if device is not None else data.device)
        return out if dtype is None else out.astype(dtype)
    dev = _resolve_device(device)
    array = _host_array(data)
    if dtype is not None:
        target = to_dtype(dtype)
    elif isinstance(data, np.ndarray) or isinstance(data, np.generic):
        target = from_numpy(array.dtype)
    elif array.dtype.kind == "f":
        target = default_float
    elif array.dtype.kind in "iu":
        target = default_int
    else:
        target = from_numpy(array.dtype)
    if not dev.supports("astype", target):
        raise UnsupportedOperatorError("tensor", target.name, dev.name)
    with np.errstate(all="ignore"):
        host = array.astype(target.numpy) if target.kind != "bool" else array != 0
    node = Node("data", target, tuple(int(s) for s in host.shape), (), (), dev, dev.upload(host, target))
    return Tensor(node)


def _shape(op: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        out = tuple(int(s) for s in shape)
    except TypeError as exc:
        raise ShapeError(f"'{op}': shape {shape!r} is not a sequence of integers") from exc
    if any(s < 0 for s in out):
        raise ShapeError(f"'{op}': negative dimension in shape {out}")
    return out


def full(
    shape: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of ``shape`` with every element ``fill_value`` (made lazily, on the device)."""
    dims = _shape("full", shape)
    target = to_dtype(dtype) if dtype is not None else dtype_of_scalar(fill_value)
    check_fits("full", fill_value, target)
    value = _python(fill_value)
    out = wrap(Node("full", target, dims, (), (("value", value),), _resolve_device(device)))
    return out.requires_grad_() if requires_grad else out


def zeros(shape: Any, dtype: Any = float32, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return full(shape, 0, to_dtype(dtype), device, requires_grad)


def ones(shape: Any, dtype: Any = float32, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (float32 unless ``dtype`` says otherwise)."""
    return full(shape, 1, to_dtype(dtype), device, requires_grad)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None) -> Tensor:
    """``start, start + step, ...`` up to (not including) ``stop``; element i is
    ``start + i * step`` computed in the dtype (int64 for integer arguments, else float32)."""
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise DTypeError(f"'arange': {name}={v!r} is not a number")
    if step == 0:
        raise ValueError("'arange': step must not be zero")
    n = max(0, math.ceil((stop - start) / step))
    if dtype is not None:
        target = to_dtype(dtype)
    elif all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        target = default_int
    else:
        target = default_float
    if target is bool_:
        raise DTypeError("'arange' cannot make bool tensors")
    attrs = (("start", _python(start)), ("step", _python(step)), ("stop", None))
    return wrap(Node("arange", target, (n,), (), attrs, _resolve_device(device)))


def linspace(start: float, stop: float, num: int = 50, dtype: Any = float32, device: Any = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (the last is exact)."""
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise ValueError(f"'linspace': num={num!r} must be a non-negative integer")
    target = to_dtype(dtype)
    if not target.is_float:
        raise DTypeError(f"'linspace' makes floating-point tensors, not {target}")
    step = (float(stop) - float(start)) / (num - 1) if num > 1 else 0.0
    attrs = (("start", float(start)), ("step", step), ("stop", float(stop)))
    return wrap(Node("arange", target, (int(num),), (), attrs, _resolve_device(device)))


def copy_to(x: Tensor, device: Any) -> Tensor:
    """An explicit copy of ``x`` on ``device``: realize, read back, upload."""
    dev = _resolve_device(device)
    node = x._node
    if dev is node.device:
        return x
    host = x.numpy()
    if not dev.supports("astype", node.dtype):
        raise UnsupportedOperatorError("to", node.dtype.name, dev.name)
    return Tensor(Node("data", node.dtype, node.shape, (), (), dev, dev.upload(host, node.dtype)))


def realize(*tensors: Tensor | Sequence[Tensor]) -> None:
    """Realize several tensors in ONE invocation (they must share a device)."""
    flat: list[Tensor] = []
    for t in tensors:
        if isinstance(t, Tensor):
            flat.append(t)
        else:
            flat.extend(t)
    for t in flat:
        if not isinstance(t, Tensor):
            raise DTypeError(f"vkml.realize takes tensors, got {type(t).__name__}")
    realize_nodes([t._node for t in flat])
