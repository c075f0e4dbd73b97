"""Losses (``vkml/nn/losses.py``): cross-entropy and MSE values and gradients against
PyTorch 2.13, stability at large logits, reductions and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml import nn

RNG = np.random.default_rng(31)
TOL = {"rtol": 1e-5, "atol": 1e-6}


def value_and_grad(fn, x_host: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    value, grad = vkml.value_and_grad(lambda x: fn(x).sum())(vkml.tensor(x_host))
    vkml.realize(value, grad)
    return fn(vkml.tensor(x_host)).numpy(), grad.numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_value_and_gradient_match_torch(reduction: str) -> None:
    torch = pytest.importorskip("torch")
    logits = RNG.normal(size=(6, 4)).astype(np.float32) * 3
    labels = RNG.integers(0, 4, 6)
    got, grad = value_and_grad(
        lambda x: nn.cross_entropy(x, vkml.tensor(labels), reduction=reduction), logits
    )
    lt = torch.from_numpy(logits).requires_grad_()
    want = torch.nn.functional.cross_entropy(lt, torch.from_numpy(labels), reduction=reduction)
    want.sum().backward()
    np.testing.assert_allclose(got, want.detach().numpy(), **TOL)
    np.testing.assert_allclose(grad, lt.grad.numpy(), **TOL)


def test_cross_entropy_is_stable_for_huge_logits() -> None:
    torch = pytest.importorskip("torch")
    logits = np.array([[1e4, -1e4, 0.0], [-5e3, 5e3, 5e3]], np.float32)
    labels = np.array([1, 2], np.int32)
    got, grad = value_and_grad(lambda x: nn.cross_entropy(x, vkml.tensor(labels)), logits)
    assert np.all(np.isfinite(got)) and np.all(np.isfinite(grad))
    lt = torch.from_numpy(logits).requires_grad_()
    want = torch.nn.functional.cross_entropy(lt, torch.from_numpy(labels).long())
    want.backward()
    np.testing.assert_allclose(got, want.item(), rtol=1e-6)
    np.testing.assert_allclose(grad, lt.grad.numpy(), **TOL)


def test_cross_entropy_takes_leading_batch_axes() -> None:
    logits = RNG.normal(size=(2, 3, 5)).astype(np.float32)
    labels = RNG.integers(0, 5, (2, 3)).astype(np.int32)
    got = nn.cross_entropy(vkml.tensor(logits), vkml.tensor(labels), reduction="none").numpy()
    shifted = logits - logits.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    want = -np.take_along_axis(logp, labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(got, want, **TOL)


def test_cross_entropy_rejects_float_labels_and_mismatched_shapes() -> None:
    logits = vkml.zeros((4, 3))
    with pytest.raises(vkml.DTypeError, match="labels must be integer class indices, got float32"):
        nn.cross_entropy(logits, vkml.zeros((4,)))
    with pytest.raises(vkml.ShapeError, match=r"expected labels of shape \(4,\)"):
        nn.cross_entropy(logits, vkml.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="reduction='avg' is not one of mean, sum, none"):
        nn.cross_entropy(logits, vkml.tensor([0, 1, 2, 0]), reduction="avg")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_value_and_gradient_match_torch(reduction: str) -> None:
    torch = pytest.importorskip("torch")
    pred = RNG.normal(size=(3, 4)).astype(np.float32)
    target = RNG.normal(size=(3, 4)).astype(np.float32)
    got, grad = value_and_grad(
        lambda x: nn.mse_loss(x, vkml.tensor(target), reduction=reduction), pred
    )
    pt = torch.from_numpy(pred).requires_grad_()
    want = torch.nn.functional.mse_loss(pt, torch.from_numpy(target), reduction=reduction)
    want.sum().backward()
    np.testing.assert_allclose(got, want.detach().numpy(), **TOL)
    np.testing.assert_allclose(grad, pt.grad.numpy(), **TOL)


def test_mse_loss_rejects_shapes_that_differ() -> None:
    with pytest.raises(vkml.ShapeError, match=r"prediction \(3,\) and target \(1,\) differ"):
        nn.mse_loss(vkml.zeros(3), vkml.zeros(1))


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_cross_entropy_of_finite_extremes_is_never_nan(device: str) -> None:
    # the NaN contract: a finite input never produces NaN, over the whole float32 range
    big = 3.4e38
    logits = np.array([[big, -big, 0.0], [-big, -big, -big], [1e-30, big, big]], np.float32)
    labels = np.array([1, 2, 0], np.int64)
    out = nn.cross_entropy(
        vkml.tensor(logits, device=device), vkml.tensor(labels, device=device), reduction="none"
    ).numpy()
    assert not np.isnan(out).any(), out
    assert out[1] == pytest.approx(np.log(3.0), rel=1e-6)  # equal scores: log(classes)


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_cross_entropy_of_the_top_class_beside_an_infinite_log_probability_is_zero(
    device: str,
) -> None:
    """log_softmax of [3e38, -3e38] is [0, -inf]: the loss of label 0 is 0, as PyTorch's.
    A one-hot product made it 0 * -inf = NaN (a finite input must never produce NaN)."""
    logits = np.array([[3e38, -3e38], [-3e38, 3e38]], np.float32)
    out = nn.cross_entropy(
        vkml.tensor(logits, device=device), vkml.tensor([0, 1], device=device), reduction="none"
    )
    assert out.tolist() == [0.0, 0.0]
    grad = vkml.grad(lambda x: nn.cross_entropy(x, vkml.tensor([0, 1], device=device)))(
        vkml.tensor(logits, device=device)
    )
    assert not np.isnan(grad.numpy()).any()


@pytest.mark.parametrize("device", ["cpu", "reference"])
@pytest.mark.parametrize("label", [3, 5, -1, -7])
def test_a_label_out_of_range_makes_the_loss_nan(device: str, label: int) -> None:
    """A label outside [0, classes) (and not ``ignore_index``) is a bug in the data: the loss
    and its gradient are NaN, never a plausible number (it was 0.549, the label counting 0)."""
    logits = vkml.ones((2, 3), device=device)
    labels = vkml.tensor([0, label], device=device)
    for reduction in ("mean", "sum"):
        assert np.isnan(nn.cross_entropy(logits, labels, reduction=reduction).item())
    per_item = nn.cross_entropy(logits, labels, reduction="none").numpy()
    assert per_item[0] == pytest.approx(np.log(3.0)) and np.isnan(per_item[1])
    grad = vkml.grad(lambda x: nn.cross_entropy(x, labels))(logits).numpy()
    assert np.isnan(grad[1]).all()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignores_ignore_index_as_torch(reduction: str) -> None:
    torch = pytest.importorskip("torch")
    logits = RNG.normal(size=(5, 4)).astype(np.float32)
    labels = np.array([1, -100, 3, 0, -100])
    got, grad = value_and_grad(
        lambda x: nn.cross_entropy(x, vkml.tensor(labels), reduction=reduction), logits
    )
    lt = torch.from_numpy(logits).requires_grad_()
    want = torch.nn.functional.cross_entropy(lt, torch.from_numpy(labels), reduction=reduction)
    want.sum().backward()
    np.testing.assert_allclose(got, want.detach().numpy(), **TOL)
    np.testing.assert_allclose(grad, lt.grad.numpy(), **TOL)
    moved = np.where(labels == -100, 100, labels)
    other = nn.cross_entropy(vkml.tensor(logits), vkml.tensor(moved), ignore_index=100)
    want = torch.nn.functional.cross_entropy(lt, torch.from_numpy(moved), ignore_index=100)
    assert other.item() == pytest.approx(want.item(), rel=1e-6)
