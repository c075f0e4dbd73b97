"""Convolution and pooling layers, PyTorch's layout (N, C, *spatial): Conv1d/2d/3d,
MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool2d and Flatten, each calling the ``vkml``
function of the same name (``conv``, ``max_pool``, ``avg_pool``, ``adaptive_avg_pool``)."""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import float32
from vkml.frontend import random
from vkml.frontend.convolution import conv_window
from vkml.frontend.functions import adaptive_avg_pool, avg_pool, conv, flatten, max_pool
from vkml.frontend.tensor import Tensor
from vkml.frontend.windows import per_axis
from vkml.nn.arguments import check_channels, float_dtype, size as size_arg
from vkml.nn.keys import two_keys
from vkml.nn.module import Module


class _Conv(Module):
    spatial = 0

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
        padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True, *,
        key: Tensor | None = None, dtype: Any = float32,
    ) -> None:  # fmt: skip
        layer = type(self).__name__
        self.in_channels = size_arg(layer, "in_channels", in_channels, positive=True)
        self.out_channels = size_arg(layer, "out_channels", out_channels, positive=True)
        self.groups = size_arg(layer, "groups", groups, positive=True)
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{layer}: groups={groups} must divide in_channels={in_channels} and "
                f"out_channels={out_channels}"
            )
        self.kernel_size = per_axis(layer, "kernel_size", kernel_size, self.spatial, 1)
        self.stride, self.padding, self.dilation = conv_window(
            layer, self.kernel_size, stride, padding, dilation
        )
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in)
        wkey, bkey = two_keys(layer, key)
        target = float_dtype(layer, dtype)
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = random.uniform(wkey, shape, target, -bound, bound).requires_grad_()
        self.bias: Tensor | None = None
        if bias:
            self.bias = random.uniform(bkey, (out_channels,), target, -bound, bound)
            self.bias.requires_grad_()

    def forward(self, x: Tensor) -> Tensor:
        check_channels(type(self).__name__, x, self.in_channels, self.spatial)
        return conv(
            x, self.weight, self.stride, self.padding, self.dilation, self.groups, bias=self.bias
        )

    def extra_repr(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, padding={self.padding}"
        )


class Conv1d(_Conv):
    """A 1-D convolution layer, as PyTorch's ``nn.Conv1d``: ``vkml.conv(x, weight, stride,
    padding, dilation, groups, bias=bias)`` of an input (N, in_channels, L).

    Args:
        in_channels, out_channels: channels of the input and the output.
        kernel_size, stride, padding, dilation, groups: as ``vkml.conv`` takes them.
        bias: whether to add a learned bias.
        key: a ``vkml.random.key`` (the parameters live on its device); without one, the key
            ``vkml.nn.manual_seed`` seeded.
        dtype: floating-point dtype of the parameters.

    ``weight`` (out_channels, in_channels / groups, *kernel_size) and ``bias`` are drawn
    from uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in_channels / groups * the
    kernel's size, as PyTorch's defaults.
    """

    spatial = 1


class Conv2d(_Conv):
    """``Conv1d`` for images (N, in_channels, H, W), as PyTorch's ``nn.Conv2d``."""

    spatial = 2


class Conv3d(_Conv):
    """``Conv1d`` for volumes (N, in_channels, D, H, W), as PyTorch's ``nn.Conv3d``."""

    spatial = 3


class _Pool(Module):
    spatial = 0

    def _window(self, kernel_size: Any, stride: Any, padding: Any) -> None:
        layer = type(self).__name__
        self.kernel_size = per_axis(layer, "kernel_size", kernel_size, self.spatial, 1)
        self.stride = (
            self.kernel_size
            if stride is None
            else per_axis(layer, "stride", stride, self.spatial, 1)
        )
        self.padding = per_axis(layer, "padding", padding, self.spatial, 0)
        if any(2 * p > k for p, k in zip(self.padding, self.kernel_size)):
            raise ValueError(
                f"{layer}: padding={padding!r} must be at most half the kernel_size={kernel_size!r}"
            )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(_Pool):
    """The maximum of each window of the last axis of (N, C, L), as PyTorch's
    ``nn.MaxPool1d`` (``vkml.max_pool``: the gradient goes to each window's first maximum).

    Args:
        kernel_size: the window; stride: its step (default: the window); padding: on both
            sides, at most half the window; dilation: the spacing of its taps.
    """

    spatial = 1

    def __init__(
        self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1
    ) -> None:
        self._window(kernel_size, stride, padding)
        self.dilation = per_axis(type(self).__name__, "dilation", dilation, self.spatial, 1)

    def forward(self, x: Tensor) -> Tensor:
        return max_pool(x, self.kernel_size, self.stride, self.padding, self.dilation)


class MaxPool2d(MaxPool1d):
    """``MaxPool1d`` over the last two axes of (N, C, H, W), as PyTorch's ``nn.MaxPool2d``."""

    spatial = 2


class AvgPool1d(_Pool):
    """The mean of each window of the last axis of (N, C, L), as PyTorch's ``nn.AvgPool1d``
    (``vkml.avg_pool``).

    Args:
        kernel_size, stride, padding: as ``MaxPool1d``'s.
        count_include_pad: divide by the whole window (True, PyTorch's default) or by the
            elements of the input in it.
    """

    spatial = 1

    def __init__(
        self, kernel_size: Any, stride: Any = None, padding: Any = 0,
        count_include_pad: bool = True,
    ) -> None:  # fmt: skip
        self._window(kernel_size, stride, padding)
        self.count_include_pad = count_include_pad

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool(x, self.kernel_size, self.stride, self.padding, self.count_include_pad)


class AvgPool2d(AvgPool1d):
    """``AvgPool1d`` over the last two axes of (N, C, H, W), as PyTorch's ``nn.AvgPool2d``."""

    spatial = 2


class AdaptiveAvgPool2d(Module):
    """The mean over an ``output_size`` grid of windows of (N, C, H, W) (an int for a
    square grid, None in a pair to keep that axis), as PyTorch's ``nn.AdaptiveAvgPool2d``;
    ``AdaptiveAvgPool2d(1)`` is a global average pool."""

    def __init__(self, output_size: Any) -> None:
        sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 2
        if len(sizes) != 2:
            raise ValueError(
                f"AdaptiveAvgPool2d: output_size={output_size!r} must be an int or two entries"
            )
        checked = (
            output_size if sizes is not output_size else [1 if s is None else s for s in sizes]
        )
        per_axis("AdaptiveAvgPool2d", "output_size", checked, 2, 1)
        self.output_size = tuple(sizes)

    def forward(self, x: Tensor) -> Tensor:
        return adaptive_avg_pool(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Flatten(Module):
    """Axes ``start_dim`` to ``end_dim`` merged into one (default: all but the batch axis),
    as PyTorch's ``nn.Flatten``: a CNN's features to a linear head."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
