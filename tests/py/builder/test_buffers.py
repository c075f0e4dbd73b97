"""``buffer=``: builder parameters whose arrays the graph keeps across launches, so ``g(n)``
advances a simulation ``n`` steps, bit for bit as ``n`` steps of the same function in plain
Python on the reference device; the caller's arrays never change; bad buffers are refused
naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

DEVICES = [vkml.reference, vkml.cpu]
if vkml.runtime.vulkan_loader.vulkan_device_reports():
    DEVICES.append(vkml.device("vulkan:0"))

X0 = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
V0 = np.array([0.0, 0.5, -1.0, 0.25], np.float32)


def step(x, v, dt):
    v = v - dt * x
    if (x * x).sum() > 20.0:  # a device condition: damp when the energy is high
        v = v * 0.5
    x = x + dt * v
    return x, v, (x * x).sum()


def python_steps(n: int) -> list[np.ndarray]:
    ref = vkml.reference
    x, v = vkml.tensor(X0, device=ref), vkml.tensor(V0, device=ref)
    dt = vkml.tensor(np.float32(0.25), device=ref)
    for _ in range(n):
        x, v, e = step(x, v, dt)
    return [x.numpy(), v.numpy(), e.numpy()]


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_g_of_n_advances_the_buffers_n_steps(device: vkml.Device) -> None:
    x, v = vkml.tensor(X0, device=device), vkml.tensor(V0, device=device)
    g = vkml.Graph.builder(step)(
        x, v, vkml.tensor(np.float32(0.25), device=device), buffer=("x", "v")
    )
    out = g(7)
    for got, want in zip(out, python_steps(7)):
        np.testing.assert_array_equal(got.numpy(), want)
    g(5)  # going on from where the last launch left the buffers
    for got, want in zip((g.arrays["x"], g.arrays["v"]), python_steps(12)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), X0)  # the caller's arrays are unchanged
    np.testing.assert_array_equal(v.numpy(), V0)
    g.bind(x=X0, v=V0)  # bind sets a buffer again
    for got, want in zip(g(3), python_steps(3)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_a_dict_result_feeds_buffers_by_name() -> None:
    @vkml.Graph.builder
    def count(total, step):
        return {"energy": total * 2.0, "total": total + step}

    g = count(np.float32(0.0), np.float32(1.5), buffer="total")
    assert g(4)["total"].numpy() == np.float32(6.0)
    assert g.arrays["total"].numpy() == np.float32(6.0)


def test_bad_buffers_are_refused_naming_the_parameter() -> None:
    build = vkml.Graph.builder(step)
    args = (X0, V0, np.float32(0.25))
    with pytest.raises(TypeError, match="'y', not a parameter"):
        build(*args, buffer="y")
    with pytest.raises(TypeError, match="twice"):
        build(*args, buffer=("x", "x"))
    with pytest.raises(vkml.ShapeError, match=r"'dt': the new value is float32\[4\]"):
        build(*args, buffer=("dt",))

    @vkml.Graph.builder
    def named(x):
        return {"y": x + 1.0}

    with pytest.raises(vkml.ShapeError, match="under the key 'x'"):
        named(X0, buffer="x")

    @vkml.Graph.builder
    def one(x, v):
        return x + v

    with pytest.raises(vkml.ShapeError, match="2 buffers, one value returned"):
        one(X0, V0, buffer=("x", "v"))


@pytest.mark.skipif(len(DEVICES) < 3, reason="needs a Vulkan device (make vulkan-drivers)")
def test_g_of_n_on_vulkan_queues_n_launches_and_waits_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each launch is queued behind the one before (it reads the buffers that one is still
    writing): no launch waits on the host; the result is waited for when it is read."""
    device = DEVICES[2]
    waits: list[object] = []
    real = vkml.runtime.Pending.wait

    def counted(self: vkml.runtime.Pending, spin: float = 0.0) -> None:
        waits.append(self)
        real(self, spin)

    x, v = vkml.tensor(X0, device=device), vkml.tensor(V0, device=device)
    g = vkml.Graph.builder(step)(
        x, v, vkml.tensor(np.float32(0.25), device=device), buffer=("x", "v")
    )
    g(1)
    assert g.schedule.syncs_per_launch == 0
    monkeypatch.setattr(vkml.runtime.Pending, "wait", counted)
    out = g(9)
    assert waits == []
    for got, want in zip(out, python_steps(10)):
        np.testing.assert_array_equal(got.numpy(), want)
    assert len(set(map(id, waits))) == 1  # the one call of the last launch


def test_a_launch_on_cpu_waits_for_its_call() -> None:
    x, v = vkml.tensor(X0, device=vkml.cpu), vkml.tensor(V0, device=vkml.cpu)
    g = vkml.Graph.builder(step)(x, v, vkml.tensor(np.float32(0.25)), buffer=("x", "v"))
    assert g.schedule.syncs_per_launch == 1
