"""Convolutions (ADR 0020): ``vkml.conv`` and ``vkml.conv_transpose`` against PyTorch's
``conv1d/2d/3d`` and ``conv_transpose1d/2d`` on every device, forward and both gradients;
the contract (bits run to run, 16-bit operands accumulated in float32, the relative bound
across devices) and the argument forms (``padding='same'``, pairs, bias)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

DEVICES = ["reference", "cpu"] + (
    ["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else []
)
RNG = np.random.default_rng(31)

# (input shape, kernel shape, keywords): every spatial rank, stride, padding form, dilation
# and groups, each in at least one case
CONVS = [
    ((2, 4, 9, 9), (6, 2, 3, 3), {"stride": 2, "padding": 1, "groups": 2}),
    ((2, 3, 10), (5, 3, 3), {"stride": 3, "padding": 2, "dilation": 2}),
    ((1, 2, 5, 6, 7), (4, 2, 2, 3, 2), {"stride": (1, 2, 1), "padding": (1, 0, 1)}),
    ((2, 3, 8, 8), (4, 3, 2, 3), {"padding": "same"}),
    ((2, 4, 7, 7), (4, 1, 3, 3), {"groups": 4, "stride": 2}),
]
TRANSPOSED = [
    ((2, 4, 5, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((2, 4, 6), (4, 2, 3), {"stride": 3, "groups": 2, "dilation": 2}),
]


def _functional() -> Any:
    """PyTorch's ``torch.nn.functional`` (the peer of the tests that compare with it; a GPU
    machine runs the others without it)."""
    return pytest.importorskip("torch").nn.functional


def _torch_conv(transposed: bool, spatial: int) -> Any:
    return getattr(_functional(), f"conv{'_transpose' if transposed else ''}{spatial}d")


def _check(device: str, transposed: bool, xs: tuple, ws: tuple, kw: dict) -> None:
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ty = _torch_conv(transposed, len(xs) - 2)(tx, tw, **kw)
    g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.tensor(g))
    vx = vkml.tensor(x, device=device, requires_grad=True)
    vw = vkml.tensor(w, device=device, requires_grad=True)
    vy = (vkml.conv_transpose if transposed else vkml.conv)(vx, vw, **kw)
    (vy * vkml.tensor(g, device=device)).sum().backward()
    for got, want in ((vy, ty), (vx.grad, tx.grad), (vw.grad, tw.grad)):
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("xs", "ws", "kw"), CONVS, ids=[f"conv{len(c[0]) - 2}d-{i}" for i, c in enumerate(CONVS)]
)
def test_conv_and_its_gradients_match_torch(device: str, xs: tuple, ws: tuple, kw: dict) -> None:
    _check(device, False, xs, ws, kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("xs", "ws", "kw"), TRANSPOSED, ids=["2d", "1d-grouped"])
def test_conv_transpose_and_its_gradients_match_torch(
    device: str, xs: tuple, ws: tuple, kw: dict
) -> None:
    _check(device, True, xs, ws, kw)


@pytest.mark.parametrize("device", DEVICES)
def test_bias_and_padding_pairs(device: str) -> None:
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    torch, F = pytest.importorskip("torch"), _functional()
    got = vkml.conv(vkml.tensor(x, device=device), vkml.tensor(w, device=device),
                    padding=((0, 2), 1), bias=vkml.tensor(b, device=device))  # fmt: skip
    want = F.conv2d(F.pad(torch.tensor(x), (1, 1, 0, 2)), torch.tensor(w), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_the_contract_bits_run_to_run_and_the_bound_across_devices(device: str) -> None:
    """ADR 0020: the same bits on a second run of a fresh graph; every device within
    8 eps32 of the float64 convolution, relative to the convolution of the magnitudes."""
    x = RNG.standard_normal((2, 8, 12, 12)).astype(np.float32)
    w = RNG.standard_normal((8, 8, 3, 3)).astype(np.float32)

    def exactly(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # float64 on the reference
        ref = "reference"
        return vkml.conv(vkml.tensor(a.astype(np.float64), device=ref),
                         vkml.tensor(b.astype(np.float64), device=ref), padding=1).numpy()  # fmt: skip

    exact, scale = exactly(x, w), exactly(abs(x), abs(w))
    first = vkml.conv(
        vkml.tensor(x, device=device), vkml.tensor(w, device=device), padding=1
    ).numpy()
    again = vkml.conv(
        vkml.tensor(x, device=device), vkml.tensor(w, device=device), padding=1
    ).numpy()
    assert np.array_equal(first.view(np.uint32), again.view(np.uint32))
    err = np.abs(first.astype(np.float64) - exact) / scale
    assert err.max() <= 8 * np.finfo(np.float32).eps, err.max()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("dtype", "bits"), [("float16", 8), ("bfloat16", 7)])
def test_16_bit_operands_accumulate_in_float32(device: str, dtype: str, bits: int) -> None:
    """2^bits products of 1 + 2^-bits sum to 2^bits + 1, which the 16-bit dtype holds; an
    accumulator of that dtype, adding them one by one, stalls below it."""
    n = 2**bits
    x = vkml.full((1, n, 1), 1.0, dtype=dtype, device=device)
    w = vkml.full((1, n, 1), 1 + 2.0**-bits, dtype=dtype, device=device)
    got = vkml.conv(x, w)
    assert got.dtype.name == dtype
    assert got.astype(vkml.float32).item() == n + 1


def test_a_kernels_gradient_slices_once_per_kernel_position_not_per_pixel() -> None:
    """The kernel's gradient is a convolution whose "kernel" is the output gradient (every
    pixel a tap): built tap by tap, a 3x3 kernel's gradient over a 28x28 image was 784
    slices, and IREE took 50 s to compile it (1.2 s the forward); built per output position
    (the 3x3 of the kernel), it is 9."""
    x = vkml.ones((1, 2, 28, 28))
    gradient = vkml.grad(lambda w: vkml.conv(x, w, padding=1).sum())(vkml.ones((2, 2, 3, 3)))
    slices = vkml.emit_mlir(gradient).count("stablehlo.slice")
    assert 0 < slices <= 9, slices
