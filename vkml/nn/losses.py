"""Losses: cross-entropy over integer labels and mean squared error."""

from __future__ import annotations

import math

from vkml.dtypes import integer_range
from vkml.errors import DTypeError, ShapeError
from vkml.frontend.functions import log_softmax, take_along_axis, where
from vkml.frontend.record import tensor_node
from vkml.frontend.tensor import Tensor

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(name: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction={reduction!r} is not one of {', '.join(_REDUCTIONS)}")


def _reduce(name: str, per_item: Tensor, reduction: str) -> Tensor:
    _check_reduction(name, reduction)
    if reduction == "mean":
        return per_item.mean()
    if reduction == "sum":
        return per_item.sum()
    return per_item


def cross_entropy(
    logits: Tensor, labels: Tensor, reduction: str = "mean", ignore_index: int = -100
) -> Tensor:
    """Cross-entropy of class scores against integer labels, as PyTorch's.

    Computed from a stable log-softmax (the maximum is subtracted first, so large scores
    do not overflow), read at each item's label. An item labelled ``ignore_index`` adds 0
    and is not counted in the mean. A label outside ``[0, classes)`` (other than
    ``ignore_index``) makes that item's loss NaN, and so the mean, the sum and the gradient:
    a bad label never gives a plausible loss. (PyTorch raises; vkml would have to read the
    labels back, a device sync every step.)

    Args:
        logits: float scores of shape ``(..., classes)``.
        labels: integer class indices of shape ``(...)``.
        reduction: ``"mean"`` (default, over the items not ignored) or ``"sum"`` over the
            items, or ``"none"``.
        ignore_index: a label whose items are left out (PyTorch's default, -100).
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
    _check_reduction("cross_entropy", reduction)
    logp = log_softmax(logits, axis=-1)
    # a gather, not a one-hot product: 0 * log p would be NaN where log p is -inf
    picked = take_along_axis(logp, labels.unsqueeze(-1), axis=-1).squeeze(-1)
    # a bad label's scale is NaN (its loss and gradient too); an ignored one's is 1, its loss
    # then replaced by 0 (a NaN scale would reach the gradient through 0 * NaN)
    fine = (labels >= 0) & (labels < logits.shape[-1])
    low, high = integer_range(labels.dtype)
    kept = labels != ignore_index if low <= ignore_index <= high else None
    if kept is not None:
        fine = fine | ~kept
    loss = -(picked * where(fine, 1.0, math.nan).astype(logp.dtype))
    if kept is None:
        return _reduce("cross_entropy", loss, reduction)
    loss = where(kept, loss, 0.0)
    if reduction == "mean":
        return loss.sum() / kept.astype(loss.dtype).sum()
    return _reduce("cross_entropy", loss, reduction)


def mse_loss(prediction: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean (or sum, or elementwise) squared difference of two tensors of one shape."""
    if tensor_node("mse_loss", prediction).shape != tensor_node("mse_loss", target).shape:
        raise ShapeError(
            f"mse_loss: prediction {prediction.shape} and target {target.shape} differ in shape"
        )
    diff = prediction - target
    return _reduce("mse_loss", diff * diff, reduction)
