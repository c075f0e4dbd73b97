"""Functional updates (``x.at[index].set/add/max/min/get``, ``vkml.index_add``) against
JAX's and PyTorch's on every device: host-known and device indices, repeated positions
(a fixed order: ``add``'s sums are the reference's bits on every device, ``set`` keeps the
last), gradients, and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

jnp = pytest.importorskip("jax.numpy")
torch = pytest.importorskip("torch")

DEVICES = ["reference", "cpu"] + (
    ["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else []
)
X = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 2.0
ROWS = np.array([2, 0, 2])

# name, vkml (t, d: a device tensor maker), JAX (j)
CASES: list[tuple[str, Callable[..., Any], Callable[[Any], Any]]] = [
    ("set-int", lambda t, d: t.at[0].set(-1), lambda j: j.at[0].set(-1)),
    ("set-slice-array", lambda t, d: t.at[:, 1::2].set(np.array([7.0, 8.0])), lambda j: j.at[:, 1::2].set(jnp.array([7.0, 8.0]))),
    ("add-repeated-list", lambda t, d: t.at[[0, 0, 2]].add(1.5), lambda j: j.at[jnp.array([0, 0, 2])].add(1.5)),
    ("max-repeated", lambda t, d: t.at[1, [0, 3, 0]].max(np.array([5.0, 1.0, 9.0])), lambda j: j.at[1, jnp.array([0, 3, 0])].max(jnp.array([5.0, 1.0, 9.0]))),
    ("min-mask", lambda t, d: t.at[X > 0].min(0.25), lambda j: j.at[X > 0].min(0.25)),
    ("add-device-rows", lambda t, d: t.at[d(ROWS)].add(d(np.ones((3, 4), np.float32))), lambda j: j.at[jnp.array(ROWS)].add(1.0)),
    ("max-device-rows", lambda t, d: t.at[d(ROWS)].max(np.float32(1.0)), lambda j: j.at[jnp.array(ROWS)].max(1.0)),
    ("set-device-coordinates", lambda t, d: t.at[d(np.array([0, 2])), d(np.array([1, 3]))].set(9.0), lambda j: j.at[jnp.array([0, 2]), jnp.array([1, 3])].set(9.0)),
]  # fmt: skip


# lavapipe compiles are slow: it runs one case of each path in make test (the rest in make
# test-exhaustive)
VULKAN_SLICE = ("add-repeated-list", "max-repeated", "set-device-coordinates")


def _params() -> list[Any]:
    out = []
    for case in CASES:
        for device in DEVICES:
            slow = device.startswith("vulkan") and case[0] not in VULKAN_SLICE
            marks = (pytest.mark.exhaustive,) if slow else ()
            out.append(pytest.param(device, *case, id=f"{case[0]}-{device}", marks=marks))
    return out


@pytest.mark.parametrize(("device", "name", "ours", "theirs"), _params())
def test_updates_match_jax(device: str, name: str, ours: Any, theirs: Any) -> None:
    t = vkml.tensor(X, device=device)
    got = ours(t, lambda a: vkml.tensor(a, device=device)).numpy()
    np.testing.assert_array_equal(got, np.asarray(theirs(jnp.asarray(X))))
    assert t.numpy().tobytes() == X.tobytes()  # x never changes


@pytest.mark.parametrize("device", DEVICES)
def test_set_keeps_the_last_of_repeated_positions_and_get_reads(device: str) -> None:
    t = vkml.tensor(X, device=device)
    values = vkml.tensor(np.array([[1.0], [2.0], [3.0]], np.float32), device=device)
    for rows in (ROWS, vkml.tensor(ROWS, device=device)):
        got = t.at[rows].set(values).numpy()
        np.testing.assert_array_equal(got, np.stack([[2.0] * 4, X[1], [3.0] * 4]))
    np.testing.assert_array_equal(t.at[1:, ::2].get().numpy(), X[1:, ::2])


def test_repeated_adds_give_the_reference_bits_on_every_device() -> None:
    """Many values into few positions, which float addition would round differently in
    another order: every device gives the reference's bits (the pairwise order)."""
    rng = np.random.default_rng(5)
    values = (rng.standard_normal(64) * 10.0 ** rng.integers(-6, 6, 64)).astype(np.float32)
    picks = rng.integers(0, 3, 64)
    want = None
    for device in DEVICES:
        x = vkml.zeros((3,), device=device)
        for index in (picks, vkml.tensor(picks, device=device)):
            got = x.at[index].add(vkml.tensor(values, device=device)).numpy()
            want = got if want is None else want
            assert got.tobytes() == want.tobytes(), device
    np.testing.assert_allclose(want, np.bincount(picks, values.astype(np.float64), 3), rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_index_add_matches_torch(device: str) -> None:
    t = vkml.tensor(X, device=device)
    src = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = torch.tensor(X).index_add(1, torch.tensor([3, 0]), torch.tensor(src), alpha=2)
    got = vkml.index_add(t, 1, [3, 0], vkml.tensor(src, device=device), alpha=2)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    rows = vkml.tensor(np.array([1, 1]), device=device)
    got = vkml.index_add(t, 0, rows, vkml.ones((2, 4), device=device))
    want = torch.tensor(X).index_add(0, torch.tensor([1, 1]), torch.ones(2, 4))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_gradients_flow_to_x_and_the_values() -> None:
    x = torch.tensor(X, requires_grad=True)
    u = torch.tensor([1.0, -2.0], requires_grad=True)
    at = torch.zeros(3, 4, dtype=torch.bool)
    at[0, 1] = True
    y = torch.where(at, torch.maximum(x, torch.max(u)), x)
    (y * torch.arange(12.0).reshape(3, 4)).sum().backward()
    v = vkml.tensor(X, requires_grad=True)
    w = vkml.tensor([1.0, -2.0], requires_grad=True)
    (v.at[0, [1, 1]].max(w) * vkml.arange(12.0).reshape(3, 4)).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), x.grad.numpy())
    np.testing.assert_array_equal(w.grad.numpy(), u.grad.numpy())
    s = vkml.tensor(X, requires_grad=True)
    r = vkml.tensor([5.0], requires_grad=True)
    (s.at[2, 3].set(r[0]) * 3.0).sum().backward()
    assert s.grad.numpy()[2, 3] == 0.0 and s.grad.numpy().sum() == 33.0 and r.grad.tolist() == [3.0]


