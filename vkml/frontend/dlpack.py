"""DLPack for vkml tensors: a tensor's memory shared with NumPy, PyTorch or JAX, and theirs
with vkml, without a copy where the memory allows it (docs/interop.md).

Both directions work on nodes; ``Tensor.__dlpack__`` and ``vkml.from_dlpack`` wrap them.
vkml shares host memory only: a tensor of ``cpu`` or ``reference``, and an array on the host
that ``cpu`` can compute on in place (C-contiguous and 64-byte aligned, which IREE's CPU
buffers need). A Vulkan tensor is offered as a host copy, when the consumer asks for one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vkml.devices.memory import check_fits_memory
from vkml.devices.registry import Device
from vkml.dtypes import DType
from vkml.errors import DTypeError, UnsupportedOperatorError
from vkml.graph.node import Node
from vkml.runtime import dlpack
from vkml.runtime.dlpack import CPU

# What DLPack's type codes are called, for errors naming a dtype vkml does not have.
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque", 4: "bfloat", 5: "complex", 6: "bool"}


def export_capsule(
    node: Node, max_version: Any = None, dl_device: Any = None, copy: bool | None = None
) -> Any:
    """A DLPack capsule of the realized ``node`` (``Tensor.__dlpack__``'s arguments).

    The memory is shared when the device keeps it on the host, marked read-only for a
    consumer of DLPack 1.0 or later (an older one cannot be told); otherwise, and for
    ``copy=True``, the consumer gets a host copy.

    Raises:
        BufferError: the tensor cannot be given as asked (``copy=False`` where only a copy
            can be, a device other than the host or the tensor's own).
    """
    device = node.device
    own = device.dlpack_device()
    wanted = own if dl_device is None else (int(dl_device[0]), int(dl_device[1]))
    versioned = max_version is not None and int(max_version[0]) >= 1
    if wanted not in (own, (CPU, 0)):
        raise BufferError(
            f"a tensor on {device.name} cannot be exported to DLPack device {wanted}; vkml "
            f"gives its own memory ({own}) or a host copy ((1, 0))"
        )
    memory = None if copy else device.host_memory(node.storage, node.dtype)
    if memory is not None:
        return dlpack.export(memory, node.dtype, dlpack.READ_ONLY, versioned)
    if copy is False:
        raise BufferError(
            f"a {node.dtype.name} tensor on {device.name} can only be exported as a copy: "
            f"{device.name} keeps it in memory the host cannot share; pass copy=None or "
            f"copy=True"
        )
    if wanted != (CPU, 0):
        raise BufferError(
            f"a tensor on {device.name} lives in memory vkml does not export through DLPack; "
            f"ask for a host copy (np.from_dlpack(t, device='cpu'), or "
            f"t.__dlpack__(dl_device=(1, 0))), or move it first: t.to('cpu')"
        )
    host = device.download(node.storage, node.dtype, copy=True)
    return dlpack.export(host, node.dtype, dlpack.COPIED, versioned)


def shared_node(x: Any, device: Device, copy: bool | None) -> Node:
    """A data node of ``device`` holding the array ``x`` (any object with ``__dlpack__``):
    over ``x``'s own memory where ``device`` can compute on it and ``copy`` is not True,
    else a copy.

    Raises:
        TypeError: ``x`` does not speak DLPack.
        DTypeError: vkml has no dtype like ``x``'s.
        BufferError: ``x``'s memory is not on the host, or ``copy=False`` and it cannot be
            shared as it is.
    """
    array, dtype = _host_array(x, copy)
    if not device.supports("astype", dtype):
        raise UnsupportedOperatorError("from_dlpack", dtype.name, device.name)
    shape = tuple(int(n) for n in array.shape)
    shared = None if copy or array.size == 0 else device.share_host(array, dtype)
    if shared is not None:
        return Node("data", dtype, shape, (), (), device, shared)
    if copy is False:
        why = (
            f"{device.name} computes in memory of its own"
            if device.kind == "vulkan"
            else "it is not C-contiguous and 64-byte aligned, as IREE's CPU buffers must be"
        )
        raise BufferError(
            f"the {type(x).__name__}'s memory cannot be shared with {device.name} as it is: "
            f"{why}; pass copy=None to allow a copy"
        )
    check_fits_memory("copying DLPack data", [(shape, dtype)], device.name)
    host = array.view(np.bool_) if dtype.kind == "bool" else array
    return Node(
        "data", dtype, shape, (), (), device, device.upload(np.ascontiguousarray(host), dtype)
    )


def _host_array(x: Any, copy: bool | None) -> tuple[np.ndarray, DType]:
    """``x``'s elements on the host through DLPack (shared, or the producer's host copy
    where its memory is elsewhere) and their dtype."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"from_dlpack needs an array that speaks DLPack (a NumPy array, a torch.Tensor, "
            f"a jax.Array: an object with __dlpack__), got {type(x).__name__}; for other data "
            f"use vkml.tensor(data)"
        )
    source = tuple(x.__dlpack_device__()) if hasattr(x, "__dlpack_device__") else (CPU, 0)
    asked: dict[str, Any] = {"max_version": dlpack.VERSION, "copy": copy}
    if source[0] != CPU:
        asked["dl_device"] = (CPU, 0)
    try:
        capsule = x.__dlpack__(**asked)
    except TypeError:  # a producer older than the 2023.12 standard's keywords
        capsule = x.__dlpack__()
    array, dtype, _, where = dlpack.consume(capsule)
    if where[0] != CPU:
        raise BufferError(
            f"the {type(x).__name__} lives on DLPack device {where} and did not give a host "
            f"copy; move it to the host first (torch: x.cpu(), JAX: jax.device_get(x))"
        )
    if not isinstance(dtype, DType):
        code, bits, lanes = dtype
        name = f"{_CODE_NAMES.get(code, f'code {code}')}{bits}" + (
            f"x{lanes}" if lanes != 1 else ""
        )
        raise DTypeError(
            f"vkml has no dtype like the {type(x).__name__}'s {name}; convert it first to one "
            f"of vkml's (bool, int32, int64, uint32, float16, bfloat16, float32, float64)"
        )
    return array, dtype
