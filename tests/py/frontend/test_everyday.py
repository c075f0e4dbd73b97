"""The everyday surface a PyTorch or NumPy user reaches for (issue 31): ``var``/``std``,
``any``/``all``, ``isnan``/``isinf``/``isfinite``, ``eye`` and ``*_like`` as ``vkml``
functions, and ``flatten``, ``ravel``, ``view``, ``clone``, ``sort``, ``argsort`` and those
as methods; checked against NumPy on every device (composites of recorded ops, so the
devices agree with the reference where those ops' contracts say bits)."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

DEVICES = ["reference", "cpu"] + (
    ["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else []
)
DATA = np.array([[1.5, -2.0, 4.0, 0.0], [0.25, np.nan, -np.inf, 3.0], [2.0, 2.0, 2.0, 2.0]],
                np.float32)  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
def test_statistics_and_tests_match_numpy(device: str) -> None:
    x = vkml.tensor(DATA, device=device)
    finite = vkml.tensor(DATA[[0, 2]], device=device)
    close = {"rtol": 1e-6, "equal_nan": True}
    np.testing.assert_allclose(vkml.var(finite).numpy(), np.var(DATA[[0, 2]]), **close)
    np.testing.assert_allclose(x.var(1).numpy(), np.var(DATA, 1), **close)
    np.testing.assert_allclose(finite.std(0, keepdims=True, ddof=1).numpy(),
                               np.std(DATA[[0, 2]], 0, keepdims=True, ddof=1), **close)  # fmt: skip
    np.testing.assert_allclose(vkml.std(finite, correction=1).numpy(),
                               np.std(DATA[[0, 2]], ddof=1), **close)  # fmt: skip
    assert np.array_equal(x.any(1).numpy(), np.any(DATA, 1))
    assert np.array_equal(vkml.all(x, 0, keepdims=True).numpy(), np.all(DATA, 0, keepdims=True))
    for name in ("isnan", "isinf", "isfinite"):
        assert np.array_equal(getattr(vkml, name)(x).numpy(), getattr(np, name)(DATA)), name
        assert np.array_equal(getattr(x, name)().numpy(), getattr(np, name)(DATA)), name
    ints = vkml.tensor(np.array([[0, 3], [-1, 0]], np.int32), device=device)
    assert ints.any(0).tolist() == [True, True] and ints.all(1).tolist() == [False, False]
    assert ints.isnan().tolist() == [[False] * 2] * 2 and ints.isfinite().numpy().all()
    empty = vkml.zeros((0, 3), device=device)
    assert empty.any(0).tolist() == [False] * 3 and vkml.all(empty).item() is True


def test_numpy_calls_reach_the_methods() -> None:
    x = vkml.tensor(DATA[[0, 2]])
    assert isinstance(np.var(x), vkml.Tensor) and isinstance(np.any(x, axis=0), vkml.Tensor)
    np.testing.assert_allclose(np.std(x, ddof=1).numpy(), np.std(DATA[[0, 2]], ddof=1), 1e-6)
    assert np.array_equal(np.all(x, axis=1).numpy(), np.all(DATA[[0, 2]], axis=1))


@pytest.mark.parametrize("device", DEVICES)
def test_creation_like_and_eye(device: str) -> None:
    x = vkml.tensor(np.zeros((2, 3), np.int32), device=device)
    assert vkml.zeros_like(x).dtype is vkml.int32 and vkml.zeros_like(x).device is x.device
    assert vkml.ones_like(x, dtype=vkml.float32).numpy().tolist() == [[1.0] * 3] * 2
    assert vkml.full_like(x, 7).tolist() == [[7] * 3] * 2
    for n, m, k in [(3, None, 0), (2, 4, 1), (4, 3, -2)]:
        got = vkml.eye(n, m, k, device=device).numpy()
        assert np.array_equal(got, np.eye(n, m, k, np.float32)), (n, m, k)


def test_methods_of_views_and_sorting() -> None:
    x = vkml.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert x.flatten().shape == (24,) and x.ravel().shape == (24,)
    assert x.flatten(1).shape == (2, 12) and x.flatten(0, 1).shape == (6, 4)
    assert vkml.flatten(vkml.tensor(np.float32(2.0))).shape == (1,)
    assert x.view(6, 4).shape == (6, 4) and x.view(-1).shape == (24,)
    assert np.array_equal(
        x.view(vkml.int32).numpy(), np.arange(24, dtype=np.float32).reshape(2, 3, 4).view(np.int32)
    )
    y = vkml.tensor(np.array([[3.0, 1.0, 2.0]], np.float32))
    assert y.sort().tolist() == [[1.0, 2.0, 3.0]] and y.argsort(descending=True).tolist() == [
        [0, 2, 1]
    ]


def test_clone_is_a_new_tensor_that_gradients_flow_through() -> None:
    x = vkml.tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    y = x.clone()
    assert y is not x and y.tolist() == x.tolist()
    (y * y).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [2.0, 4.0, 6.0]


def test_var_and_std_gradients() -> None:
    data = np.array([1.0, 2.0, 4.0, 7.0], np.float32)
    x = vkml.tensor(data, requires_grad=True)
    x.var().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), 2 * (data - data.mean()) / data.size, 1e-6)


def test_bad_input_names_the_value_and_the_remedy() -> None:
    ints = vkml.tensor(np.array([1, 2], np.int32))
    with pytest.raises(
        vkml.DTypeError,
        match=r"'var' needs a floating-point tensor, got int32; use x.astype\(vkml.float32\)",
    ):
        ints.var()
    with pytest.raises(TypeError, match="'var' takes correction or ddof"):
        vkml.var(ints.astype(vkml.float32), correction=1, ddof=1)
    with pytest.raises(vkml.AxisError, match="'flatten': start_dim 2 comes after end_dim 0"):
        vkml.zeros((2, 3, 4)).flatten(2, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_arrays_and_lists_are_operands_on_the_tensor_s_device(device: str) -> None:
    t = vkml.tensor(np.array([1.5, -2.25, 3.0], np.float32), device=device)
    for got in (t + np.array([1, 2, 3], np.float32), np.array([1, 2, 3], np.float32) + t,
                t + [1, 2, 3], [1.0, 2.0, 3.0] + t):  # fmt: skip
        assert got.device is t.device and got.dtype is vkml.float32
        assert got.tolist() == [2.5, -0.25, 6.0]
    assert (t > [0.0, 0.0, 4.0]).tolist() == [True, False, False]
    assert vkml.where(t > 0, t, np.zeros(3, np.float32)).tolist() == [1.5, 0.0, 3.0]


def test_a_numpy_array_s_dtype_promotes_as_numpy_s_would() -> None:
    t = vkml.tensor(np.array([1.5, 2.0], np.float32))
    assert (np.array([2.0, 4.0]) * t).dtype is vkml.float64  # float64 * float32, NumPy's rule
    assert (t * np.array([2, 4], np.int32)).dtype is vkml.float32


@pytest.mark.parametrize("device", DEVICES)
def test_lists_and_numpy_arrays_index_as_numpy_s_do(device: str) -> None:
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = vkml.tensor(data, device=device)
    for index in ([2, 0], np.array([2, 0]), ([0, 2], [1, 3]), (np.array([0, -1]), 1),
                  [True, False, True], np.array([False, True, False]), []):  # fmt: skip
        want = data[index]
        assert np.array_equal(m[index].numpy(), want), index
    with pytest.raises(vkml.IndexingError, match="must hold integers or bools, got float64"):
        m[[0.5, 1.0]]


def test_round_and_format_of_a_one_element_tensor() -> None:
    t = vkml.tensor(np.array([1.5, -2.25, 2.5], np.float32))
    assert round(t[0]) == 2 and round(t[2]) == 2 and round(t[1], 1) == -2.2
    assert format(t[0], ".2f") == "1.50" and f"{t[1]:+.1e}" == "-2.2e+00"
    assert f"{t[0]}" == str(t[0])
    with pytest.raises(TypeError, match=r"round\(\) takes a one-element tensor, got shape \(3,\)"):
        round(t)
    with pytest.raises(TypeError, match="takes a one-element tensor"):
        format(t, ".2f")


@pytest.mark.parametrize("device", DEVICES)
def test_max_min_with_dim_topk_nonzero_and_cat_match_torch(device: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 5.0, 5.0, -2.0], [np.nan, 0.0, 3.0, 3.0], [7.0, 7.0, 7.0, 7.0]], np.float32)
    t, tt = vkml.tensor(x, device=device), torch.tensor(x)
    for op in ("max", "min"):
        got, want = getattr(t, op)(dim=1), getattr(tt, op)(dim=1)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        # ties: the first extreme (torch's CPU kernel agrees here; it promises no order)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        kept = getattr(vkml, op)(t, dim=0, keepdim=True)
        assert kept.values.shape == (1, 4) and kept.indices.dtype == vkml.int64
        np.testing.assert_array_equal(getattr(t, op)(1).numpy(), getattr(np, op)(x, 1))  # NumPy's
    values, indices = t.topk(2)
    assert values.numpy()[[0, 2]].tolist() == [[5.0, 5.0], [7.0, 7.0]]
    assert indices.tolist() == [[1, 2], [0, 2], [0, 1]]  # stable: equal elements in order
    assert np.isnan(values.numpy()[1, 0])  # NaN is the largest
    low = vkml.topk(t, 1, dim=0, largest=False)
    assert low.values.tolist() == [[1.0, 0.0, 3.0, -2.0]] and low.indices.tolist() == [[0, 1, 1, 0]]
    assert (t > 4).nonzero().tolist() == torch.nonzero(tt > 4).tolist()
    rows, cols = vkml.nonzero(t > 4, as_tuple=True)
    assert (rows.tolist(), cols.tolist()) == tuple(a.tolist() for a in np.nonzero(x > 4))
    assert vkml.cat([t, t[:1]], dim=0).shape == (4, 4) and vkml.cat([t, t], axis=1).shape == (3, 8)


def test_the_values_of_max_along_dim_send_their_gradient_to_the_first_maximum() -> None:
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 5.0, 5.0], [7.0, 7.0, 2.0]], np.float32)
    v, tv = vkml.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (v.max(dim=1).values * vkml.tensor([2.0, 3.0])).sum().backward()
    (tv.max(dim=1).values * torch.tensor([2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), tv.grad.numpy())
    w = vkml.tensor(x, requires_grad=True)
    w.topk(2, dim=1).values.sum().backward()
    assert w.grad.tolist() == [[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
