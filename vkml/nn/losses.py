"""Losses: cross-entropy over integer labels and mean squared error."""

from __future__ import annotations

from vkml.errors import DTypeError, ShapeError
from vkml.frontend.creation import arange
from vkml.frontend.functions import log_softmax
from vkml.frontend.ops import tensor_node
from vkml.frontend.tensor import Tensor

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(name: str, per_item: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return per_item.mean()
    if reduction == "sum":
        return per_item.sum()
    if reduction == "none":
        return per_item
    raise ValueError(f"{name}: reduction={reduction!r} is not one of {', '.join(_REDUCTIONS)}")


def cross_entropy(logits: Tensor, labels: Tensor, reduction: str = "mean") -> Tensor:
    """Cross-entropy of class scores against integer labels, as PyTorch's.

    Computed from a stable log-softmax (the maximum is subtracted first, so large scores
    do not overflow) and a one-hot of the labels; a label outside ``[0, classes)`` adds 0.

    Args:
        logits: float scores of shape ``(..., classes)``.
        labels: integer class indices of shape ``(...)``.
        reduction: ``"mean"`` (default) or ``"sum"`` over the items, or ``"none"``.
    """
    if not tensor_node("cross_entropy", logits).dtype.is_float:
        raise DTypeError(f"cross_entropy: logits must be floating-point, got {logits.dtype}")
    if not tensor_node("cross_entropy", labels).dtype.is_integer:
        raise DTypeError(
            f"cross_entropy: labels must be integer class indices, got "
            f"{labels.dtype} (for probabilities, use -(p * log_softmax(x)).sum())"
        )
    if not logits.shape or labels.shape != logits.shape[:-1]:
        raise ShapeError(
            f"cross_entropy: labels of shape {labels.shape} do not match logits "
            f"of shape {logits.shape} (expected labels of shape {logits.shape[:-1]})"
        )
    logp = log_softmax(logits, axis=-1)
    classes = arange(logits.shape[-1], dtype=labels.dtype, device=labels.device)
    one_hot = (labels.unsqueeze(-1) == classes).astype(logp.dtype)
    return _reduce("cross_entropy", -(logp * one_hot).sum(axis=-1), reduction)


def mse_loss(prediction: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean (or sum, or elementwise) squared difference of two tensors of one shape."""
    if tensor_node("mse_loss", prediction).shape != tensor_node("mse_loss", target).shape:
        raise ShapeError(
            f"mse_loss: prediction {prediction.shape} and target {target.shape} differ in shape"
        )
    diff = prediction - target
    return _reduce("mse_loss", diff * diff, reduction)
