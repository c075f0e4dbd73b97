"""Moving arrays between NumPy and IREE HAL buffer views.

Every function that allocates or maps takes the device's vkml name (``device``, default the
IREE driver) and optionally the physical device's name, so that IREE refusing an allocation or
reporting a lost device becomes a ``DeviceMemoryError`` / ``DeviceFaultError`` naming both.
"""

from __future__ import annotations

import math
from typing import Any

import iree.runtime as rt
import numpy as np

from vkml.dtypes import DType
from vkml.runtime.faults import allocation_error, mapping_error
from vkml.runtime.hal import HalSession
from vkml.runtime.pending import ResultView, settle

_ELEMENT_TYPES: dict[str, rt.HalElementType] = {
    "bool": rt.HalElementType.BOOL_8,
    "int32": rt.HalElementType.SINT_32,
    "int64": rt.HalElementType.SINT_64,
    "uint32": rt.HalElementType.UINT_32,
    "float16": rt.HalElementType.FLOAT_16,
    "bfloat16": rt.HalElementType.BFLOAT_16,
    "float32": rt.HalElementType.FLOAT_32,
    "float64": rt.HalElementType.FLOAT_64,
}


def upload(
    sess: HalSession, array: np.ndarray, dtype: DType, device: str | None = None, physical: str = ""
) -> rt.HalBufferView:
    """Copy ``array`` (already of ``dtype``'s NumPy type) into a new device buffer.

    Raises:
        DeviceMemoryError: the device refused a buffer that large (nothing is bound).
    """
    if array.size == 0:
        return _empty(sess, array.shape, dtype)
    host = np.ascontiguousarray(array)  # note: makes a 0-d array 1-d
    if host.dtype.kind == "b":
        host = host.view(np.uint8)
    elif dtype.name == "bfloat16":
        host = host.view(np.uint16)
    try:
        view = sess.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL,
            allowed_usage=rt.BufferUsage.DEFAULT,
            device=sess.device,
            buffer=host,
            element_type=_ELEMENT_TYPES[dtype.name],
        )
    except RuntimeError as exc:
        raise allocation_error(exc, device or sess.driver, physical, array.shape, dtype) from exc
    if array.ndim == 0:  # the copy comes back as shape (1,): view the same buffer as a scalar
        view = rt.HalBufferView(view.get_buffer(), [], _ELEMENT_TYPES[dtype.name])
    return view


def _empty(sess: HalSession, shape: tuple[int, ...], dtype: DType) -> rt.HalBufferView:
    # IREE refuses a zero-byte copy; a one-element buffer viewed with the empty shape is valid.
    buf = sess.allocator.allocate_buffer(
        memory_type=rt.MemoryType.DEVICE_LOCAL,
        allowed_usage=rt.BufferUsage.DEFAULT,
        allocation_size=dtype.itemsize,
    )
    return rt.HalBufferView(buf, list(shape), _ELEMENT_TYPES[dtype.name])


def download(
    view: rt.HalBufferView,
    dtype: DType,
    copy: bool = True,
    device: str = "the device",
    physical: str = "",
) -> np.ndarray:
    """The contents of a device buffer view as a NumPy array of ``dtype``.

    ``copy=False`` returns a read-only array over the mapped buffer itself (it keeps the
    mapping alive): no copy and no fresh pages, which matters for large results. A buffer view
    does not know its device, so pass ``device`` for error messages to name it.
    """
    shape = tuple(view.shape)
    if 0 in shape:
        return np.zeros(shape, dtype.numpy)
    host = _mapped(view, dtype, device, physical, f"reading a {dtype.name} tensor of shape {shape}")
    if dtype.kind == "bool":
        host = host.astype(np.bool_)  # bytes to bool: a fresh array already
    elif copy:
        host = host.copy()
    if not copy:
        host.flags.writeable = False
    return host


def host_memory(view: rt.HalBufferView, dtype: DType, device: str = "the device") -> np.ndarray:
    """A read-only array over a host-visible buffer's own memory, in its layout (a bool is
    a byte, a bfloat16 ml_dtypes' bfloat16): what a DLPack consumer shares, no copy."""
    shape = tuple(view.shape)
    if 0 in shape:
        return np.zeros(shape, np.uint8 if dtype.kind == "bool" else dtype.numpy)
    host = _mapped(view, dtype, device, "", f"sharing a {dtype.name} tensor")
    host.flags.writeable = False
    return host


def _mapped(
    view: rt.HalBufferView, dtype: DType, device: str, physical: str, doing: str
) -> np.ndarray:
    """The buffer's memory mapped as an array of ``dtype`` (bools as bytes), once no queued
    call is still writing it."""
    raw_dtype = _RAW.get(dtype.name, dtype.numpy)
    settle((view,))
    try:
        host = view.get_buffer().map().asarray(tuple(view.shape), raw_dtype)
    except RuntimeError as exc:
        raise mapping_error(exc, device, physical, doing) from exc
    return host.view(dtype.numpy) if dtype.name == "bfloat16" else host


# IREE's heap buffers must start on this boundary (an import of memory that did not crashed
# the process); a host array that does is shared, one that does not is copied.
HOST_ALIGNMENT = 64


