"""vkml.nn: modules, layers, losses and optimisers on vkml's lazy tensors.

A training step is one invocation: ``opt.step(lambda: loss_fn(model(x), y))`` builds the
forward, the backward and the update as one graph, realizes it once and rebinds the
parameters to their new values; ``opt.compile_step(loss_fn)`` records that step once and
replays it on each new batch without rebuilding the graph. See docs/nn.md.
"""

from __future__ import annotations

from vkml.nn.conv_layers import (
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    Conv1d,
    Conv2d,
    Conv3d,
    Flatten,
    MaxPool1d,
    MaxPool2d,
)
from vkml.nn.keys import manual_seed
from vkml.nn.layers import GELU, Dropout, Embedding, Linear, ReLU, Sequential
from vkml.nn.losses import cross_entropy, mse_loss
from vkml.nn.module import Module
from vkml.nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from vkml.nn.optim import SGD, Adam, AdamW, Optimizer
from vkml.nn.step import CompiledStep

__all__ = [
    "GELU", "SGD", "Adam", "AdamW", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BatchNorm1d",
    "BatchNorm2d", "CompiledStep", "Conv1d", "Conv2d", "Conv3d", "Dropout", "Embedding", "Flatten",
    "GroupNorm", "LayerNorm", "Linear", "MaxPool1d", "MaxPool2d", "Module", "Optimizer", "ReLU",
    "Sequential", "cross_entropy", "manual_seed", "mse_loss",
]  # fmt: skip
