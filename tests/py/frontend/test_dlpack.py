"""DLPack both ways (``Tensor.__dlpack__``, ``vkml.from_dlpack``): memory shared with NumPy,
PyTorch and JAX without a copy where vkml says it is, copies where it says they are, and
errors naming the remedy elsewhere."""

from __future__ import annotations

import gc

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import torch

import vkml
from vkml.runtime import dlpack
from vkml.runtime.vulkan_loader import vulkan_device_reports

HOST_DEVICES = ["cpu", "reference"]
VULKAN = bool(vulkan_device_reports())
TORCH_DTYPES = {
    "bool": torch.bool, "int32": torch.int32, "int64": torch.int64, "uint32": torch.uint32,
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64,
}  # fmt: skip


def _address(t: vkml.Tensor) -> int:
    """Where the realized ``t`` keeps its elements."""
    vkml.realize(t)
    return int(t.device.host_memory(t.node.storage, t.dtype).ctypes.data)


def _aligned(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` whose memory starts on a 64-byte boundary, as vkml's cpu shares."""
    raw = np.empty(values.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start : start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


def _values(dtype: str, shape: tuple[int, ...] = (2, 3)) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % 2 == 0).reshape(shape)
    numpy = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    return (np.arange(n) * 3 % 7).astype(numpy).reshape(shape)


@pytest.mark.parametrize("name", HOST_DEVICES)
def test_numpy_reads_a_host_tensor_in_place_and_cannot_write_it(name: str) -> None:
    t = vkml.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=name) * 2.0
    shared = np.from_dlpack(t)
    assert shared.ctypes.data == _address(t)
    assert np.array_equal(shared, [[0, 2, 4], [6, 8, 10]])
    assert not shared.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        shared[0, 0] = 1.0
    assert t.__dlpack_device__() == (dlpack.CPU, 0)


@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
@pytest.mark.parametrize("name", HOST_DEVICES)
def test_torch_shares_a_host_tensor_of_every_dtype(name: str, dtype: str) -> None:
    values = _values(dtype)
    t = vkml.tensor(values, device=name)
    x = torch.from_dlpack(t)
    assert x.dtype == TORCH_DTYPES[dtype] and tuple(x.shape) == values.shape
    assert x.data_ptr() == _address(t)
    want = (
        torch.from_numpy(values.view(np.uint16)).view(torch.bfloat16)
        if dtype == "bfloat16"
        else torch.from_numpy(values)
    )
    assert torch.equal(x, want)


@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
@pytest.mark.parametrize("name", HOST_DEVICES)
def test_a_torch_tensor_is_shared_and_its_writes_are_seen(name: str, dtype: str) -> None:
    values = _values(dtype)
    x = (  # torch's own allocation (always 64-byte aligned)
        torch.from_numpy(values.view(np.uint16)).view(torch.bfloat16).clone()
        if dtype == "bfloat16"
        else torch.from_numpy(values).clone()
    )
    t = vkml.from_dlpack(x, device=name)
    assert t.dtype.name == dtype and t.shape == tuple(x.shape) and t.device == vkml.device(name)
    assert _address(t) == x.data_ptr()
    x[0, 0] = x[0, 1]  # the producer writes: a graph realized afterwards sees it
    again = t.numpy()
    assert again[0, 0] == again[0, 1]


def test_a_numpy_array_is_shared_when_aligned_and_copied_when_not() -> None:
    aligned = _aligned(np.arange(6, dtype=np.float32))
    t = vkml.from_dlpack(aligned)
    assert _address(t) == aligned.ctypes.data
    aligned[0] = 42.0
    assert float((t + 0.0).numpy()[0]) == 42.0
    unaligned = _aligned(np.arange(7, dtype=np.float32))[1:]
    copied = vkml.from_dlpack(unaligned)
    assert _address(copied) != unaligned.ctypes.data
    assert np.array_equal(copied.numpy(), unaligned)
    with pytest.raises(BufferError, match="64-byte aligned.*copy=None"):
        vkml.from_dlpack(unaligned, copy=False)
    assert _address(vkml.from_dlpack(aligned, copy=True)) != aligned.ctypes.data


def test_a_strided_torch_tensor_is_copied_in_its_logical_order() -> None:
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    for view in (x.T, x[:, ::2], x[1:, 1:]):
        t = vkml.from_dlpack(view)
        assert np.array_equal(t.numpy(), view.numpy())
        with pytest.raises(BufferError, match="C-contiguous"):
            vkml.from_dlpack(view, copy=False)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0)])
def test_zero_dimensional_and_empty_arrays_both_ways(shape: tuple[int, ...]) -> None:
    x = torch.zeros(shape, dtype=torch.int64) + 5
    t = vkml.from_dlpack(x)
    assert t.shape == shape and np.array_equal(t.numpy(), x.numpy())
    back = torch.from_dlpack(t * 2)
    assert tuple(back.shape) == shape and torch.equal(back, x * 2)


def test_dtypes_vkml_lacks_and_objects_without_dlpack_are_refused_by_name() -> None:
    with pytest.raises(vkml.DTypeError, match="uint8"):
        vkml.from_dlpack(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(vkml.DTypeError, match="complex64"):
        vkml.from_dlpack(np.zeros(3, np.complex64))
    with pytest.raises(TypeError, match=r"list.*vkml.tensor"):
        vkml.from_dlpack([1, 2, 3])


def test_a_capsule_is_consumed_once_and_a_legacy_consumer_shares_unflagged() -> None:
    t = vkml.tensor(np.arange(4, dtype=np.int32))
    capsule = t.__dlpack__(max_version=(1, 0))
    array, dtype, flags, device = dlpack.consume(capsule)
    assert dtype is vkml.int32 and device == (dlpack.CPU, 0)
    assert array.ctypes.data == _address(t) and flags & dlpack.READ_ONLY
    with pytest.raises(BufferError, match="consumed once"):
        dlpack.consume(capsule)
    # before DLPack 1.0 (JAX 0.10 asks so) there is no flag to say read-only: shared all the same
    legacy, _, legacy_flags, _ = dlpack.consume(t.__dlpack__())
    assert legacy.ctypes.data == _address(t) and legacy_flags == 0
    copied, _, copied_flags, _ = dlpack.consume(t.__dlpack__(max_version=(1, 0), copy=True))
    assert copied.ctypes.data != _address(t) and copied_flags & dlpack.COPIED
    assert np.array_equal(copied, [0, 1, 2, 3])


JAX_DTYPES = ["bool", "int32", "uint32", "float16", "bfloat16", "float32"]  # JAX without x64


@pytest.mark.parametrize("dtype", JAX_DTYPES)
def test_jax_shares_both_ways(dtype: str) -> None:
    t = vkml.tensor(_values(dtype))
    j = jnp.from_dlpack(t)
    assert j.unsafe_buffer_pointer() == _address(t)
    assert np.array_equal(np.asarray(j), t.numpy())
    u = vkml.from_dlpack(j + 1 if dtype != "bool" else ~j)
    assert np.array_equal(u.numpy(), np.asarray(j + 1 if dtype != "bool" else ~j))
    k = jnp.arange(8, dtype=jnp.float32)
    assert _address(vkml.from_dlpack(k)) == k.unsafe_buffer_pointer()


def test_shared_memory_outlives_the_side_that_made_it() -> None:
    t = vkml.tensor(np.arange(5, dtype=np.float64)) + 1.0
    x = torch.from_dlpack(t)
    del t
    gc.collect()
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    y = torch.arange(5, dtype=torch.float32)
    u = vkml.from_dlpack(y)
    del y
    gc.collect()
    assert (u * 2.0).numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    held = len(dlpack._exported)  # x's
    del x  # torch calls the deleter: vkml lets go of the memory
    gc.collect()
    assert len(dlpack._exported) == held - 1
    unused = vkml.tensor(np.zeros(3, np.float32)).__dlpack__(max_version=(1, 0))
    assert len(dlpack._exported) == held
    del unused  # a capsule no one consumed frees what it kept
    gc.collect()
    assert len(dlpack._exported) == held - 1


@pytest.mark.skipif(not VULKAN, reason="needs a Vulkan device (make vulkan-drivers)")
def test_a_vulkan_tensor_is_offered_as_a_host_copy_only() -> None:
    t = vkml.tensor(np.arange(4, dtype=np.float32), device="vulkan:0") * 3.0
    assert t.__dlpack_device__() == (dlpack.VULKAN, 0)
    with pytest.raises(BufferError, match=r"t\.to\('cpu'\)"):
        np.from_dlpack(t)
    assert np.array_equal(np.from_dlpack(t, device="cpu"), [0, 3, 6, 9])
    with pytest.raises(BufferError, match="copy=None"):
        t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)
    moved = vkml.from_dlpack(t)  # vkml asks for the host copy itself
    assert moved.device == vkml.cpu and np.array_equal(moved.numpy(), [0, 3, 6, 9])
    on_gpu = vkml.from_dlpack(_aligned(np.ones(3, np.float32)), device="vulkan:0")
    assert np.array_equal((on_gpu + 1.0).numpy(), [2, 2, 2])
    with pytest.raises(BufferError, match="memory of its own"):
        vkml.from_dlpack(_aligned(np.ones(3, np.float32)), device="vulkan:0", copy=False)
