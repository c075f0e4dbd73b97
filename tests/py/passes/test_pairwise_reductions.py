"""vkml-pairwise-reductions: sums bit-exact against the reference on every length and axis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from support.numerics import assert_bit_exact

import vkml
from vkml.ops.references.axes import pairwise_sum

LENGTHS = [0, 1, 2, 3, 5, 7, 8, 31, 1000, 4097, 65537, 10**6]


def _data(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # wide dynamic range, so that any other summation order gives other bits
    return (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(np.float32)


def test_lengths_are_bit_exact_against_reference() -> None:
    arrays = [_data(n, n) for n in LENGTHS]
    got = [vkml.tensor(a).sum() for a in arrays]
    want = [vkml.tensor(a, device="reference").sum() for a in arrays]
    vkml.realize(*got)
    for n, g, w in zip(LENGTHS, got, want):
        assert_bit_exact(g.numpy(), w.numpy(), f"sum of {n}")


def test_the_order_is_the_published_tree_not_numpy() -> None:
    # the reference is the published tree: check it by hand on a case where order matters
    x = np.array([1e8, 1.0, -1e8, 1.0, 3.0], np.float32)
    # pad to 8 with -0.0: [1e8, 1, -1e8, 1, 3, -0, -0, -0]
    # halve: [1e8+3, 1-0, -1e8-0, 1-0] = [1e8, 1, -1e8, 1]; halve: [0, 2]; halve: [2]
    assert pairwise_sum(x, [0]) == np.float32(2.0)
    assert vkml.tensor(x).sum().item() == 2.0


def test_sum_is_bit_identical_run_to_run() -> None:
    x = vkml.tensor(_data(65537, 3))
    first = x.sum().numpy()
    for _ in range(3):
        assert_bit_exact(x.sum().numpy(), first, "repeat")


def test_mean_uses_the_tree() -> None:
    x = _data(1000, 5).reshape(10, 100) / 1e10
    got = vkml.tensor(x).mean(axis=1).numpy()
    assert_bit_exact(got, vkml.tensor(x, device="reference").mean(axis=1).numpy(), "mean")


def test_softmax_sums_go_through_the_tree() -> None:
    # softmax's exp is bounded, not bit-exact; its sum must still be the pairwise reduce
    text = vkml.emit_mlir(vkml.softmax(vkml.tensor(_data(12).reshape(3, 4))), passes=True)
    assert "stablehlo.reduce" not in text  # max is a select tree, the sum the pairwise tree
    assert text.count("stablehlo.slice") >= 8


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_other_float_dtypes_are_bit_exact(dtype: str) -> None:
    x = np.clip(_data(4097, 9), -6e4, 6e4)
    got = vkml.tensor(x, dtype=dtype).sum().numpy()
    want = vkml.tensor(x, dtype=dtype, device="reference").sum().numpy()
    assert_bit_exact(got, want, dtype)


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=4),
    data=st.data(),
)
def test_random_shapes_and_axes_are_bit_exact(shape: list[int], data: st.DataObject) -> None:
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    keepdims = data.draw(st.booleans())
    axis = tuple(axes) if axes else None
    x = _data(int(np.prod(shape)), len(shape)).reshape(shape)
    got = vkml.tensor(x).sum(axis=axis, keepdims=keepdims).numpy()
    want = vkml.tensor(x, device="reference").sum(axis=axis, keepdims=keepdims).numpy()
    assert_bit_exact(got, want, f"sum over {axis} of {shape}")


@pytest.mark.parametrize("n", [1, 3, 5, 17])
def test_sum_of_negative_zeros_is_negative_zero(n: int) -> None:
    # the padding must be -0.0: +0.0 padding would turn this sum into +0.0
    x = np.full((n, 2), -0.0, np.float32)
    got = vkml.tensor(x).sum(axis=0).numpy()
    assert_bit_exact(got, np.full(2, -0.0, np.float32), f"sum of {n} negative zeros")
    assert_bit_exact(vkml.tensor(x, device="reference").sum(axis=0).numpy(), got, "reference")
