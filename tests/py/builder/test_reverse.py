"""``record=True`` and ``vkml.diff.reverse``: the reverse pass of a builder graph is one
compiled graph giving, bit for bit, the gradient ``vkml.grad`` gives the same function run as
plain Python (each condition decided on the host) on the reference device, through device
conditions, ``match`` and the predicated turns of a bounded loop; new arrays bound with
``bind`` need no new compile; what has no gradient is refused naming the way out."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

DEVICES = [vkml.reference, vkml.cpu]
if vkml.runtime.vulkan_loader.vulkan_device_reports():
    DEVICES.append(vkml.device("vulkan:0"))

X = np.array([[1.0, 2.0, 0.5], [-1.5, 0.25, 3.0]], np.float32)
W = np.array([0.5, -1.0, 2.0], np.float32)


def grow(x, w, k):
    y = x * w
    for _ in range(24):  # longer than a sync's turns: a device loop unless record=True
        if y.sum() > 40.0:
            break
        y = y * 1.5 + w
    if y.amax() > 12.0:
        y = y * 0.5
    match k:
        case 0:
            y = y - w
        case _:
            y = y * w
    return (y * y).sum()


def python_gradient(x: np.ndarray, w: np.ndarray, k: int) -> list[np.ndarray]:
    ref = vkml.reference
    args = [vkml.tensor(x, device=ref), vkml.tensor(w, device=ref)]
    grads = vkml.grad(lambda a, b: grow(a, b, k), argnums=(0, 1))(*args)
    return [g.numpy() for g in grads]


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_the_reverse_pass_gives_python_s_gradient_bit_for_bit(device: vkml.Device) -> None:
    builder = vkml.Graph.builder(record=True)(grow)
    g = builder(
        vkml.tensor(X, device=device), vkml.tensor(W, device=device),
        vkml.tensor(np.int64(0), device=device),
    )  # fmt: skip
    assert g.schedule.loops == 0  # every turn recorded: the trajectory the reverse walks
    for scale, k in ((1.0, 0), (0.1, 1), (4.0, 1)):  # other turns, arms and cases
        x = X * np.float32(scale)
        g.bind(x=x, k=np.int64(k))
        grads = vkml.diff.reverse(g)
        want = python_gradient(x, W, k)
        assert sorted(grads) == ["w", "x"]
        np.testing.assert_array_equal(grads["x"].numpy(), want[0], err_msg=f"x {scale} {k}")
        np.testing.assert_array_equal(grads["w"].numpy(), want[1], err_msg=f"w {scale} {k}")


def grow_while_small(x, w):
    y = x * w
    for _ in range(8):  # GradientError's own advice: 'if not condition: break'
        if not (y.sum() < 40.0 and y.amax() < 20.0):
            break
        y = y * 1.5 + w
    return (y * y).sum()


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_the_reverse_pass_goes_through_not_and_and(device: vkml.Device) -> None:
    g = vkml.Graph.builder(record=True)(grow_while_small)(
        vkml.tensor(X, device=device), vkml.tensor(W, device=device)
    )
    for scale in (1.0, 0.1):
        x = X * np.float32(scale)
        g.bind(x=x)
        got = vkml.diff.reverse(g, wrt="x")["x"].numpy()
        ref = vkml.reference
        want = vkml.grad(grow_while_small)(vkml.tensor(x, device=ref), vkml.tensor(W, device=ref))
        np.testing.assert_array_equal(got, want.numpy(), err_msg=f"scale {scale}")


def test_the_reverse_pass_compiles_once_and_runs_in_one_invocation() -> None:
    g = vkml.Graph.builder(record=True)(grow)(X, W, np.int64(1))
    vkml.diff.reverse(g, wrt="w")
    vkml.reset_stats()
    g.bind(x=X * np.float32(2.0))
    got = vkml.diff.reverse(g, wrt=["w"])["w"].numpy()
    assert vkml.stats()["compiles"] == 0 and vkml.stats()["invocations"] == 1
    np.testing.assert_array_equal(got, python_gradient(X * np.float32(2.0), W, 1)[1])


def test_seeds_weight_each_value_of_a_result_of_several() -> None:
    @vkml.Graph.builder(record=True)
    def pair(x, w):
        y = x * w
        if y.sum() > 0.0:
            y = y + w
        return y, (y > 1.0).sum()

    g = pair(X, W)
    seed = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = vkml.diff.reverse(g, seeds={"result": (seed, None)}, wrt="w")["w"].numpy()
    y_grad = vkml.tensor(seed)
    ref_w = vkml.tensor(W)

    def first(w: vkml.Tensor) -> vkml.Tensor:
        y = vkml.tensor(X) * w
        y = y + w if (y.sum() > 0.0).item() else y
        return (y * y_grad).sum()

    np.testing.assert_array_equal(got, vkml.grad(first)(ref_w).numpy())
    with pytest.raises(vkml.ShapeError, match="not one one-element value"):
        vkml.diff.reverse(g)
    with pytest.raises(vkml.DTypeError, match="result value 1 is int64"):
        vkml.diff.reverse(g, seeds={"result": (seed, np.int64(1))})
    with pytest.raises(vkml.ShapeError, match="1 seeds for a result of 2"):
        vkml.diff.reverse(g, seeds={"result": seed})
    with pytest.raises(vkml.ShapeError, match=r"shape \(3,\)"):
        vkml.diff.reverse(g, seeds={"result": (W, None)})


def test_what_has_no_gradient_is_refused_with_the_way_out() -> None:
    plain = vkml.Graph.builder(grow)(X, W, np.int64(0))
    with pytest.raises(vkml.GradientError, match=r"record=True"):
        vkml.diff.reverse(plain)
    g = vkml.Graph.builder(record=True)(grow)(X, W, np.int64(0))
    with pytest.raises(vkml.GradientError, match="temporary"):
        vkml.diff.reverse(g, wrt="y")
    with pytest.raises(vkml.GradientError, match="seeds="):
        vkml.diff.reverse(g, wrt="result")
    with pytest.raises(vkml.DTypeError, match="'k' is int64"):
        vkml.diff.reverse(g, wrt="k")
    with pytest.raises(vkml.GradientError, match="only 'result'"):
        vkml.diff.reverse(g, seeds={"y": 1.0})

    @vkml.Graph.builder(record=True)
    def doubling(x):
        while x.sum() < 100.0:
            x = x * 2.0
        return x.sum()

    with pytest.raises(vkml.GradientError, match="for _ in range"):
        vkml.diff.reverse(doubling(np.abs(X)))
    with pytest.raises(TypeError, match="record must be True or False"):
        vkml.Graph.builder(record=1)


def test_arrays_maps_the_parameters_and_the_result() -> None:
    g = vkml.Graph.builder(record=True)(grow)(X, W, np.int64(0))
    assert sorted(g.arrays) == ["k", "w", "x"]
    out = g()
    assert g.arrays["result"] is out
