"""The main job: train an MLP on scikit-learn's handwritten digits, one invocation per step.

    python -m vkml.examples.digits [--device cpu] [--epochs 30]   (or: make demo, vkml demo)

An MLP 64 -> 128 -> 10 (ReLU) learns the 8x8 digit images that ship inside scikit-learn
(``load_digits``, no download) with SGD and momentum. Each training step (forward, backward
and update) is ONE invocation of one compiled function: the step is recorded at the first
call (``opt.compile_step``) and replayed on each new batch without rebuilding its graph.
Before training, the first step is repeated on the ``reference`` device from the same seed
(same initial weights, bit for bit) and the two steps' losses and new weights compared.
The last line printed is machine-readable:
``result: accuracy=0.xxxx steps_per_s=N device=NAME compile_s=N``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import vkml
from vkml import nn
from vkml.compiler.atomic import write_atomically

ACCURACY_TARGET = 0.95
# one reference step against the device's: f32 matmuls may associate differently
STEP_TOLERANCE: dict[str, Any] = {"rtol": 1e-4, "atol": 1e-5}


@dataclass
class Digits:
    """The digits split in two: images scaled to [0, 1] (float32), labels (int32)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_data(seed: int, test_fraction: float = 0.2) -> Digits:
    """scikit-learn's 1,797 digits, shuffled by ``seed`` and split into train and held-out."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = round(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return Digits(x[train], y[train], x[test], y[test])


def make_model(seed: int, device: Any) -> nn.Sequential:
    """The MLP 64 -> 128 -> 10 with ReLU; its initial weights depend only on ``seed``."""
    keys = vkml.random.split(vkml.random.key(seed, device=device), 2)
    return nn.Sequential(
        nn.Linear(64, 128, key=keys[0]), nn.ReLU(), nn.Linear(128, 10, key=keys[1])
    )


def make_optimizer(model: nn.Module, lr: float) -> nn.SGD:
    return nn.SGD(model.parameters(), lr=lr, momentum=0.9)


def training_step(
    model: nn.Module, opt: nn.Optimizer, x: vkml.Tensor, y: vkml.Tensor
) -> vkml.Tensor:
    """One step (forward, backward, update) as one invocation; returns the batch's loss."""
    loss = opt.step(lambda: nn.cross_entropy(model(x), y))
    assert loss is not None
    return loss


def compiled_step(model: nn.Module, opt: nn.Optimizer) -> nn.CompiledStep:
    """``training_step`` recorded once and replayed: ``step(x, y)`` takes NumPy batches (or
    tensors on the model's device) and skips rebuilding the graph from the second call."""
    return opt.compile_step(lambda x, y: nn.cross_entropy(model(x), y))


def accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray, device: Any) -> float:
    """The fraction of ``x`` that ``model`` classifies as ``y`` (one invocation), in
    evaluation mode (a batch norm's running averages); the model is left in training mode."""
    model.eval()
    predicted = model(vkml.tensor(x, device=device)).argmax(axis=1).numpy()
    model.train()
    return float(np.mean(predicted == y))


