"""Faults on a device: an allocation the device refuses, a device lost or failing mid-invocation.

Each raises a vkml error naming the device, what was asked and the remedy; the nodes of the
failed realize stay unrealized, no counter moves, and the same device keeps working. The lost
device is simulated: the executable's VM context raises the text IREE raises for one.
"""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# the Vulkan tests' own skip mark: no Vulkan device, skipped with the way to get one
from support.devices import needs_vulkan

import vkml
from vkml.devices import memory
from vkml.errors import DeviceFaultError, DeviceMemoryError, InvocationError
from vkml.runtime.buffers import download
from vkml.runtime.executable import Executable

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("vulkan:0", id="vulkan", marks=needs_vulkan)]

# 2**38 float32 elements: 1 TiB, more than any device here holds. IREE refuses it up front
# (libc's malloc on cpu, the 2 GiB per-allocation limit on lavapipe) without touching memory.
HUGE = 2**38
# On Vulkan a result must stay below 2**31 elements to compile at all (SPIR-V indexes with 32
# bits, and the Vulkan lowering's fenced constants are broadcast to the result's shape):
# 2**30 float32 elements, 4 GiB, above lavapipe's 2 GiB per-allocation limit.
HUGE_ON = {"cpu": HUGE, "vulkan:0": 2**30}


def malloc_refuses(nbytes: int) -> bool:
    """Whether Linux refuses a ``malloc`` of ``nbytes`` outright. The default overcommit
    heuristic (mode 0) and strict accounting (mode 2) refuse more than RAM plus swap; mode 1
    grants anything, and the invocation writing it would then exhaust the machine."""
    try:
        mode = int(Path("/proc/sys/vm/overcommit_memory").read_text())
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    except (OSError, ValueError):
        return False
    kib = sum(int(info[key].split()[0]) for key in ("MemTotal", "SwapTotal"))
    return mode in (0, 2) and kib * 1024 < nbytes


# the devices where a real 1 TiB result is refused before any memory is touched
HUGE_DEVICES = [
    pytest.param(
        "cpu",
        id="cpu",
        marks=pytest.mark.skipif(
            not malloc_refuses(2**40),
            reason="this machine's malloc could grant 1 TiB (vm.overcommit_memory=1, or more "
            "than 1 TiB of RAM and swap): writing it would exhaust the machine",
        ),
    ),
    pytest.param("vulkan:0", id="vulkan", marks=needs_vulkan),
]

# A lost Vulkan device as IREE words it (status_util.c turns VK_ERROR_DEVICE_LOST into
# INTERNAL; a synchronous invocation meets it in the fence wait that ends the call). The file,
# line and trace are made up in IREE's format; vkml reads only the status and the VK_ code.
DEVICE_LOST = (
    "Error invoking function: c/runtime/src/iree/hal/drivers/vulkan/native_semaphore.cc:163: "
    "INTERNAL; VK_ERROR_DEVICE_LOST; while invoking native function hal.fence.await; "
    "while calling import; \n[ 0] bytecode module.main:408 -"
)


def counters() -> dict[str, float]:
    stats = vkml.stats()
    return {name: stats[name] for name in ("invocations", "realizes")}


def label(device: vkml.Device) -> str:
    report = getattr(device, "report", None)
    return f"{device.name} ({report.name})" if report is not None else device.name


def unrealized(*tensors: vkml.Tensor) -> bool:
    return all(not t.is_realized and t.node.storage is None for t in tensors)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


