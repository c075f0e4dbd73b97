"""A convolutional network on scikit-learn's handwritten digits, one invocation per step.

    python -m vkml.examples.cnn [--device cpu] [--epochs 20]   (or: make demo-cnn, vkml demo cnn)

Two blocks of convolution (3x3), batch norm, ReLU and 2x2 max pooling, then a linear head,
learn the 8x8 digit images (1 x 8 x 8 -> 16 x 4 x 4 -> 32 x 2 x 2 -> 10) with SGD and
momentum, by the steps of ``vkml.examples.digits`` (its ``Recipe``): each training step
(forward, backward, update, and the batch norms' running averages) is one invocation of one
compiled function; the first step is repeated on ``reference`` from the same seed and
compared; the held-out accuracy is measured in evaluation mode (the running averages). The
last line printed is machine-readable:
``result: accuracy=0.xxxx steps_per_s=N device=NAME compile_s=N``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import vkml
from vkml import nn
from vkml.examples import digits

ACCURACY_TARGET = 0.985  # the MLP reaches 0.9721


def load_images(seed: int) -> digits.Digits:
    """The digits of ``digits.load_data`` as images (N, 1, 8, 8)."""
    data = digits.load_data(seed)
    return digits.Digits(
        data.x_train.reshape(-1, 1, 8, 8), data.y_train, data.x_test.reshape(-1, 1, 8, 8),
        data.y_test,
    )  # fmt: skip


def make_model(seed: int, device: Any) -> nn.Sequential:
    """The CNN; its initial weights depend only on ``seed`` (one key per layer)."""
    keys = vkml.random.split(vkml.random.key(seed, device=device), 3)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, key=keys[0]), nn.BatchNorm2d(16, device=device),
        nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, key=keys[1]), nn.BatchNorm2d(32, device=device),
        nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10, key=keys[2]),
    )  # fmt: skip


CNN = digits.Recipe(
    "cnn", "CNN (conv-BN-ReLU-pool x2, linear)", load_images, make_model, ACCURACY_TARGET,
    epochs=20, batch_size=64, lr=0.05,
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """The digits demo's steps with the CNN (``digits.main``)."""
    return digits.main(argv, CNN)


if __name__ == "__main__":
    sys.exit(main())
