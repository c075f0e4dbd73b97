"""Pooling (``vkml.max_pool``, ``avg_pool``, ``adaptive_avg_pool``) against PyTorch's, forward
and gradient, on every device; composites of bit-exact ops, so every device gives the
reference's bits, values and gradients alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

torch = pytest.importorskip("torch")
F = torch.nn.functional

VULKAN = ["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else []
# lavapipe compiles are slow (~4 s a case): it runs the cases that between them use every
# path (overlapping padded windows, ties, uncounted padding, uneven adaptive windows);
# make test-exhaustive runs every case there
VULKAN_SLICE = ("max-3-s2-p1-ties", "avg-pad-not-counted", "adaptive-uneven")

# name, vkml's call, torch's, input shape, whether to round the input (ties in windows)
CASES: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], tuple[int, ...], bool]] = [
    ("max-2x2-odd", lambda x: vkml.max_pool(x, 2), lambda x: F.max_pool2d(x, 2), (2, 3, 8, 7), False),
    ("max-2x2-ties", lambda x: vkml.max_pool(x, 2), lambda x: F.max_pool2d(x, 2), (2, 3, 8, 8), True),
    ("max-3-s2-p1-ties", lambda x: vkml.max_pool(x, 3, 2, 1), lambda x: F.max_pool2d(x, 3, 2, 1), (2, 3, 9, 8), True),
    ("max-1d-dilated", lambda x: vkml.max_pool(x, 2, 1, 0, 2), lambda x: F.max_pool1d(x, 2, 1, 0, 2), (2, 3, 9), False),
    ("avg-2", lambda x: vkml.avg_pool(x, 2), lambda x: F.avg_pool2d(x, 2), (2, 3, 8, 8), False),
    ("avg-3-s2-p1", lambda x: vkml.avg_pool(x, 3, 2, 1), lambda x: F.avg_pool2d(x, 3, 2, 1), (2, 3, 9, 8), False),
    ("avg-pad-not-counted", lambda x: vkml.avg_pool(x, 3, 2, 1, count_include_pad=False),
     lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (2, 3, 9, 8), False),
    ("adaptive-global", lambda x: vkml.adaptive_avg_pool(x, 1), lambda x: F.adaptive_avg_pool2d(x, 1), (2, 3, 9, 8), False),
    ("adaptive-uneven", lambda x: vkml.adaptive_avg_pool(x, (3, 5)), lambda x: F.adaptive_avg_pool2d(x, (3, 5)), (2, 3, 9, 8), False),
    ("adaptive-3d-keep", lambda x: vkml.adaptive_avg_pool(x, (2, None, 3)),
     lambda x: F.adaptive_avg_pool3d(x, (2, 4, 3)), (1, 2, 5, 4, 7), False),
]  # fmt: skip


def _run(
    device: str, ours: Callable[[Any], Any], x: np.ndarray, g: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    vx = vkml.tensor(x, device=device, requires_grad=True)
    y = ours(vx)
    (y * vkml.tensor(g, device=device)).sum().backward()
    return y.numpy(), vx.grad.numpy()


def _params() -> list[Any]:
    out = []
    for case in CASES:
        out.append(pytest.param(*case, "cpu", id=f"{case[0]}-cpu"))
        for device in VULKAN:
            marks = () if case[0] in VULKAN_SLICE else (pytest.mark.exhaustive,)
            out.append(pytest.param(*case, device, id=f"{case[0]}-{device}", marks=marks))
    return out


@pytest.mark.parametrize(("name", "ours", "theirs", "shape", "ties", "device"), _params())
def test_pooling_matches_torch_and_the_reference_bits(
    name: str, ours: Any, theirs: Any, shape: tuple[int, ...], ties: bool, device: str
) -> None:
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(shape).astype(np.float32)
    x = np.round(x) if ties else x
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(tx)
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.tensor(g))
    y, gx = _run("reference", ours, x, g)
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    # a max's gradient goes to the first maximum of each window, as PyTorch's
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-6, atol=1e-7)
    dy, dgx = _run(device, ours, x, g)
    assert np.array_equal(dy.view(np.uint32), y.view(np.uint32)), "value"
    assert np.array_equal(dgx.view(np.uint32), gx.view(np.uint32)), "gradient"


def test_max_pool_propagates_nan_and_keeps_integers() -> None:
    x = np.array([[[[1.0, np.nan], [3.0, 2.0]]]], np.float32)
    assert np.isnan(vkml.max_pool(vkml.tensor(x), 2).item())
    ints = vkml.tensor(np.array([[[-5, -7, 2, 9]]], np.int32))
    got = vkml.max_pool(ints, 2, 1, 1)
    assert got.dtype == vkml.int32 and got.tolist() == [[[-5, -5, 2, 9, 9]]]
    assert vkml.avg_pool(ints, 2).tolist() == [[[-6.0, 5.5]]]
