"""Long reductions on a Vulkan driver that caps shader loops (Mesa's lavapipe: 65,535 loop
iterations per shader invocation, all loops counted together, then the shader silently stops).

Every case here is a size at which vkml at ea01b39 gave a wrong answer on lavapipe without an
error (argmax 70,000 -> 70000, an integer sum of 70,000 ones -> 65535, a K = 65,536 matmul of
ones -> 65535). They run on every Vulkan device: the answers must be right everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.devices import needs_vulkan

import vkml

pytestmark = needs_vulkan

# Around the cap, a power of two above it, and past two caps: the power of two and the
# longest in make test, the others with make test-exhaustive (each length is a compile).
LONG = (
    pytest.param(65_535, marks=pytest.mark.exhaustive),
    65_536,
    pytest.param(70_000, marks=pytest.mark.exhaustive),
    pytest.param(131_072, marks=pytest.mark.exhaustive),
    200_000,
)


@pytest.fixture(scope="module")
def vulkan() -> vkml.Device:
    return vkml.device("vulkan:0")


def _on(device: vkml.Device, array: np.ndarray) -> vkml.Tensor:
    return vkml.tensor(array, device=device)


@pytest.mark.parametrize("n", LONG)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argextreme_of_a_long_row_is_its_last_element(vulkan: vkml.Device, op: str, n: int) -> None:
    x = np.zeros(n, np.float32)
    x[-1] = 1.0 if op == "argmax" else -1.0
    assert getattr(_on(vulkan, x), op)().item() == n - 1


@pytest.mark.parametrize("op", ["argmax", pytest.param("argmin", marks=pytest.mark.exhaustive)])
def test_argextreme_along_each_axis_of_a_long_matrix(vulkan: vkml.Device, op: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 70_000)).astype(np.float32)
    for axis in (0, 1, None):
        got = getattr(_on(vulkan, x), op)(axis=axis).numpy()
        want = getattr(_on(vkml.reference, x), op)(axis=axis).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{op} axis={axis}")
    tall = np.ascontiguousarray(x.T)
    got = getattr(_on(vulkan, tall), op)(axis=0).numpy()
    np.testing.assert_array_equal(got, getattr(np, op)(tall, axis=0))


@pytest.mark.parametrize("n", LONG)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "bool"])
def test_integer_sum_of_a_long_row_counts_every_element(
    vulkan: vkml.Device, dtype: str, n: int
) -> None:
    x = np.ones(n, dtype)
    if not vulkan.supports("sum", vkml.dtypes.to_dtype(dtype)):
        pytest.skip(f"{vulkan} refuses {dtype}")
    assert _on(vulkan, x).sum().item() == n


def test_integer_sums_along_axes_match_reference(vulkan: vkml.Device) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, size=(4, 70_000), dtype=np.int32)
    for axis in (0, 1, None, (0, 1)):
        got = _on(vulkan, x).sum(axis=axis).numpy()
        np.testing.assert_array_equal(got, x.sum(axis=axis, dtype=np.int64), err_msg=f"axis={axis}")


def test_products_of_long_rows_match_reference(vulkan: vkml.Device) -> None:
    rng = np.random.default_rng(4)
    signs = rng.choice(np.array([-1, 1], np.int32), size=(2, 70_000))
    scales = (1 + rng.uniform(-1e-6, 1e-6, size=(2, 70_000))).astype(np.float32)
    for x in (signs, scales):
        got = _on(vulkan, x).prod(axis=1).numpy()
        want = vkml.tensor(x, device="reference").prod(axis=1).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str(x.dtype))


def test_running_sums_of_long_rows_match_reference(vulkan: vkml.Device) -> None:
    rng = np.random.default_rng(5)
    for x in (rng.integers(-9, 9, (2, 70_000), dtype=np.int32), rng.standard_normal((2, 70_000))):
        x = x.astype(np.float32) if x.dtype.kind == "f" else x
        got = _on(vulkan, x).cumsum(axis=1).numpy()
        want = vkml.tensor(x, device="reference").cumsum(axis=1).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str(x.dtype))


def test_gathers_along_long_rows_reach_every_element(vulkan: vkml.Device) -> None:
    x = np.arange(2 * 70_000, dtype=np.float32).reshape(2, 70_000)
    picks = np.stack([np.arange(70_000)[::-1], np.arange(-70_000, 0)])
    got = vkml.take_along_axis(_on(vulkan, x), _on(vulkan, picks), axis=1).numpy()
    np.testing.assert_array_equal(got, np.take_along_axis(x, picks, axis=1))


def test_sorts_of_long_rows_match_numpy(vulkan: vkml.Device) -> None:
    rng = np.random.default_rng(9)
    x = rng.integers(-50, 50, (2, 70_000)).astype(np.float32)  # many ties: stability counts
    x[0, ::7] = np.nan
    positions, values = vkml.argsort(_on(vulkan, x)), vkml.sort(_on(vulkan, x))
    vkml.realize(positions, values)  # one compile: 153 compare-exchange steps
    np.testing.assert_array_equal(positions.numpy(), np.argsort(x, axis=1, kind="stable"))
    np.testing.assert_array_equal(values.numpy(), np.sort(x, axis=1))


@pytest.mark.parametrize("k", LONG)
def test_matmul_with_a_long_contraction_counts_every_product(vulkan: vkml.Device, k: int) -> None:
    a = np.ones((2, k), np.float32)
    b = np.ones((k, 3), np.float32)
    np.testing.assert_array_equal(
        (_on(vulkan, a) @ _on(vulkan, b)).numpy(), np.full((2, 3), k, np.float32)
    )


@pytest.mark.parametrize(
    "dtype", ["float32", pytest.param("float16", marks=pytest.mark.exhaustive), "int32"]
)
def test_long_matmul_matches_reference_within_the_gemm_bound(
    vulkan: vkml.Device, dtype: str
) -> None:
    rng = np.random.default_rng(11)
    k = 131_072
    if dtype == "int32":
        a = rng.integers(-3, 4, size=(2, 3, k)).astype(dtype)
        b = rng.integers(-3, 4, size=(2, k, 5)).astype(dtype)
        got = (_on(vulkan, a) @ _on(vulkan, b)).numpy()
        np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))
        return
    a = rng.standard_normal((2, 3, k)).astype(dtype)
    b = rng.standard_normal((2, k, 5)).astype(dtype)
    got = (_on(vulkan, a) @ _on(vulkan, b)).numpy().astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    eps = np.finfo(np.float32).eps if dtype == "float32" else np.finfo(np.float16).eps
    assert np.all(np.abs(got - exact) <= 8 * eps * scale)


def test_long_matmul_gradient(vulkan: vkml.Device) -> None:
    # the backward pass contracts over the batch: a long K in the transposed products
    rng = np.random.default_rng(5)
    x = rng.standard_normal((70_000, 4)).astype(np.float32)
    w = vkml.tensor(
        rng.standard_normal((4, 3)).astype(np.float32), device=vulkan, requires_grad=True
    )
    (_on(vulkan, x) @ w).sum().backward()
    want = x.astype(np.float64).sum(axis=0)[:, None] * np.ones((1, 3))
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-4, atol=1e-2)
