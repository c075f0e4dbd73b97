"""Results of a queued call (vkml/runtime/pending.py): a Vulkan realize returns without waiting
for its call; reading a result waits for it, a later realize that reads one waits for it on
the device, and a failure on the device after realize returned is raised where a result is
read, as a vkml error that says the results are lost.

A call's predecessor is played here by a semaphore the test signals (or fails) by hand: the
result it "writes" is then known to be unfinished for as long as the test wants."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import iree.runtime as rt
import numpy as np
import pytest
from support.devices import needs_vulkan

import vkml
from vkml.errors import DeviceFaultError
from vkml.runtime import Pending, ResultView, settle
from vkml.runtime.pending import wait_fence
from vkml.runtime.queue import MAX_IN_FLIGHT

pytestmark = needs_vulkan


def _held(x: vkml.Tensor) -> rt.HalSemaphore:
    """Make ``x``'s storage look written by a call that ends when the returned semaphore is
    signalled to 1 (failed: that call failed)."""
    storage = x.node.storage
    assert isinstance(storage, ResultView)
    semaphore = x.device.session.device.create_semaphore(0)
    storage.pending = Pending(semaphore, 1, lambda: None, lambda exc: exc)
    return semaphore


def test_a_vulkan_realize_returns_before_its_call_ends_and_reading_waits() -> None:
    dev = vkml.device("vulkan:0")
    x = vkml.tensor(np.arange(8, dtype=np.float32), device=dev)
    before = (x * 3.0 + 1.0).numpy()  # compiled and loaded
    gate = _held(x)
    y = x * 3.0 + 1.0
    y.realize()  # queued behind the held input: returns at once
    call = y.node.storage.pending
    assert call is not None
    time.sleep(0.2)
    assert not call.reached()  # the device waits for the input, not the host
    gate.signal(1)
    np.testing.assert_array_equal(y.numpy(), before)
    assert call.done and y.node.storage.pending is None


def test_chained_realizes_wait_on_the_device_and_give_back_what_they_borrowed() -> None:
    dev = vkml.device("vulkan:0")
    pool = dev.session.semaphores
    x = vkml.tensor(np.ones(16, np.float32), device=dev)
    (x + 1.0).numpy()
    gate = _held(x)
    y = x
    for _ in range(5):
        y = y + 1.0
        y.realize()  # each waits, on the device, for the one before
    fence = wait_fence([y.node.storage], pool.nothing)
    assert fence is not pool.nothing and fence.timepoint_count == 1
    gate.signal(1)
    np.testing.assert_array_equal(y.numpy(), np.full(16, 6.0, np.float32))
    settle([x.node.storage])
    pool.reap()
    assert not pool._flight  # every call found done gave its semaphore back
    assert wait_fence([y.node.storage], pool.nothing) is pool.nothing


def test_a_call_that_fails_after_realize_returned_raises_where_its_result_is_read() -> None:
    dev = vkml.device("vulkan:0")
    x = vkml.tensor(np.ones(4, np.float32), device=dev)
    (x - 1.0).numpy()
    gate = _held(x)
    y = x - 1.0
    y.realize()
    gate.fail("VK_ERROR_DEVICE_LOST (injected)")
    with pytest.raises(DeviceFaultError) as info:
        y.numpy()
    message = str(info.value)
    assert message.startswith(f"vulkan:0 ({dev.report.name}) was lost while running 'main'.")
    assert "queued by an earlier realize" in message and "have no value" in message
    with pytest.raises(DeviceFaultError):  # and again: the value is lost, not recomputed
        y.numpy()
    # the device's other work goes on: new values, new semaphores
    z = vkml.tensor(np.full(4, 2.0, np.float32), device=dev)
    np.testing.assert_array_equal((z - 1.0).numpy(), np.ones(4, np.float32))
    # that realize found the failed call and let it go; synchronize still reports it, once
    with pytest.raises(DeviceFaultError, match="queued by an earlier realize"):
        dev.synchronize()
    dev.synchronize()


def test_a_module_loaded_from_an_export_waits_for_its_arguments(tmp_path: Path) -> None:
    """An exported module runs synchronously (``Program``): it reads an argument only once
    the call writing it is done."""
    dev = vkml.device("vulkan:0")
    path = tmp_path / "inc.vmfb"
    vkml.aot.export(lambda x: x + 1.0, vkml.spec((4,)), device=dev, name="inc").save(path)
    loaded = vkml.aot.load(path, device=dev)
    x = vkml.tensor(np.arange(4, dtype=np.float32), device=dev)
    gate = _held(x)
    thread = threading.Timer(0.3, lambda: gate.signal(1))
    started = time.perf_counter()
    thread.start()
    got = loaded(x)
    waited = time.perf_counter() - started
    thread.join()
    assert waited >= 0.3 and x.node.storage.pending is None
    np.testing.assert_array_equal(np.asarray(got), np.arange(4, dtype=np.float32) + 1.0)


def test_a_host_running_ahead_of_its_device_waits_once_the_queue_is_full() -> None:
    dev = vkml.device("vulkan:0")
    pool = dev.session.semaphores
    x = vkml.tensor(np.zeros(4, np.float32), device=dev)
    (x + 1.0).numpy()
    pool.reap()
    gate = _held(x)
    timer = threading.Timer(0.3, lambda: gate.signal(1))
    started = time.perf_counter()
    timer.start()
    y, most = x, 0
    for _ in range(MAX_IN_FLIGHT + 4):
        y = y + 1.0
        y.realize()
        most = max(most, len(pool._flight))
    waited = time.perf_counter() - started
    timer.join()
    assert most <= MAX_IN_FLIGHT and waited >= 0.3
    np.testing.assert_array_equal(y.numpy(), np.full(4, MAX_IN_FLIGHT + 4, np.float32))


def test_synchronize_waits_for_every_queued_call_and_raises_a_failure() -> None:
    dev = vkml.device("vulkan:0")
    x = vkml.tensor(np.ones(4, np.float32), device=dev)
    (x * 2.0).numpy()
    gate = _held(x)
    y = x * 2.0
    y.realize()
    timer = threading.Timer(0.3, lambda: gate.signal(1))
    started = time.perf_counter()
    timer.start()
    dev.synchronize()
    timer.join()
    assert time.perf_counter() - started >= 0.3 and y.node.storage.pending.done
    gate = _held(y)
    z = y * 2.0
    z.realize()
    gate.fail("VK_ERROR_DEVICE_LOST (injected)")
    with pytest.raises(DeviceFaultError, match="queued by an earlier realize"):
        dev.synchronize()
    dev.synchronize()  # the failure was raised once; nothing else is queued
    vkml.cpu.synchronize()  # a device that does not queue: nothing to wait for
