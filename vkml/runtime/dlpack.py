"""DLPack capsules: host memory shared with NumPy, PyTorch, JAX and any other library that
speaks the DLPack protocol (https://dmlc.github.io/dlpack/latest/), without a copy.

``export`` wraps a NumPy array in a capsule a consumer (``np.from_dlpack``,
``torch.from_dlpack``) takes over; ``consume`` takes over a capsule a producer's
``__dlpack__`` returned and gives a NumPy array over its memory. Both speak DLPack 1.x
(``dltensor_versioned``, with the read-only flag) and the older unversioned form. The
structures are declared here with ``ctypes``; no compiled extension is needed.

Lifetimes follow the protocol. An exported capsule keeps its array (and so the memory) alive
until the consumer calls the deleter, or until the capsule is collected unconsumed. A
consumed capsule is renamed ``used_...`` and its deleter is called when the last NumPy view
over its memory goes away.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from vkml.dtypes import ALL, DType

CPU = 1  # kDLCPU
VULKAN = 7  # kDLVulkan
VERSION = (1, 0)
READ_ONLY = 1 << 0  # DLPACK_FLAG_BITMASK_READ_ONLY
COPIED = 1 << 1  # DLPACK_FLAG_BITMASK_IS_COPIED

_VERSIONED = b"dltensor_versioned"
_LEGACY = b"dltensor"
_USED = {_VERSIONED: b"used_dltensor_versioned", _LEGACY: b"used_dltensor"}

# DLDataTypeCode of each vkml dtype's kind
_CODES = {"int": 0, "uint": 1, "float": 2, "bool": 6}
_BFLOAT = 4


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):  # DLManagedTensor (unversioned)
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class _Versioned(ctypes.Structure):  # DLManagedTensorVersioned
    _fields_ = [
        ("version", _Version),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _Deleter),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _Tensor),
    ]


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# the destructor's argument is the dying capsule: read through raw pointers, never as an object
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api)
)
_raw_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api)
)

# What each exported, not yet deleted capsule keeps alive, by its struct's address.
_exported: dict[int, tuple[ctypes.Structure, Any, np.ndarray]] = {}


@_Deleter
def _delete(address: int | None) -> None:
    _exported.pop(address or 0, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule: int | None) -> None:
    """A capsule collected without a consumer taking it over deletes its tensor itself."""
    for name in (_VERSIONED, _LEGACY):
        if _raw_is_valid(capsule, name):
            _exported.pop(_raw_pointer(capsule, name) or 0, None)


def dtype_code(dtype: DType) -> tuple[int, int]:
    """DLPack's (type code, bits) of a vkml dtype."""
    code = _BFLOAT if dtype.name == "bfloat16" else _CODES[dtype.kind]
    return code, dtype.bits if dtype.kind != "bool" else 8


def dtype_of(code: int, bits: int, lanes: int) -> DType | None:
    """The vkml dtype of a DLPack type, or None when vkml has none like it."""
    if lanes != 1:
        return None
    return next((d for d in ALL if dtype_code(d) == (code, bits)), None)


def export(array: np.ndarray, dtype: DType, flags: int, versioned: bool) -> Any:
    """A capsule over ``array``'s memory, typed ``dtype`` (whose layout it must have), that
    keeps ``array`` alive until the consumer is done with it. ``versioned``: DLPack 1.x,
    carrying ``flags``; else the unversioned form, which cannot say read-only."""
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(array.ndim, 1))(*(s // array.itemsize for s in array.strides))
    managed: ctypes.Structure = _Versioned() if versioned else _Managed()
    if versioned:
        managed.version = _Version(*VERSION)
        managed.flags = flags
    code, bits = dtype_code(dtype)
    managed.dl_tensor = _Tensor(
        array.ctypes.data if array.size else None,
        _Device(CPU, 0),
        array.ndim,
        _DataType(code, bits, 1),
        shape,
        strides,
        0,
    )
    managed.deleter = _delete
    address = ctypes.addressof(managed)
    _exported[address] = (managed, (shape, strides), array)
    name = _VERSIONED if versioned else _LEGACY
    return _api.PyCapsule_New(address, name, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


class _Owner:
    """Owns a consumed DLPack tensor: calls its deleter once no array needs the memory."""

    def __init__(self, address: int, deleter: Any) -> None:
        self.address, self.deleter = address, deleter

    def __del__(self) -> None:
        if self.deleter:
            self.deleter(self.address)


def consume(capsule: Any) -> tuple[np.ndarray, DType | tuple[int, int, int], int, tuple[int, int]]:
    """Take over ``capsule``: a writable-looking NumPy array over its memory (uint8 storage
    viewed in its element layout), the tensor's vkml dtype (or DLPack's (code, bits, lanes)
    where vkml has none), its flags and its device.

    The array's memory belongs to the producer: it stays valid while the array (or a view of
    it) lives. The array is marked writable so that IREE can import it; nothing in vkml
    writes into it. For a device other than the CPU the array is empty and only the device
    and dtype are meaningful (the deleter has been called).

    Raises:
        BufferError: the capsule is not a DLPack tensor, was consumed already, or has a
            DLPack major version this module does not know.
    """
    if _api.PyCapsule_IsValid(capsule, _VERSIONED):
        name: bytes = _VERSIONED
    elif _api.PyCapsule_IsValid(capsule, _LEGACY):
        name = _LEGACY
    else:
        raise BufferError(
            f"{capsule!r} is not an unconsumed DLPack capsule (each capsule is consumed once; "
            f"call __dlpack__ again for a new one)"
        )
    address = _api.PyCapsule_GetPointer(capsule, name)
    _api.PyCapsule_SetName(capsule, _USED[name])
    managed = (_Versioned if name == _VERSIONED else _Managed).from_address(address)
    owner = _Owner(address, managed.deleter)
    flags = 0
    if name == _VERSIONED:
        if managed.version.major > VERSION[0]:
            del owner  # the deleter is the one field every major version keeps
            raise BufferError(
                f"the producer sent DLPack {managed.version.major}.{managed.version.minor}; "
                f"vkml reads DLPack {VERSION[0]}.x"
            )
        flags = int(managed.flags)
    t = managed.dl_tensor
    device = (int(t.device.device_type), int(t.device.device_id))
    code, bits, lanes = int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes)
    dtype: DType | tuple[int, int, int] = dtype_of(code, bits, lanes) or (code, bits, lanes)
    if device[0] != CPU or not isinstance(dtype, DType):
        return np.empty(0, np.uint8), dtype, flags, device
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    itemsize = (bits + 7) // 8
    strides = (
        tuple(int(t.strides[i]) * itemsize for i in range(t.ndim))
        if t.strides
        else tuple(int(np.prod(shape[i + 1 :], dtype=np.int64)) * itemsize for i in range(t.ndim))
    )
    layout = np.uint8 if dtype.kind == "bool" else dtype.numpy
    if 0 in shape:
        return np.empty(shape, layout), dtype, flags, device
    low = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
    high = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0) + itemsize
    memory = (ctypes.c_uint8 * (high - low)).from_address(int(t.data) + int(t.byte_offset) + low)
    memory._vkml_owner = owner  # type: ignore[attr-defined]  # the array's base keeps it
    array = np.ndarray(shape, dtype=layout, buffer=memoryview(memory), offset=-low, strides=strides)
    return array, dtype, flags, device
