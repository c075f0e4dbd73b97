"""Making tensors: from data (uploaded once) or lazily (full, arange, linspace)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.devices.realize import realize_nodes
from vkml.dtypes import (
    DType,
    bool_,
    default_float,
    default_int,
    dtype_of_scalar,
    float32,
    to_dtype,
)
from vkml.errors import DTypeError, ShapeError
from vkml.frontend.dlpack import shared_node
from vkml.frontend.host import (
    check_fits,
    data_node,
    python_scalar,
    resolve_device,
    shape_arg,
)
from vkml.frontend.record import tensor_node
from vkml.frontend.tensor import Tensor, wrap
from vkml.graph.node import Node


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
    out = (
        _tensor(data, dtype, device)
        if isinstance(data, Tensor)
        else Tensor(data_node(data, dtype, device))
    )
    if not requires_grad:
        return out
    return (out.detach() if out is data else out).requires_grad_()  # a new leaf, as torch


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor over the memory of ``x``, an array of another library that speaks DLPack
    (a NumPy array, a ``torch.Tensor``, a ``jax.Array``), without a copy where it can be.

    On ``cpu`` (the default) and ``reference`` the tensor shares ``x``'s memory when that is
    on the host, C-contiguous and, for ``cpu``, 64-byte aligned (PyTorch's always is). A
    write into ``x`` afterwards is then seen by the tensor and by every graph realized later
    that reads it: vkml tensors do not change, so do not write into ``x`` while the tensor is
    in use, or ask for a copy. Elsewhere (another layout, ``vulkan:N``) the data is copied.

    Args:
        x: the array.
        device: a Device or its name; default ``vkml.cpu``.
        copy: True always copies; False never does (a ``BufferError`` where sharing is not
            possible); None (default) shares where possible and copies otherwise.

    Raises:
        TypeError: ``x`` does not speak DLPack.
        DTypeError: vkml has no dtype like ``x``'s (int8, uint8, complex64, ...).
        BufferError: ``x`` is not on the host, or ``copy=False`` and it cannot be shared.
    """
    return Tensor(shared_node(x, resolve_device(device), copy))


def _tensor(data: Tensor, dtype: Any, device: Any) -> Tensor:
    out = data.to(resolve_device(device) if device is not None else data.device)
    return out if dtype is None else out.astype(dtype)


def full(
    shape: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of ``shape`` with every element ``fill_value`` (made lazily, on the device)."""
    dims = shape_arg("full", shape)
    target = to_dtype(dtype) if dtype is not None else dtype_of_scalar(fill_value)
    check_fits("full", fill_value, target, creating=True)
    value = python_scalar(fill_value)
    out = wrap(Node("full", target, dims, (), (("value", value),), resolve_device(device)))
    return out.requires_grad_() if requires_grad else out


def zeros(
    shape: Any, dtype: Any = float32, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return full(shape, 0, _dtype_arg("zeros", shape, dtype), device, requires_grad)


def ones(
    shape: Any, dtype: Any = float32, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of ones (float32 unless ``dtype`` says otherwise)."""
    return full(shape, 1, _dtype_arg("ones", shape, dtype), device, requires_grad)


def full_like(x: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of ``x``'s shape (and dtype and device, unless given) full of ``fill_value``."""
    node = tensor_node("full_like", x)
    return full(node.shape, fill_value, node.dtype if dtype is None else dtype,
                node.device if device is None else device)  # fmt: skip


def zeros_like(x: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Zeros of ``x``'s shape (and dtype and device, unless given)."""
    return full_like(tensor_node("zeros_like", x), 0, dtype, device)


def ones_like(x: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Ones of ``x``'s shape (and dtype and device, unless given)."""
    return full_like(tensor_node("ones_like", x), 1, dtype, device)


def eye(
    n: int, m: int | None = None, k: int = 0, dtype: Any = float32, device: Any = None
) -> Tensor:
    """The ``n`` x ``m`` matrix (``m`` = ``n`` unless given) with ones on diagonal ``k`` (above
    the main one where positive) and zeros elsewhere."""
    rows, cols = shape_arg("eye", (n, n if m is None else m))
    if isinstance(k, bool) or not hasattr(k, "__index__"):
        raise ShapeError(f"'eye': the diagonal k={k!r} is not an integer")
    column = arange(rows, device=device).reshape(rows, 1)
    return ((arange(cols, device=device).reshape(1, cols) - column) == int(k)).astype(dtype)


def _dtype_arg(op: str, shape: Any, dtype: Any) -> DType:
    """``dtype`` as a DType; a number there is the second dimension of a shape written
    PyTorch's way (``ones(2, 3)``), which vkml takes as one tuple."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, (bool, np.bool_)):
        dims = (*shape_arg(op, shape), int(dtype))
        raise DTypeError(
            f"'{op}': dtype={dtype!r} is a number, not a dtype; if it is the shape's next "
            f"dimension, pass the shape as one tuple: vkml.{op}({dims})"
        )
    return to_dtype(dtype)


def arange(
    start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None
) -> Tensor:
    """``start, start + step, ...`` up to (not including) ``stop``; element i is
    ``start + i * step`` computed in the dtype (int64 for integer arguments, else float32)."""
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise DTypeError(f"'arange': {name}={v!r} is not a number")
    if step == 0:
        raise ValueError("'arange': step must not be zero")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise ShapeError(
            f"'arange': start={start!r}, stop={stop!r}, step={step!r} do not give a finite "
            f"length; pass finite numbers"
        )
    n = max(0, math.ceil((stop - start) / step))
    if dtype is not None:
        target = to_dtype(dtype)
    elif all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        target = default_int
    else:
        target = default_float
    if target is bool_:
        raise DTypeError("'arange' cannot make bool tensors")
    if n:
        check_fits("arange", start, target, creating=True)
        check_fits("arange", start + (n - 1) * step, target, creating=True)  # the last one
    attrs = (("start", python_scalar(start)), ("step", python_scalar(step)), ("stop", None))
    return wrap(Node("arange", target, (n,), (), attrs, resolve_device(device)))


def linspace(
    start: float, stop: float, num: int = 50, dtype: Any = float32, device: Any = None
) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (the last is exact)."""
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise ValueError(f"'linspace': num={num!r} must be a non-negative integer")
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise DTypeError(f"'linspace': {name}={v!r:.40} is not a number")
    target = to_dtype(dtype)
    if not target.is_float:
        raise DTypeError(f"'linspace' makes floating-point tensors, not {target}")
    step = (float(stop) - float(start)) / (num - 1) if num > 1 else 0.0
    attrs = (("start", float(start)), ("step", step), ("stop", float(stop)))
    return wrap(Node("arange", target, (int(num),), (), attrs, resolve_device(device)))


def realize(*tensors: Tensor | Sequence[Tensor]) -> None:
    """Realize several tensors in ONE invocation (they must share a device)."""
    flat: list[Tensor] = []
    for t in tensors:
        if isinstance(t, Tensor):
            flat.append(t)
        elif isinstance(t, (str, bytes)) or not hasattr(t, "__iter__"):
            raise DTypeError(f"vkml.realize takes tensors, got {type(t).__name__}")
        else:
            flat.extend(t)
    for t in flat:
        if not isinstance(t, Tensor):
            raise DTypeError(f"vkml.realize takes tensors, got {type(t).__name__}")
    realize_nodes([t._node for t in flat])
