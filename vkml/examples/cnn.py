"""A convolutional network on scikit-learn's handwritten digits, one invocation per step.

    python -m vkml.examples.cnn [--device cpu] [--epochs 20]   (or: make demo-cnn, vkml demo cnn)

Two blocks of convolution (3x3), batch norm, ReLU and 2x2 max pooling, then a linear head,
learn the 8x8 digit images (1 x 8 x 8 -> 16 x 4 x 4 -> 32 x 2 x 2 -> 10) with SGD and
momentum, as ``vkml.examples.digits`` trains its MLP: each training step (forward, backward,
update, and the batch norms' running averages) is one invocation of one compiled function;
the first step is repeated on ``reference`` from the same seed and compared; the held-out
accuracy is measured in evaluation mode (the running averages). The last line printed is
machine-readable: ``result: accuracy=0.xxxx steps_per_s=N device=NAME compile_s=N``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import vkml
from vkml import nn
from vkml.examples import digits

ACCURACY_TARGET = 0.985  # the MLP reaches 0.9721
TITLE = "digits CNN (conv-BN-ReLU-pool x2, linear)"


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


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m vkml.examples.cnn",
        description="Train a CNN on the handwritten digits, one invocation per step.",
    )
    parser.add_argument("--device", help="device name (default: vkml.best_device(), else cpu)")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--plot",
        default=os.path.join(tempfile.gettempdir(), "vkml-cnn.png"),
        help="where to write the loss/accuracy curve (PNG)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--export",
        default=os.path.join(tempfile.gettempdir(), "vkml-cnn"),
        help="where to write the exported predict module (.vmfb, .irpa) and its input",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, check, plot and print the result line; exit status 1 if a check failed, 130
    if interrupted (Ctrl-C): every file is written atomically."""
    try:
        return run_demo(parse_args(argv))
    except KeyboardInterrupt:
        print("\ncnn: interrupted; no file was left half-written", file=sys.stderr)
        return 130


def run_demo(args: argparse.Namespace) -> int:
    missing = digits.missing_packages()
    if missing:
        print(
            f"cnn: error: needs {', '.join(missing)}: pip install 'vkml[examples]' "
            f"(scikit-learn, tqdm, matplotlib)",
            file=sys.stderr,
        )
        return 1
    device = vkml.device(args.device) if args.device else digits.default_device()
    data = load_images(args.seed)
    print(
        f"cnn: {len(data.y_train)} training and {len(data.y_test)} held-out images, "
        f"{TITLE} on {device}"
    )
    vkml.reset_stats()
    agrees, line = digits.check_against_reference(
        data, device, args.seed, args.batch_size, args.lr, make=make_model
    )
    print(line)
    run = digits.train(
        data, device, seed=args.seed, epochs=args.epochs, batch_size=args.batch_size,
        lr=args.lr, max_steps=args.steps, progress=not args.no_progress, make=make_model,
    )  # fmt: skip
    digits.save_curve(run, args.plot, TITLE)
    print(f"loss/accuracy curve: {args.plot}")
    print(
        f"{run.steps} steps, final loss {run.losses[-1]:.4f}, held-out accuracy "
        f"{run.accuracy:.4f} (target {ACCURACY_TARGET})"
    )
    try:
        exported, lines = digits.export_predict(
            run.model, data.x_test, device, Path(args.export), "cnn"
        )
    except ModuleNotFoundError as exc:  # a machine that runs precompiled modules only
        if not (exc.name or "").startswith("iree.compiler"):
            raise
        exported, lines = (
            True,
            ["export skipped: it compiles, and iree-base-compiler is not installed"],
        )
    print("\n".join(lines))
    print(
        f"result: accuracy={run.accuracy:.4f} steps_per_s={run.steps_per_s:.0f} "
        f"device={device.name} compile_s={vkml.stats()['compile_seconds']:.2f}"
    )
    full_run = args.steps is None
    return 0 if agrees and exported and (run.accuracy >= ACCURACY_TARGET or not full_run) else 1


if __name__ == "__main__":
    sys.exit(main())
