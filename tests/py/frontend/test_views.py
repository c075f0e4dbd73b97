"""Views (``vkml/frontend/views.py``) against NumPy, bit for bit, on cpu and reference:
reshape, transpose, permute, broadcast, expand, squeeze/unsqueeze, basic indexing, chains."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import vkml

DEVICES = ["cpu", "reference"]


def base(shape: tuple[int, ...] = (2, 3, 4), dtype: Any = np.float32) -> np.ndarray:
    """Distinct values of ``shape``, with a -0.0 so a sign lost in transit shows."""
    values = (np.arange(int(np.prod(shape))) - 5).astype(dtype).reshape(shape)
    if np.dtype(dtype).kind == "f" and values.size > 5:
        values.flat[5] = -0.0
    return values


def assert_bits_equal(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes(), (got, expected)


View = Callable[[Any], Any]

# (id, input shape, vkml view, NumPy equivalent); one function serves both where the
# spelling is the same.
CASES: list[tuple[str, tuple[int, ...], View, View | None]] = [
    ("reshape", (2, 3, 4), lambda t: t.reshape(6, 4), None),
    ("reshape-tuple", (2, 3, 4), lambda t: t.reshape((4, 3, 2)), None),
    ("reshape-minus-one", (2, 3, 4), lambda t: t.reshape(-1), None),
    ("reshape-inner-minus-one", (2, 3, 4), lambda t: t.reshape(4, -1, 2), None),
    ("reshape-to-0d", (1, 1), lambda t: t.reshape(()), None),
    ("transpose-reverses", (2, 3, 4), lambda t: t.transpose(), None),
    ("T", (2, 3, 4), lambda t: t.T, None),
    ("transpose-swaps-two", (2, 3, 4), lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose-negative", (2, 3, 4), lambda t: t.transpose(-1, 1), lambda a: a.swapaxes(-1, 1)),
    ("transpose-tuple", (2, 3, 4), lambda t: t.transpose((1, 2, 0)), None),
    ("permute", (2, 3, 4), lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute-negative", (2, 3, 4), lambda t: t.permute(-1, 0, -2), lambda a: a.transpose(2, 0, 1)),
    ("broadcast-leading", (3, 4), lambda t: vkml.broadcast_to(t, (2, 3, 4)),
     lambda a: np.broadcast_to(a, (2, 3, 4))),
    ("broadcast-ones", (3, 1), lambda t: t.broadcast_to(2, 3, 5),
     lambda a: np.broadcast_to(a, (2, 3, 5))),
    ("broadcast-0d", (), lambda t: t.broadcast_to(2, 2), lambda a: np.broadcast_to(a, (2, 2))),
    ("expand-minus-one", (3, 1), lambda t: t.expand(2, -1, 5),
     lambda a: np.broadcast_to(a, (2, 3, 5))),
    ("expand-all-minus-one", (1, 4), lambda t: t.expand(3, -1),
     lambda a: np.broadcast_to(a, (3, 4))),
    ("squeeze-all", (1, 3, 1, 4), lambda t: t.squeeze(), None),
    ("squeeze-axis", (1, 3, 1, 4), lambda t: t.squeeze(0), lambda a: a.squeeze(0)),
    ("squeeze-negative", (1, 3, 1, 4), lambda t: t.squeeze(-2), lambda a: a.squeeze(-2)),
    ("unsqueeze-front", (3, 4), lambda t: t.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze-back", (3, 4), lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    ("unsqueeze-middle", (3, 4), lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("int", (2, 3, 4), lambda t: t[1], None),
    ("negative-int", (2, 3, 4), lambda t: t[-1], None),
    ("ints", (2, 3, 4), lambda t: t[0, 2], None),
    ("negative-ints-to-0d", (2, 3, 4), lambda t: t[-1, -2, -3], None),
    ("slice", (2, 3, 4), lambda t: t[:, 1:], None),
    ("slice-stop", (2, 3, 4), lambda t: t[:, :, 1:3], None),
    ("slice-negative-bounds", (2, 3, 4), lambda t: t[:, -2:, :-1], None),
    ("step", (2, 3, 4), lambda t: t[:, ::2, 1::2], None),
    ("reverse", (2, 3, 4), lambda t: t[::-1], None),
    ("negative-step", (2, 3, 4), lambda t: t[..., ::-2], None),
    ("negative-step-bounds", (2, 3, 4), lambda t: t[:, -1:0:-1, 3:0:-2], None),
    ("negative-start-negative-step", (5, 6), lambda t: t[-2::-2, -3::-1], None),
    ("step-past-end", (5, 6), lambda t: t[1:100:3, -100:4], None),
    ("ellipsis", (2, 3, 4), lambda t: t[..., 1], None),
    ("ellipsis-middle", (2, 3, 4), lambda t: t[0, ..., 1:], None),
    ("ellipsis-alone", (2, 3, 4), lambda t: t[...], None),
    ("none", (2, 3, 4), lambda t: t[None], None),
    ("none-between", (2, 3, 4), lambda t: t[:, None, 1], None),
    ("none-and-ellipsis", (2, 3, 4), lambda t: t[..., None, ::-1], None),
    ("empty-slice", (2, 3, 4), lambda t: t[1:1], None),
    ("empty-reversed-slice", (2, 3, 4), lambda t: t[:, 0:2:-1], None),
    ("empty-beyond-end", (2, 3, 4), lambda t: t[:, :, 5:], None),
    ("chain-slice-permute-reshape", (2, 3, 4),
     lambda t: t[:, 1:].permute(2, 0, 1).reshape(4, -1),
     lambda a: a[:, 1:].transpose(2, 0, 1).reshape(4, -1)),
    ("chain-reverse-T-broadcast", (2, 3), lambda t: t[::-1].T.unsqueeze(0).broadcast_to(2, 3, 2),
     lambda a: np.broadcast_to(a[::-1].T[None], (2, 3, 2))),
    ("chain-index-of-reshape", (2, 3, 4), lambda t: t.reshape(4, 6)[1:, ::-2][-1, 1:],
     lambda a: a.reshape(4, 6)[1:, ::-2][-1, 1:]),
    ("chain-squeeze-of-slice", (2, 3, 4), lambda t: t[:, 1:2, ::3].squeeze(1).T,
     lambda a: a[:, 1:2, ::3].squeeze(1).T),
    ("chain-expand-of-slice", (2, 3, 4), lambda t: t[0, :, :1].expand(-1, 4).transpose(),
     lambda a: np.broadcast_to(a[0, :, :1], (3, 4)).T),
]  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("shape", "view", "numpy_view"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_view_matches_numpy_bit_for_bit(
    device: str, shape: tuple[int, ...], view: View, numpy_view: View | None
) -> None:
    a = base(shape)
    got = view(vkml.tensor(a, device=device))
    expected = (numpy_view or view)(a)
    assert got.shape == expected.shape
    assert_bits_equal(got.numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "dtype", ["float16", "bfloat16", "float64", "int32", "int64", "uint32", "bool"]
)
def test_views_of_every_dtype_match_numpy(device: str, dtype: str) -> None:
    target = vkml.bool_ if dtype == "bool" else getattr(vkml, dtype)
    a = base((3, 4), np.float64)
    a = a != 0 if dtype == "bool" else np.abs(a).astype(target.numpy)
    got = vkml.tensor(a, dtype=target, device=device)[::-1, 1::2].T.reshape(-1)
    assert_bits_equal(got.numpy(), a[::-1, 1::2].T.reshape(-1))


@pytest.mark.parametrize("device", DEVICES)
def test_view_of_a_realized_tensor(device: str) -> None:
    a = base((3, 4))
    b = (vkml.tensor(a, device=device) * 2.0).realize()
    v = b.T[1:, ::-1]
    assert v._node.view_src is b._node
    assert_bits_equal(v.numpy(), (a * np.float32(2)).T[1:, ::-1])
    assert b._node.computed


@pytest.mark.parametrize("device", DEVICES)
def test_view_of_a_realized_view(device: str) -> None:
    a = base((2, 3, 4))
    v = vkml.tensor(a, device=device).permute(1, 2, 0).realize()
    w = v[::-2, 1:].reshape(2, -1)
    assert_bits_equal(w.numpy(), a.transpose(1, 2, 0)[::-2, 1:].reshape(2, -1))
    assert_bits_equal(v.numpy(), a.transpose(1, 2, 0))


@pytest.mark.parametrize("device", DEVICES)
def test_views_feed_arithmetic(device: str) -> None:
    a = base((2, 3))
    t = vkml.tensor(a, device=device)
    got = t[:, ::-1] + t.T.reshape(2, 3)
    assert_bits_equal(got.numpy(), a[:, ::-1] + a.T.reshape(2, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_several_views_of_one_base_realize_together(device: str) -> None:
    a = base((2, 3, 4))
    t = vkml.tensor(a, device=device)
    first, second, third = t[0], t[:, ::-1].T, t.reshape(-1)[3:9]
    before = vkml.stats()["invocations"]
    vkml.realize(first, second, third)
    assert vkml.stats()["invocations"] - before == 1
    assert_bits_equal(first.numpy(), a[0])
    assert_bits_equal(second.numpy(), a[:, ::-1].T)
    assert_bits_equal(third.numpy(), a.reshape(-1)[3:9])


def test_trivial_views_return_the_same_tensor() -> None:
    t = vkml.tensor(base((2, 3)), device="reference")
    assert t.reshape(2, 3) is t
    assert t.permute(0, 1) is t
    assert t.broadcast_to(2, 3) is t
    assert t.transpose((0, 1)) is t
