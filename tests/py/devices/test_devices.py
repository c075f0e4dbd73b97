"""Devices: lookup, the support tables, and the superset rule reference ⊇ cpu."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.devices.registry import all_devices
from vkml.dtypes import ALL
from vkml.ops.registry import OPS


def test_device_lookup_by_name_returns_the_singletons() -> None:
    assert vkml.device("cpu") is vkml.cpu
    assert vkml.device("reference") is vkml.reference
    assert vkml.device(" CPU ") is vkml.cpu
    assert vkml.device(vkml.cpu) is vkml.cpu
    assert str(vkml.cpu) == "cpu" and repr(vkml.reference) == "vkml.device('reference')"


def test_unknown_device_lists_the_devices_present() -> None:
    with pytest.raises(vkml.DeviceError, match=r"'vulkan:7'.*cpu, reference"):
        vkml.device("vulkan:7")


def test_reference_supports_everything_any_other_device_supports() -> None:
    for device in all_devices():
        for op in OPS:
            for dtype in ALL:
                if device.supports(op, dtype):
                    assert vkml.reference.supports(op, dtype), (device.name, op, dtype.name)


def test_reference_supports_every_op_and_dtype() -> None:
    table = vkml.reference.support_table()
    assert set(table) == set(OPS)
    assert all(len(dtypes) == len(ALL) for dtypes in table.values())


def test_cpu_support_table_names_its_exclusions() -> None:
    table = vkml.cpu.support_table()
    assert "float64" not in table["remainder"] and "float32" in table["remainder"]
    assert "float64" in table["tanh"]
    assert table["add"] == tuple(d.name for d in ALL)


def test_to_copies_explicitly_and_keeps_values() -> None:
    x = vkml.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    r = x.to("reference")
    assert r.device is vkml.reference and x.device is vkml.cpu
    assert np.array_equal(r.numpy(), x.numpy())
    back = (r * 2).to(vkml.cpu)
    assert back.device is vkml.cpu
    assert np.array_equal(back.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3) * 2)
    assert x.to(vkml.cpu) is x


def test_reference_results_are_read_only_copies() -> None:
    r = vkml.tensor([1.0, 2.0], device="reference")
    out = r.numpy()
    out[0] = 99.0  # the caller's copy, not the device's storage
    assert r.numpy()[0] == 1.0


@pytest.mark.parametrize("device", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool", "int64"])
def test_numpy_without_copy_is_a_read_only_view_with_the_same_values(
    device: str, dtype: str
) -> None:
    x = vkml.tensor(np.arange(6).reshape(2, 3) % 4, dtype=dtype, device=device)
    y = (x == x).astype(dtype) if dtype == "bool" else x + x
    view = y.numpy(copy=False)
    assert np.array_equal(view, y.numpy()) and view.dtype == y.numpy().dtype
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0, 0] = 1
    assert y.numpy().flags.writeable  # the default is a fresh, writable copy


def test_best_device_without_vulkan_is_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from vkml.devices import registry as devices

    monkeypatch.setattr(devices, "_VULKAN_REPORTS", [])
    assert vkml.best_device() is vkml.cpu


def test_best_device_prefers_a_discrete_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from vkml.devices import registry as devices
    from vkml.runtime.vulkan_loader import vulkan_device_reports

    reports = vulkan_device_reports()
    if not reports:
        pytest.skip(
            "no Vulkan device to model the reports on: apt-get install libvulkan1 "
            "mesa-vulkan-drivers"
        )
    cpu_like = dataclasses.replace(reports[0], index=0, device_type="cpu")
    discrete = dataclasses.replace(reports[0], index=1, device_type="discrete")
    monkeypatch.setattr(devices, "_VULKAN_REPORTS", [cpu_like, discrete])
    monkeypatch.setitem(devices._DEVICES, "vulkan:1", devices.cpu)  # no real device 1
    assert vkml.best_device() is devices.cpu  # what "vulkan:1" resolves to here
    monkeypatch.setattr(devices, "_VULKAN_REPORTS", [cpu_like])
    monkeypatch.delitem(devices._DEVICES, "vulkan:1")
    # a Vulkan implementation on the CPU (lavapipe) never outranks vkml.cpu
    assert vkml.best_device() is vkml.cpu


def _schedule_of(t: vkml.Tensor) -> list:
    from vkml.graph.walk import toposort

    return toposort([t.node])


def test_cpu_runs_small_graphs_on_the_calling_thread_and_large_ones_on_workers() -> None:
    small = vkml.tensor(np.ones(1024, np.float32)) * 2.0 + 1.0
    large = vkml.zeros(1 << 22) * 2.0 + 1.0
    matmul = vkml.ones((256, 256)) @ vkml.ones((256, 256))  # 2^24 multiply-adds
    assert vkml.cpu._session_for(_schedule_of(small)).driver == "local-sync"
    assert vkml.cpu._session_for(_schedule_of(large)).driver == "local-task"
    assert vkml.cpu._session_for(_schedule_of(matmul)).driver == "local-task"


def test_cpu_drivers_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    a = rng.normal(size=(48, 40)).astype(np.float32)
    b = rng.normal(size=(40, 24)).astype(np.float32)

    def run() -> list[np.ndarray]:
        x, y = vkml.tensor(a), vkml.tensor(b)
        h = (x @ y).tanh() * 1.5 + x.sum(axis=1, keepdims=True).exp() * 1e-3
        outs = [h, h.softmax(axis=1), h.sum()]
        vkml.realize(*outs)
        return [t.numpy() for t in outs]

    vkml.cpu.clear_executables()
    on_sync = run()
    monkeypatch.setattr(type(vkml.cpu), "SMALL_WORK", 0)  # everything on local-task
    vkml.cpu.clear_executables()
    on_task = run()
    vkml.cpu.clear_executables()
    for got, want in zip(on_task, on_sync):
        np.testing.assert_array_equal(got, want)


def test_small_graphs_from_several_threads_give_each_thread_its_answer() -> None:
    """Small graphs run on the calling thread (local-sync): several callers at once."""
    import threading

    failures: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(40):
            a = rng.normal(size=(32, 32)).astype(np.float32)
            got = (vkml.tensor(a) * 2.0 + float(seed)).numpy()
            if not np.array_equal(got, a * np.float32(2.0) + np.float32(seed)):
                failures.append(f"thread {seed}")
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_without_vulkan_best_device_is_quiet_and_asking_for_vulkan_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import warnings

    from vkml.devices import registry as devices
    from vkml.runtime import vulkan_loader as vulkan

    def no_loader() -> None:
        raise OSError("libvulkan.so.1: cannot open shared object file")

    monkeypatch.setattr(vulkan, "_open_loader", no_loader)
    monkeypatch.setattr(vulkan, "_WARNED", set())
    monkeypatch.setattr(devices, "_VULKAN_REPORTS", None)
    monkeypatch.setattr(devices, "_DEVICES", {"cpu": vkml.cpu, "reference": vkml.reference})
    with warnings.catch_warnings():
        warnings.simplefilter("error", vulkan.VulkanWarning)  # a warning here fails the test
        assert vkml.best_device() is vkml.cpu
    with pytest.raises(vkml.DeviceError, match=r"'vulkan:0'.*no Vulkan loader.*libvulkan"):
        vkml.device("vulkan:0")