def test_bad_updates_name_the_problem() -> None:
    t = vkml.tensor(X)
    with pytest.raises(vkml.IndexingError, match=r"index 5 of a tensor of shape \(3, 4\)"):
        t.at[5].set(0.0)
    with pytest.raises(vkml.ShapeError, match="broadcast"):
        t.at[0].set(np.ones(3))
    with pytest.raises(vkml.DTypeError, match=r"'at\[\].add' needs a tensor of numbers, got bool"):
        (t > 0).at[0].add(1)
    with pytest.raises(vkml.IndexingError, match="source of shape"):
        vkml.index_add(t, 1, [0, 1], vkml.ones((3, 3)))
    with pytest.raises(vkml.IndexingError, match="1-D integers"):
        vkml.index_add(t, 0, [[0]], vkml.ones((1, 4)))


@pytest.mark.parametrize("device", ["reference", "cpu"])
def test_setitem_rebinds_the_handle_to_the_functional_update(device: str) -> None:
    """``x[key] = v`` is ``x = x.at[key].set(v)`` on the same handle (the Array API's
    ``__setitem__``): NumPy's values, while tensors made from x before keep theirs."""
    x = vkml.tensor(X, device=device)
    before = x[0]
    want = X.copy()
    x[0, 1:3] = 9.0
    want[0, 1:3] = 9.0
    x[x > 2.0] = -1.0
    want[want > 2.0] = -1.0
    x[vkml.tensor(np.array([2]), device=device)] = vkml.tensor(
        np.arange(4.0, dtype=np.float32), device=device
    )
    want[[2]] = np.arange(4.0)
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal(before.numpy(), X[0])
    w = vkml.tensor(X, device=device, requires_grad=True)
    y = w * 2.0  # not a leaf: gradients flow through the update
    y[1] = 0.0
    y.sum().backward()
    assert w.grad.tolist() == [[2.0] * 4, [0.0] * 4, [2.0] * 4]