def batches(
    data: Digits, batch_size: int, seed: int, epoch: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The training set in full batches, reshuffled each epoch (the remainder is dropped,
    so every step has one shape and one compiled function)."""
    order = np.random.default_rng((seed, epoch)).permutation(len(data.y_train))
    for start in range(0, len(order) - batch_size + 1, batch_size):
        idx = order[start : start + batch_size]
        yield data.x_train[idx], data.y_train[idx]


@dataclass
class Run:
    """What a training run measured."""

    model: nn.Sequential
    losses: list[float] = field(default_factory=list)
    accuracies: list[tuple[int, float]] = field(default_factory=list)  # (step, held-out acc.)
    steps: int = 0
    step_seconds: float = 0.0  # time in steps 2.. (step 1 compiles)
    compile_seconds: float = 0.0

    @property
    def accuracy(self) -> float:
        return self.accuracies[-1][1] if self.accuracies else float("nan")

    @property
    def steps_per_s(self) -> float:
        return (self.steps - 1) / self.step_seconds if self.step_seconds else 0.0


def train(
    data: Digits,
    device: Any,
    *,
    seed: int = 0,
    epochs: int = 30,
    batch_size: int = 128,
    lr: float = 0.1,
    max_steps: int | None = None,
    progress: bool = False,
    make: Callable[[int, Any], nn.Sequential] = make_model,
) -> Run:
    """Train the model ``make(seed, device)`` makes (the MLP by default) on ``device``;
    evaluate on the held-out split after every epoch."""
    compile_before = vkml.stats()["compile_seconds"]
    model = make(seed, device)
    opt = make_optimizer(model, lr)
    per_epoch = len(data.y_train) // batch_size
    total = epochs * per_epoch if max_steps is None else min(max_steps, epochs * per_epoch)
    run = Run(model)
    step = compiled_step(model, opt)
    bar = _progress_bar(total, device, progress)
    for epoch in range(epochs):
        for xb, yb in batches(data, batch_size, seed, epoch):
            if run.steps == total:
                break
            start = time.perf_counter()
            loss = step(xb, yb).item()  # uploads the batch, one invocation, reads the loss
            if run.steps:
                run.step_seconds += time.perf_counter() - start
            run.steps += 1
            run.losses.append(loss)
            if bar is not None:
                bar.update(1)
                if run.steps % 10 == 0 or run.steps == total:
                    bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
        run.accuracies.append((run.steps, accuracy(model, data.x_test, data.y_test, device)))
        if run.steps == total:
            break
    if bar is not None:
        bar.close()
    run.compile_seconds = vkml.stats()["compile_seconds"] - compile_before
    return run


def _progress_bar(total: int, device: Any, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=f"training on {device}", unit="step", file=sys.stderr)


def check_against_reference(
    data: Digits, device: Any, seed: int, batch_size: int, lr: float,
    make: Callable[[int, Any], nn.Sequential] = make_model,
) -> tuple[bool, str]:  # fmt: skip
    """Run the first training step on ``device`` and on ``reference`` from the same seed.

    Returns whether the initial weights are bit-identical and the step's loss and new
    weights agree within ``STEP_TOLERANCE``, and a line saying how close they came.
    """
    xb, yb = next(batches(data, batch_size, seed, 0))
    states: dict[str, dict[str, np.ndarray]] = {}
    losses: dict[str, float] = {}
    initial: dict[str, dict[str, np.ndarray]] = {}
    for where in (vkml.device(device), vkml.reference):
        model = make(seed, where)
        opt = make_optimizer(model, lr)
        initial[where.name] = model.state_dict()
        x, y = vkml.tensor(xb, device=where), vkml.tensor(yb, device=where)
        losses[where.name] = training_step(model, opt, x, y).item()
        states[where.name] = model.state_dict()
    mine, ref = vkml.device(device).name, vkml.reference.name
    same_init = all(np.array_equal(initial[mine][k], initial[ref][k]) for k in initial[ref])
    worst = max(float(np.max(np.abs(states[mine][k] - states[ref][k]))) for k in states[ref])
    close = np.isclose(losses[mine], losses[ref], **STEP_TOLERANCE) and all(
        np.allclose(states[mine][k], states[ref][k], **STEP_TOLERANCE) for k in states[ref]
    )
    line = (
        f"one step on {mine} vs reference: initial weights "
        f"{'bit-identical' if same_init else 'DIFFER'}, loss {losses[mine]:.6f} vs "
        f"{losses[ref]:.6f}, largest weight difference {worst:.2e} "
        f"({'within' if close else 'OUTSIDE'} rtol={STEP_TOLERANCE['rtol']}, "
        f"atol={STEP_TOLERANCE['atol']})"
    )
    return same_init and bool(close), line


def save_curve(run: Run, path: str, title: str = "digits MLP 64-128-10") -> None:
    """The loss per step and the held-out accuracy per epoch, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, loss_ax = plt.subplots(figsize=(8, 4.5))
    loss_ax.plot(np.arange(1, len(run.losses) + 1), run.losses, color="tab:blue", lw=0.8)
    loss_ax.set_xlabel("step")
    loss_ax.set_ylabel("training loss (cross-entropy)", color="tab:blue")
    loss_ax.set_yscale("log")
    acc_ax = loss_ax.twinx()
    steps, accs = zip(*run.accuracies) if run.accuracies else ((), ())
    acc_ax.plot(steps, accs, color="tab:red", marker="o", ms=3)
    acc_ax.set_ylabel("held-out accuracy", color="tab:red")
    acc_ax.set_ylim(0.0, 1.0)
    loss_ax.set_title(f"{title}: accuracy {run.accuracy:.4f}")
    fig.tight_layout()
    write_atomically(Path(path), lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)


def export_predict(
    model: nn.Module, x_test: np.ndarray, device: Any, folder: Path, name: str = "digits"
) -> tuple[bool, list[str]]:
    """The trained model's ``predict`` (labels of a batch of images, in evaluation mode)
    exported to ``folder/NAME.vmfb`` with its weights, loaded again and checked against vkml;
    whether the two agree bit for bit, and the lines that say how to run it without Python."""
    x = x_test.astype(np.float32)
    model.eval()

    def predict(images: vkml.Tensor) -> vkml.Tensor:
        return model(images).argmax(axis=1)

    artifact = vkml.aot.export(
        predict, vkml.spec(x.shape, device=device), device=device, weights=model
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.vmfb"
    artifact.save(path)
    images = io.BytesIO()
    np.save(images, x)
    write_atomically(folder / "images.npy", images.getvalue())
    same = np.array_equal(
        vkml.aot.load(path, device=device).predict(x),
        predict(vkml.tensor(x, device=device)).numpy(),
    )
    verdict = "the same labels as vkml, bit for bit" if same else "labels DIFFERENT from vkml's"
    return same, [
        f"exported predict to {path} (weights in {path.with_suffix('.irpa').name}): {verdict}",
        f"run it without Python: {artifact.command(path, data=folder)}",
    ]


def default_device() -> Any:
    best = getattr(vkml, "best_device", None)
    return best() if best is not None else vkml.cpu


@dataclass(frozen=True)
class Recipe:
    """What a demo on the digits trains and how: the MLP here, the CNN of
    ``vkml.examples.cnn``; ``main`` and ``run_demo`` are the same steps for both."""

    name: str  # the module's (and the files') name
    title: str  # the model, as the first line and the curve name it
    load: Callable[[int], Digits]
    make: Callable[[int, Any], nn.Sequential]
    target: float  # the held-out accuracy a full run must reach
    epochs: int
    batch_size: int
    lr: float


MLP = Recipe("digits", "MLP 64-128-10", load_data, make_model, ACCURACY_TARGET, 30, 128, 0.1)


def parse_args(argv: Sequence[str] | None, recipe: Recipe = MLP) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"python -m vkml.examples.{recipe.name}",
        description=f"Train the {recipe.title} on the handwritten digits, one invocation per step.",
    )
    parser.add_argument("--device", help="device name (default: vkml.best_device(), else cpu)")
    parser.add_argument("--epochs", type=int, default=recipe.epochs)
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps")
    parser.add_argument("--batch-size", type=int, default=recipe.batch_size)
    parser.add_argument("--lr", type=float, default=recipe.lr)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--plot",
        default=os.path.join(tempfile.gettempdir(), f"vkml-{recipe.name}.png"),
        help="where to write the loss/accuracy curve (PNG)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--export",
        default=os.path.join(tempfile.gettempdir(), f"vkml-{recipe.name}"),
        help="where to write the exported predict module (.vmfb, .irpa) and its input",
    )
    return parser.parse_args(argv)