@pytest.mark.parametrize("name", HUGE_DEVICES)
def test_a_result_larger_than_the_device_raises_memory_error_naming_device_and_size(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IREE's own refusal, as vkml words it. vkml's guard refuses a result larger than the
    host's memory before compiling (test_bad_input_catalogue); here it steps aside, as where
    the OS does not say how much memory it has, so that the allocation is IREE's to refuse."""
    monkeypatch.setattr(memory, "host_memory_bytes", lambda: None)
    device = vkml.device(name)
    huge = HUGE_ON[name]
    big = vkml.full((huge,), 1.5, device=device) + 1.0
    before, peak = counters(), peak_rss_mib()
    with pytest.raises(DeviceMemoryError) as info:
        big.numpy()
    err = info.value
    assert isinstance(err, DeviceFaultError) and isinstance(err, InvocationError)
    assert isinstance(err, MemoryError)
    assert (err.device, err.status, err.nbytes) == (name, "RESOURCE_EXHAUSTED", huge * 4)
    text = str(err)
    assert text.startswith(label(device) + " ")
    assert {HUGE: "1.00 TiB (1099511627776 bytes)", 2**30: "4.00 GiB (4294967296 bytes)"}[
        huge
    ] in text
    assert "float32" in text and f"({huge},)" in text
    assert "Use a smaller batch or shape" in text
    assert "RESOURCE_EXHAUSTED" in text and "RESOURCE_EXHAUSTED" in str(err.__cause__)
    assert type(err.__cause__) is RuntimeError  # IREE's own exception, kept as the cause
    # vkml allocates a Vulkan result itself before the call (iree.abi.output); on cpu the
    # invocation allocates it, so the refusal comes out of the call
    where = "could not allocate buffer" if device.kind == "vulkan" else "Error invoking function"
    assert str(err.__cause__).startswith(where)
    assert unrealized(big)
    assert counters() == before
    # refused before any page was touched
    assert peak_rss_mib() - peak < 256


@pytest.mark.parametrize("name", HUGE_DEVICES)
def test_after_a_refused_allocation_the_device_still_runs_the_same_graph_smaller(
    name: str,
) -> None:
    device = vkml.device(name)
    big = vkml.full((HUGE_ON[name],), 1.5, device=device) + 1.0
    with pytest.raises(DeviceMemoryError):
        big.numpy()
    before = counters()
    small = vkml.full((1000,), 1.5, device=device) + 1.0
    assert np.array_equal(small.numpy(), np.full(1000, 2.5, np.float32))
    x = vkml.tensor(np.arange(4, dtype=np.float32), device=device)
    assert (x * 2.0).tolist() == [0.0, 2.0, 4.0, 6.0]
    assert counters() == {
        "invocations": before["invocations"] + 2,
        "realizes": before["realizes"] + 2,
    }
    # the failed tensor itself can be retried: it fails the same way, still unrealized
    with pytest.raises(DeviceMemoryError):
        big.numpy()
    assert unrealized(big)


@needs_vulkan
def test_uploading_more_than_a_vulkan_device_holds_names_the_device_and_shape() -> None:
    device = vkml.device("vulkan:0")
    # a broadcast view: 1 TiB to the device, 4 bytes on the host; vkml allocates the device
    # buffer before reading the host data, so the refusal costs nothing
    host = np.broadcast_to(np.float32(0), (HUGE,))
    peak = peak_rss_mib()
    with pytest.raises(DeviceMemoryError) as info:
        vkml.tensor(host, device=device)
    assert info.value.device == "vulkan:0" and info.value.nbytes == 2**40
    assert str(info.value).startswith(
        f"{label(device)} could not allocate 1.00 TiB (1099511627776 bytes) for a float32 "
        f"tensor of shape ({HUGE},). Nothing was computed or bound."
    )
    assert peak_rss_mib() - peak < 256
    assert vkml.tensor(np.ones(3, np.float32), device=device).tolist() == [1.0, 1.0, 1.0]


class _RefusingAllocator:
    def allocate_buffer_copy(self, **kwargs: Any) -> Any:
        raise RuntimeError(
            "could not allocate buffer: c/runtime/src/iree/base/allocator_libc.c:57: "
            "RESOURCE_EXHAUSTED; libc allocator failed the request"
        )


class _RefusingSession:
    driver = "local-task"
    device = None
    allocator = _RefusingAllocator()


def test_uploading_more_than_cpu_memory_names_cpu_and_the_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a real refusal needs an array larger than the machine's memory on the host first, so
    # the cpu allocator is replaced by one that answers as libc's does when it is out
    monkeypatch.setattr(type(vkml.cpu), "session", property(lambda self: _RefusingSession()))
    with pytest.raises(DeviceMemoryError) as info:
        vkml.tensor(np.ones((3, 5), np.float32))
    assert str(info.value).startswith(
        "cpu could not allocate 60 bytes for a float32 tensor of shape (3, 5). "
        "Nothing was computed or bound. Use a smaller batch or shape"
    )
    assert str(info.value).endswith("libc allocator failed the request)")
    monkeypatch.undo()
    assert vkml.tensor(np.ones((3, 5), np.float32)).numpy().sum() == 15.0


class _FailingContext:
    """Stands in for an executable's VM context: every invoke raises IREE's text."""

    def __init__(self, text: str) -> None:
        self.text, self.calls = text, 0

    def invoke(self, function: Any, args: Any, results: Any) -> None:
        self.calls += 1
        raise RuntimeError(self.text)


def fail_invocations(monkeypatch: pytest.MonkeyPatch, text: str) -> _FailingContext:
    """Every already-loaded executable's context raises ``text`` until ``monkeypatch.undo()``."""
    failing = _FailingContext(text)
    monkeypatch.setattr(Executable, "context", property(lambda self: failing))
    return failing


def graph(device: vkml.Device) -> tuple[vkml.Tensor, vkml.Tensor]:
    x = vkml.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    y = x * 2.0 + 1.0
    return y, y.sum(axis=1)


@pytest.mark.parametrize("name", DEVICES)
def test_a_lost_device_raises_fault_naming_it_and_leaves_nodes_unrealized(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = vkml.device(name)
    vkml.realize(*graph(device))  # compiled and loaded: the next realize only invokes
    y, s = graph(device)
    before = counters()
    failing = fail_invocations(monkeypatch, DEVICE_LOST)
    with pytest.raises(DeviceFaultError) as info:
        vkml.realize(y, s)
    err = info.value
    assert type(err) is DeviceFaultError
    assert (err.device, err.status) == (name, "INTERNAL")
    assert str(err).startswith(
        f"{label(device)} was lost while running 'main'. Every tensor of this realize stays "
        f"unrealized. IREE does not bring a lost device back within a process, and the contents "
        f"of tensors already on {name} are undefined"
    )
    assert "restart the process or move the work to another device" in str(err)
    assert "VK_ERROR_DEVICE_LOST" in str(err)
    assert err.__cause__ is not None and str(err.__cause__) == DEVICE_LOST
    assert failing.calls == 1
    assert unrealized(y, s)
    assert counters() == before
    # the rest of the process keeps working, and so (here, where the loss is simulated) does
    # the device: the same nodes realize with the right values
    monkeypatch.undo()
    assert vkml.tensor([1.0, 2.0]).tolist() == [1.0, 2.0]
    vkml.realize(y, s)
    assert y.tolist() == [[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]]
    assert s.tolist() == [9.0, 27.0]
    assert counters() == {
        "invocations": before["invocations"] + 1,
        "realizes": before["realizes"] + 1,
    }


@pytest.mark.parametrize("name", DEVICES)
@pytest.mark.parametrize("status", ["UNAVAILABLE", "ABORTED", "DATA_LOSS", "INTERNAL"])
def test_a_device_failing_mid_invocation_raises_fault_with_its_status(
    name: str, status: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = vkml.device(name)
    vkml.realize(*graph(device))
    y, s = graph(device)
    before = counters()
    fail_invocations(
        monkeypatch, f"Error invoking function: runtime/src/iree/hal/x.c:1: {status}; injected"
    )
    with pytest.raises(DeviceFaultError) as info:
        vkml.realize(y, s)
    assert type(info.value) is DeviceFaultError
    assert (info.value.device, info.value.status) == (name, status)
    assert str(info.value).startswith(
        f"{label(device)} failed while running 'main' (IREE status {status}). Every tensor of "
        f"this realize stays unrealized. Realize again to retry"
    )
    assert str(info.value).endswith(f"{status}; injected)")
    assert unrealized(y, s) and counters() == before
    monkeypatch.undo()
    assert s.tolist() == [9.0, 27.0]


@pytest.mark.parametrize("name", DEVICES)
def test_running_out_of_memory_inside_the_invocation_names_the_results(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = vkml.device(name)
    vkml.realize(*graph(device))
    y, s = graph(device)
    fail_invocations(
        monkeypatch,
        "Error invoking function: c/runtime/src/iree/base/allocator_libc.c:57: "
        "RESOURCE_EXHAUSTED; libc allocator failed the request; while invoking native "
        "function hal.device.queue.alloca",
    )
    with pytest.raises(DeviceMemoryError) as info:
        vkml.realize(y, s)
    assert info.value.nbytes == 6 * 4 + 2 * 4
    assert str(info.value).startswith(
        f"{label(device)} ran out of memory while running 'main', whose results take 32 bytes: "
        f"float32 (2, 3), float32 (2,). Every tensor of this realize stays unrealized."
    )
    assert unrealized(y, s)


def test_an_invocation_error_that_is_not_a_device_fault_stays_an_invocation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vkml.realize(*graph(vkml.cpu))
    y, s = graph(vkml.cpu)
    fail_invocations(
        monkeypatch, "Error invoking function: iree/vm/list.c:1: INVALID_ARGUMENT; wrong arity"
    )
    with pytest.raises(InvocationError) as info:
        vkml.realize(y, s)
    assert not isinstance(info.value, DeviceFaultError)
    assert str(info.value) == (
        "cpu failed while running 'main'. Every tensor of this realize stays unrealized. "
        "(IREE: Error invoking function: iree/vm/list.c:1: INVALID_ARGUMENT; wrong arity)"
    )
    assert unrealized(y, s)


class _LostBuffer:
    def map(self) -> Any:
        raise RuntimeError(
            "c/runtime/src/iree/hal/drivers/vulkan/vma_buffer.cc:88: INTERNAL; "
            "VK_ERROR_DEVICE_LOST; mapping buffer"
        )


class _LostView:
    shape = (2, 3)

    def get_buffer(self) -> _LostBuffer:
        return _LostBuffer()


def test_reading_a_result_from_a_lost_device_raises_fault_naming_it() -> None:
    with pytest.raises(DeviceFaultError) as info:
        download(_LostView(), vkml.float32, device="vulkan:0", physical="llvmpipe")  # type: ignore[arg-type]
    assert (info.value.device, info.value.status) == ("vulkan:0", "INTERNAL")
    assert str(info.value).startswith(
        "vulkan:0 (llvmpipe) was lost while reading a float32 tensor of shape (2, 3). "
        "Nothing was read or written."
    )