def import_host(sess: HalSession, array: np.ndarray, dtype: DType) -> rt.HalBufferView | None:
    """A buffer view over ``array``'s own memory (no copy), which must stay unchanged while
    the view is used; None when IREE cannot use that memory as it is (not C-contiguous, not
    64-byte aligned, empty). ``array`` is in ``dtype``'s layout (bools as bytes) and
    writable as far as NumPy knows: IREE only reads it."""
    if array.size == 0 or not array.flags.c_contiguous or array.ctypes.data % HOST_ALIGNMENT:
        return None
    memory = array.reshape(-1).view(np.uint8)
    buffer = sess.allocator.import_host_allocation(
        memory, rt.MemoryType.DEVICE_LOCAL | rt.MemoryType.HOST_VISIBLE, rt.BufferUsage.DEFAULT
    )
    view = _ImportedView(buffer, list(array.shape), _ELEMENT_TYPES[dtype.name])
    view.owner = buffer
    return view


class _ImportedView(rt.HalBufferView):
    """A view over imported host memory that holds the ``HalBuffer`` object IREE returned:
    IREE 3.13 keeps the memory's Python owner alive as long as that object lives, not as
    long as the buffer does, so a view over it alone read freed memory."""

    owner: rt.HalBuffer


# How each dtype is laid out in a mapped buffer when NumPy's own type cannot be used.
_RAW: dict[str, np.dtype[Any]] = {"bool": np.dtype(np.uint8), "bfloat16": np.dtype(np.uint16)}


# Memory that the device computes in and the host can map: what a Vulkan result must live in
# to be read back without a staged copy (a copy queued after an invocation waited ~4-12 ms
# on lavapipe; mapping an output buffer the invocation wrote costs microseconds).
_MAPPABLE_MEMORY = int(rt.MemoryType.DEVICE_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
_MAPPABLE_USAGE = (
    int(rt.BufferUsage.DEFAULT) | int(rt.BufferUsage.MAPPING_SCOPED)
    | int(rt.BufferUsage.MAPPING_PERSISTENT)
)  # fmt: skip


def allocate_mappable(
    sess: HalSession,
    shape: tuple[int, ...],
    dtype: DType,
    device: str | None = None,
    physical: str = "",
) -> ResultView:
    """An uninitialised device buffer of ``shape`` that the host can map, as a view a
    queued call can write (``vkml.runtime.pending``).

    Raises:
        DeviceMemoryError: the device refused a buffer that large.
    """
    size = max(1, math.prod(shape)) * dtype.itemsize
    try:
        buffer = sess.allocator.allocate_buffer(
            memory_type=_MAPPABLE_MEMORY, allowed_usage=_MAPPABLE_USAGE, allocation_size=size
        )
    except RuntimeError as exc:
        raise allocation_error(exc, device or sess.driver, physical, shape, dtype) from exc
    return ResultView(buffer, list(shape), _ELEMENT_TYPES[dtype.name])


def upload_mappable(
    sess: HalSession, array: np.ndarray, dtype: DType, device: str | None = None, physical: str = ""
) -> rt.HalBufferView:
    """Copy ``array`` into a new device buffer the host can map (read back without staging).

    The buffer is allocated before the host data is touched, so a request the device refuses
    costs no host memory either.
    """
    view = allocate_mappable(sess, tuple(array.shape), dtype, device, physical)
    if array.size:
        raw = np.ascontiguousarray(array).view(_RAW.get(dtype.name, dtype.numpy))
        try:
            mapped = view.get_buffer().map().asarray(tuple(array.shape), raw.dtype)
        except RuntimeError as exc:
            doing = f"writing a {dtype.name} tensor of shape {tuple(array.shape)}"
            raise mapping_error(exc, device or sess.driver, physical, doing) from exc
        mapped[...] = raw
    return view


# Host memory the device can copy into and the host reads at full speed (cached).
_STAGING_MEMORY = (
    int(rt.MemoryType.HOST_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
    | int(rt.MemoryType.HOST_CACHED) | int(rt.MemoryType.DEVICE_VISIBLE)
)  # fmt: skip
_STAGING_USAGE = (
    int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.MAPPING_SCOPED)
    | int(rt.BufferUsage.MAPPING_PERSISTENT)
)  # fmt: skip


def download_staged(
    sess: HalSession,
    view: rt.HalBufferView,
    dtype: DType,
    copy: bool = True,
    device: str = "the device",
    physical: str = "",
) -> np.ndarray:
    """Read a device buffer back through a host-cached staging buffer: one copy queued on
    the device, then a read of cached host memory.

    For a discrete GPU, whose host-visible device memory is uncached for the host (mapped
    over PCIe): reading 64 MiB from it directly took 3 s on an NVIDIA H200.
    """
    shape = tuple(view.shape)
    if 0 in shape:
        return np.zeros(shape, dtype.numpy)
    settle((view,))
    source = view.get_buffer()
    try:
        staging = sess.allocator.allocate_buffer(
            memory_type=_STAGING_MEMORY, allowed_usage=_STAGING_USAGE,
            allocation_size=source.byte_length(),
        )  # fmt: skip
        done = sess.device.create_semaphore(0)
        sess.device.queue_copy(source, staging, [], [(done, 1)])
        fence = rt.HalFence(1)
        fence.insert(done, 1)
        fence.wait()
    except RuntimeError as exc:
        doing = f"copying a {dtype.name} tensor of shape {shape} to the host"
        raise mapping_error(exc, device, physical, doing) from exc
    element = view.element_type
    return download(rt.HalBufferView(staging, list(shape), element), dtype, copy, device, physical)
