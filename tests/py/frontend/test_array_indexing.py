"""Integer-array indexing, ``x[i]`` and ``x[i, j, ...]`` with integer tensors, and boolean
masks, ``x[mask]``, against NumPy on cpu and reference: a gather (``take``), so bit-exact,
with take's gradient."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.array_api as xp
from vkml.errors import IndexingError

A = np.arange(24, dtype=np.float32).reshape(4, 6) - 11.5
ROWS = np.array([0, 3, -1, 3])
COLS = np.array([[1], [5], [-6]])


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_integer_arrays_gather_as_numpy(device: str) -> None:
    x = vkml.tensor(A, device=device)
    on = lambda a: vkml.tensor(a, device=device)
    cases = {
        "rows": (x[on(ROWS)], A[ROWS]),
        "rows 2-d": (x[on(COLS % 4)], A[COLS % 4]),
        "broadcast pairs": (x[on(ROWS[:3]), on(COLS)], A[ROWS[:3], COLS]),
        "int and array": (x[2, on(ROWS)], A[2, ROWS]),
        "0-d arrays": (x[on(np.array(1)), on(np.array(-2))], A[1, -2]),
        "int32 indices": (x[on(ROWS.astype(np.int32)), 0], A[ROWS, 0]),
    }
    got = {name: t for name, (t, _) in cases.items()}
    vkml.realize(*got.values())
    for name, (t, want) in cases.items():
        assert t.shape == want.shape, name
        np.testing.assert_array_equal(t.numpy(), want, err_msg=name)


def test_out_of_range_indices_clamp_per_axis_as_take_does() -> None:
    x = vkml.tensor(A)
    got = x[vkml.tensor([9, -9]), vkml.tensor([7, -8])].numpy()
    np.testing.assert_array_equal(got, A[[3, 0], [5, 0]])


def test_gradient_of_a_gather_adds_repeats() -> None:
    w = vkml.tensor(A, requires_grad=True)
    (w[vkml.tensor(ROWS), vkml.tensor([0, 1, 2, 1])] * 2.0).sum().backward()
    want = np.zeros_like(A)
    np.add.at(want, (ROWS, [0, 1, 2, 1]), 2.0)
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), want)


def test_nonzero_of_a_mask_indexes_what_a_mask_would() -> None:
    x = xp.asarray(A)
    mask = x > 3.0
    np.testing.assert_array_equal(x[xp.nonzero(mask)].numpy(), A[A > 3.0])


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_a_boolean_mask_realizes_itself_and_gathers_lazily(device: str) -> None:
    x = vkml.tensor(A, device=device)
    rows = np.array([True, False, True, True])
    cases = {
        "elements": (x[x > 3.0], A[A > 3.0]),
        "rows": (x[vkml.tensor(rows, device=device)], A[rows]),
        "none": (x[x > 99.0], A[A > 99.0]),
        "0-d true": (x[vkml.tensor(True, device=device)], A[np.True_]),
    }
    for name, (t, want) in cases.items():
        assert t.shape == want.shape, name
        np.testing.assert_array_equal(t.numpy(), want, err_msg=name)


def test_what_it_does_not_do_is_refused_with_the_remedy() -> None:
    x = vkml.tensor(A)
    with pytest.raises(IndexingError, match=r"leading shape of x \(4, 6\).*\(4,\)"):
        x[vkml.tensor([True, False])]
    with pytest.raises(IndexingError, match="data-dependent.*sole index.*vkml.where"):
        x[x > 0.0, 1]
    with pytest.raises(IndexingError, match="one int or integer tensor per axis.*slice"):
        x[vkml.tensor([0]), 1:]
    with pytest.raises(vkml.DTypeError, match="integer indices"):
        x[vkml.tensor([0.5]), 0]
    with pytest.raises(IndexingError, match="out of bounds"):
        x[vkml.tensor([0]), 6]
    assert x[1, 2].item() == A[1, 2]  # x is still usable
