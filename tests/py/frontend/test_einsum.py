"""``vkml.einsum`` against NumPy's on every device (explicit and implicit outputs, ``...``,
diagonals, three operands), its gradient against PyTorch's, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

RNG = np.random.default_rng(11)


def _a(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


A, B, C, D, E = _a(3, 4), _a(4, 5), _a(2, 3, 4), _a(4, 4), _a(5)
CASES = [
    ("ij,jk->ik", A, B), ("ij,jk", A, B), ("ij->ji", A), ("ij->", A), ("ii->i", D), ("ii", D),
    ("bij,jk->bik", C, B), ("ij,jk,k->i", A, B, E), ("...ij,jk", _a(2, 1, 4, 3), _a(3, 2)),
    ("i,i", E, E), ("i,j->ij", E, E), ("bij,bkj->bik", C, C), ("iij->j", _a(3, 3, 2)),
    ("...ij,...jk->...ik", C, _a(1, 4, 5)),
]  # fmt: skip
DEVICES = ["reference", "cpu"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(device: str, case: tuple) -> None:
    subscripts, *operands = case
    got = vkml.einsum(subscripts, *(vkml.tensor(o, device=device) for o in operands))
    want = np.einsum(subscripts, *operands)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not vkml.runtime.vulkan_loader.vulkan_device_reports(), reason="no Vulkan")
def test_einsum_on_vulkan() -> None:
    got = vkml.einsum("bij,jk,k->bi", *(vkml.tensor(o, device="vulkan:0") for o in (C, B, E)))
    np.testing.assert_allclose(
        got.numpy(), np.einsum("bij,jk,k->bi", C, B, E), rtol=1e-5, atol=1e-5
    )


def test_einsum_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    ops = [_a(2, 3, 3), _a(3, 4), _a(4)]
    subscripts = "bii,ij,j->bj"
    leaves = [vkml.tensor(o, requires_grad=True) for o in ops]
    (vkml.einsum(subscripts, *leaves) * vkml.arange(8.0).reshape(2, 4)).sum().backward()
    theirs = [torch.tensor(o, requires_grad=True) for o in ops]
    (torch.einsum(subscripts, *theirs) * torch.arange(8.0).reshape(2, 4)).sum().backward()
    for ours, want in zip(leaves, theirs):
        np.testing.assert_allclose(ours.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_einsum_errors_name_the_subscripts() -> None:
    a, b = vkml.tensor(A), vkml.tensor(B)
    with pytest.raises(ValueError, match="names 2 operand"):
        vkml.einsum("ij,jk->ik", a)
    with pytest.raises(vkml.ShapeError, match="'j' is 4 in one operand and 3"):
        vkml.einsum("ij,jk->ik", a, a)
    with pytest.raises(vkml.ShapeError, match="names 3 axes of an operand of shape"):
        vkml.einsum("ijk,jk->i", a, b)
    with pytest.raises(ValueError, match="no input has"):
        vkml.einsum("ij,jk->iz", a, b)
    with pytest.raises(ValueError, match="not letters"):
        vkml.einsum("i1,jk->ik", a, b)
    with pytest.raises(TypeError, match="must be a string"):
        vkml.einsum(3, a)  # type: ignore[arg-type]