def missing_packages() -> list[str]:
    """The packages of the ``examples`` extra that are not installed."""
    import importlib.util

    return [
        name for name in ("sklearn", "tqdm", "matplotlib") if importlib.util.find_spec(name) is None
    ]


def main(argv: Sequence[str] | None = None, recipe: Recipe = MLP) -> int:
    """Train, check, plot and print the result line; exit status 1 if a check failed, 130
    if interrupted (Ctrl-C): every file is written atomically, so none is left half-written."""
    try:
        return run_demo(parse_args(argv, recipe), recipe)
    except KeyboardInterrupt:
        print(f"\n{recipe.name}: interrupted; no file was left half-written", file=sys.stderr)
        return 130


def run_demo(args: argparse.Namespace, recipe: Recipe = MLP) -> int:
    """The demo's steps, in order, with the parsed command line."""
    missing = missing_packages()
    if missing:
        print(
            f"{recipe.name}: error: needs {', '.join(missing)}: pip install 'vkml[examples]' "
            f"(scikit-learn, tqdm, matplotlib)",
            file=sys.stderr,
        )
        return 1
    device = vkml.device(args.device) if args.device else default_device()
    data = recipe.load(args.seed)
    print(
        f"{recipe.name}: {len(data.y_train)} training and {len(data.y_test)} held-out images, "
        f"{recipe.title} on {device}"
    )
    vkml.reset_stats()
    agrees, line = check_against_reference(
        data, device, args.seed, args.batch_size, args.lr, recipe.make
    )
    print(line)
    run = train(
        data,
        device,
        seed=args.seed,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        max_steps=args.steps,
        progress=not args.no_progress,
        make=recipe.make,
    )
    save_curve(run, args.plot, f"digits {recipe.title}")
    print(f"loss/accuracy curve: {args.plot}")
    print(
        f"{run.steps} steps, final loss {run.losses[-1]:.4f}, held-out accuracy "
        f"{run.accuracy:.4f} (target {recipe.target})"
    )
    try:
        exported, lines = export_predict(
            run.model, data.x_test, device, Path(args.export), recipe.name
        )
    except ModuleNotFoundError as exc:  # a machine that runs precompiled modules only
        if not (exc.name or "").startswith("iree.compiler"):
            raise
        exported, lines = (
            True,
            ["export skipped: it compiles, and iree-base-compiler is not installed"],
        )
    print("\n".join(lines))
    compile_s = vkml.stats()["compile_seconds"]
    print(
        f"result: accuracy={run.accuracy:.4f} steps_per_s={run.steps_per_s:.0f} "
        f"device={device.name} compile_s={compile_s:.2f}"
    )
    full_run = args.steps is None
    return 0 if agrees and exported and (run.accuracy >= recipe.target or not full_run) else 1


if __name__ == "__main__":
    sys.exit(main())
