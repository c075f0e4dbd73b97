"""Normalisation layers: LayerNorm (over each sample's last axes), BatchNorm1d/2d (over the
batch and spatial axes, per channel, with running averages for evaluation) and GroupNorm
(over groups of channels of each sample). Means and variances are pairwise sums (vkml's
fixed order), so training statistics are the same bits on every device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkml.dtypes import float32
from vkml.errors import DTypeError, ShapeError
from vkml.frontend.creation import full
from vkml.frontend.host import number_arg, shape_arg
from vkml.frontend.record import tensor_node
from vkml.frontend.tensor import Tensor
from vkml.nn.arguments import float_dtype, size as size_arg
from vkml.nn.module import Module, defer_update, materialize


class LayerNorm(Module):
    """Normalise over the last axes to mean 0 and variance 1, then scale and shift.

    ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance, as PyTorch.

    Args:
        normalized_shape: the trailing shape to normalise over (an int for one axis).
        eps: added to the variance.
        elementwise_affine: learn ``weight`` (ones) and ``bias`` (zeros).
        dtype, device: of the parameters.
    """

    def __init__(
        self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
        elementwise_affine: bool = True, *, dtype: Any = float32, device: Any = None,
    ) -> None:  # fmt: skip
        self.normalized_shape = shape_arg("LayerNorm", normalized_shape)
        self.eps = number_arg("LayerNorm", "eps", eps, at_least=0.0)
        target = float_dtype("LayerNorm", dtype)
        self.weight: Tensor | None = None
        self.bias: Tensor | None = None
        if elementwise_affine:
            self.weight = full(self.normalized_shape, 1.0, target, device).requires_grad_()
            self.bias = full(self.normalized_shape, 0.0, target, device).requires_grad_()

    def forward(self, x: Tensor) -> Tensor:
        n = len(self.normalized_shape)
        if tensor_node("LayerNorm", x).shape[len(x.shape) - n :] != self.normalized_shape:
            raise ShapeError(
                f"LayerNorm{self.normalized_shape}: input of shape {x.shape} does "
                f"not end with {self.normalized_shape}"
            )
        axes = tuple(range(x.ndim - n, x.ndim))
        centred = x - x.mean(axis=axes, keepdims=True)
        var = (centred * centred).mean(axis=axes, keepdims=True)
        y = centred * (var + self.eps).rsqrt()
        if self.weight is not None and self.bias is not None:
            y = y * self.weight + self.bias
        return y

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class _BatchNorm(Module):
    spatial: tuple[int, ...] = ()  # the spatial ranks an input may have

    def __init__(
        self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
        track_running_stats: bool = True, *, dtype: Any = float32, device: Any = None,
    ) -> None:  # fmt: skip
        layer = type(self).__name__
        self.num_features = size_arg(layer, "num_features", num_features, positive=True)
        self.eps = number_arg(layer, "eps", eps, at_least=0.0)
        self.momentum = number_arg(layer, "momentum", momentum, at_least=0.0, below=1.0 + 1e-12)
        target = float_dtype(layer, dtype)
        self.weight: Tensor | None = None
        self.bias: Tensor | None = None
        if affine:
            self.weight = full((num_features,), 1.0, target, device).requires_grad_()
            self.bias = full((num_features,), 0.0, target, device).requires_grad_()
        self.running_mean: Tensor | None = None
        self.running_var: Tensor | None = None
        if track_running_stats:
            self.running_mean = full((num_features,), 0.0, target, device)
            self.running_var = full((num_features,), 1.0, target, device)
            # data from the start: the first training step has the structure of the next
            materialize([self.running_mean, self.running_var])

    def forward(self, x: Tensor) -> Tensor:
        layer = type(self).__name__
        shape = tensor_node(layer, x).shape
        if len(shape) - 2 not in self.spatial or shape[1] != self.num_features:
            ranks = " or ".join(str(2 + s) for s in self.spatial)
            raise ShapeError(
                f"{layer}({self.num_features}): expected an input of rank {ranks} with "
                f"{self.num_features} channels on axis 1, got shape {shape}"
            )
        if not x.dtype.is_float:
            raise DTypeError(f"{layer}: the input must be floating-point, got {x.dtype}")
        axes = (0, *range(2, len(shape)))
        per_channel = (self.num_features,) + (1,) * (len(shape) - 2)
        if self.training or self.running_mean is None or self.running_var is None:
            mean = x.mean(axis=axes, keepdims=True)
            centred = x - mean
            var = (centred * centred).mean(axis=axes, keepdims=True)
            if self.training and self.running_mean is not None and self.running_var is not None:
                self._update(mean.detach(), var.detach(), x.size // self.num_features)
        else:
            mean = self.running_mean.reshape(per_channel)
            var = self.running_var.reshape(per_channel)
            centred = x - mean
        y = centred * (var + self.eps).rsqrt()
        if self.weight is not None and self.bias is not None:
            y = y * self.weight.reshape(per_channel) + self.bias.reshape(per_channel)
        return y

    def _update(self, mean: Tensor, var: Tensor, count: int) -> None:
        """The running averages move ``momentum`` of the way to this batch's mean and
        unbiased variance (PyTorch's rule); the next optimiser step realizes them."""
        assert self.running_mean is not None and self.running_var is not None
        m = self.momentum
        unbiased = var * (count / max(count - 1, 1))
        shape = (self.num_features,)
        defer_update(self.running_mean, self.running_mean * (1 - m) + mean.reshape(shape) * m)
        defer_update(self.running_var, self.running_var * (1 - m) + unbiased.reshape(shape) * m)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    """Normalise each channel of a batch (N, C) or (N, C, L) to mean 0 and variance 1 over
    the batch (and length), then scale and shift, as PyTorch's ``BatchNorm1d``.

    In training mode the batch's statistics normalise (the biased variance) and the running
    averages move ``momentum`` of the way to the batch's mean and unbiased variance, realized
    with the next optimiser step; in evaluation mode (``eval()``) the running averages
    normalise. ``track_running_stats=False`` always uses the batch's statistics.

    Args:
        num_features: channels C.
        eps: added to the variance.
        momentum: the running averages' step, in [0, 1].
        affine: learn ``weight`` (ones) and ``bias`` (zeros).
        track_running_stats: keep ``running_mean`` (zeros) and ``running_var`` (ones).
        dtype, device: of the parameters and running averages.
    """

    spatial = (0, 1)


class BatchNorm2d(_BatchNorm):
    """``BatchNorm1d`` for images (N, C, H, W): each channel over the batch, height and
    width, as PyTorch's ``BatchNorm2d``."""

    spatial = (2,)


class GroupNorm(Module):
    """Normalise each sample's channels in ``num_groups`` groups (each group over its
    channels and the spatial axes) to mean 0 and variance 1, then scale and shift per
    channel, as PyTorch's ``GroupNorm``; the same in training and evaluation.

    Args:
        num_groups: groups, dividing ``num_channels``.
        num_channels: channels C of an input (N, C, *).
        eps: added to the variance.
        affine: learn per-channel ``weight`` (ones) and ``bias`` (zeros).
        dtype, device: of the parameters.
    """

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, *,
        dtype: Any = float32, device: Any = None,
    ) -> None:  # fmt: skip
        self.num_groups = size_arg("GroupNorm", "num_groups", num_groups, positive=True)
        self.num_channels = size_arg("GroupNorm", "num_channels", num_channels, positive=True)
        if num_channels % num_groups:
            raise ShapeError(
                f"GroupNorm: num_groups={num_groups} must divide num_channels={num_channels}"
            )
        self.eps = number_arg("GroupNorm", "eps", eps, at_least=0.0)
        target = float_dtype("GroupNorm", dtype)
        self.weight: Tensor | None = None
        self.bias: Tensor | None = None
        if affine:
            self.weight = full((num_channels,), 1.0, target, device).requires_grad_()
            self.bias = full((num_channels,), 0.0, target, device).requires_grad_()

    def forward(self, x: Tensor) -> Tensor:
        shape = tensor_node("GroupNorm", x).shape
        if len(shape) < 2 or shape[1] != self.num_channels:
            raise ShapeError(
                f"GroupNorm: expected an input (N, {self.num_channels}, *), got shape {shape}"
            )
        grouped = x.reshape(shape[0], self.num_groups, -1)
        mean = grouped.mean(axis=2, keepdims=True)
        centred = grouped - mean
        var = (centred * centred).mean(axis=2, keepdims=True)
        y = (centred * (var + self.eps).rsqrt()).reshape(*shape)
        if self.weight is not None and self.bias is not None:
            per_channel = (self.num_channels,) + (1,) * (len(shape) - 2)
            y = y * self.weight.reshape(per_channel) + self.bias.reshape(per_channel)
        return y

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}"
