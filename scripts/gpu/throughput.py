"""Throughput on a GPU, vkml against PyTorch CUDA in one run: issue 12's remaining targets.

    python scripts/gpu/throughput.py [--device vulkan:0] [--repeats 20] [--no-peers]

Cases, each on every ``--device`` (and on PyTorch CUDA where it is installed):

- ``tiny, realize, queued (not waited for)``: ``x + 1`` on 4 resident floats, realized, not
  read: a realize returns once its call is queued (PyTorch: a kernel launched, not synced).
- ``tiny, realize, waited for (left on the device)``: the same, then ``Device.synchronize()``
  (PyTorch: ``torch.cuda.synchronize()``).
Every other vkml case waits for its call the same way, as PyTorch's are synchronized.
- ``sum 16M f32``: vkml's pairwise sum of 16M float32 (``torch.sum`` beside it); checked
  against float64 NumPy within the pairwise bound.
- ``matmul 4096^3 f32``: float32 with float32 accumulation (ADR 0005; PyTorch with TF32 off,
  so both do the same arithmetic); GFLOP/s in the GB/s column's place; checked against a
  float64 product on a sample of rows.
- ``MLP step 784-1024-1024-10, batch 1024``: one SGD-with-momentum training step of a
  three-layer ReLU network, forward, backward and update in one invocation (vkml.nn); the
  same model and optimiser in PyTorch eager; the losses of the first step are compared.

Prints one Markdown table (median and minimum per call) and vkml's counters. Every vkml graph
must come from the compile cache on a machine without iree-base-compiler (scripts/gpu/
prepare.sh runs this script too, so its graphs are precompiled).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from bench import Row, row, timed, waited

import vkml
from vkml import nn

SUM_N = 16 * 1024 * 1024
MATMUL_N = 4096
MLP = (784, 1024, 1024, 10)
BATCH = 1024


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "sum": rng.standard_normal(SUM_N).astype(np.float32),
        "a": rng.standard_normal((MATMUL_N, MATMUL_N)).astype(np.float32),
        "b": rng.standard_normal((MATMUL_N, MATMUL_N)).astype(np.float32),
        "x": rng.standard_normal((BATCH, MLP[0])).astype(np.float32),
        "y": rng.integers(0, MLP[-1], BATCH).astype(np.int64),
    }


def _vkml_mlp(dev: vkml.Device, host: dict[str, np.ndarray]) -> tuple[Callable[[], Any], list]:
    """The vkml training step, and the model's initial weights (PyTorch starts from them)."""
    keys = vkml.random.split(vkml.random.key(0, device=dev), len(MLP) - 1)
    layers: list[Any] = []
    for k, (fan_in, fan_out) in enumerate(itertools.pairwise(MLP)):
        layers += [nn.Linear(fan_in, fan_out, key=keys[k]), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    weights = [p.numpy() for p in model.parameters()]
    opt = nn.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = vkml.tensor(host["x"], device=dev), vkml.tensor(host["y"], device=dev)
    return (lambda: opt.step(lambda: nn.cross_entropy(model(x), y))), weights


def vkml_rows(name: str, repeats: int, host: dict[str, np.ndarray]) -> tuple[list[Row], list]:
    """The vkml rows, and the MLP's initial weights (empty if it did not get that far)."""
    dev = vkml.device(name)
    where = f"vkml {name}" + (f" ({dev.target.name})" if hasattr(dev, "target") else "")
    rows: list[Row] = []
    weights: list = []
    try:
        resident = vkml.tensor(np.ones(4, np.float32), device=dev)
        rows.append(row("tiny, realize, queued (not waited for)", where,
                        timed(lambda: (resident + 1.0).realize(), repeats * 10)))  # fmt: skip
        rows.append(row("tiny, realize, waited for (left on the device)", where,
                        timed(waited(dev, lambda: (resident + 1.0).realize()), repeats * 10)))  # fmt: skip
        s = vkml.tensor(host["sum"], device=dev)
        got = float(s.sum().numpy())
        want = float(host["sum"].astype(np.float64).sum())
        note = f"|error| {abs(got - want):.2g} vs float64"
        rows.append(row("sum 16M f32", where, timed(waited(dev, lambda: s.sum().realize()), repeats),
                        host["sum"].nbytes, note))  # fmt: skip
        a, b = (vkml.tensor(host[k], device=dev) for k in "ab")
        product = (a @ b).numpy()
        sample = host["a"][:8].astype(np.float64) @ host["b"].astype(np.float64)
        rel = float(np.abs(product[:8] - sample).max() / np.abs(sample).max())
        t = timed(waited(dev, lambda: (a @ b).realize()), repeats)
        rows.append(_gflops(row("matmul 4096^3 f32", where, t, 0, f"rel error {rel:.1g}"), t))
        step, weights = _vkml_mlp(dev, host)
        first_loss = float(step().numpy())
        rows.append(row("MLP step 784-1024-1024-10, batch 1024", where,
                        timed(waited(dev, step), repeats),
                        0, f"first loss {first_loss:.6f}"))  # fmt: skip
    except vkml.CompileError as exc:
        first_line = str(exc).split(". ")[0]
        rows.append(row("(remaining cases)", where, None, note=f"not in cache: {first_line}"))
    return rows, weights


def _gflops(r: Row, t: tuple[float, float] | None) -> Row:
    if t is None:
        return r
    return (*r[:4], f"{2 * MATMUL_N**3 / t[0] / 1e9:.0f} GFLOP/s", r[5])


def torch_rows(repeats: int, host: dict[str, np.ndarray], weights: list) -> list[Row]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available() or not weights:
        return []
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 arithmetic, as vkml's contract
    torch.backends.cudnn.allow_tf32 = False
    where = f"PyTorch CUDA ({torch.cuda.get_device_name(0)})"
    sync = torch.cuda.synchronize

    def synced(fn: Callable[[], Any]) -> Callable[[], None]:
        def call() -> None:
            fn()
            sync()

        return call

    one = torch.ones(4, device="cuda")
    s = torch.from_numpy(host["sum"]).cuda()
    a, b = (torch.from_numpy(host[k]).cuda() for k in "ab")
    layers: list[Any] = []
    for k, (fan_in, fan_out) in enumerate(itertools.pairwise(MLP)):
        linear = torch.nn.Linear(fan_in, fan_out).cuda()
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(weights[2 * k]))
            linear.bias.copy_(torch.from_numpy(weights[2 * k + 1]))
        layers += [linear, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.from_numpy(host["x"]).cuda(), torch.from_numpy(host["y"]).cuda()

    def step() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    first = float(step())
    t = timed(synced(lambda: a @ b), repeats)
    return [
        row("tiny, realize, queued (not waited for)", where, timed(lambda: one + 1.0, repeats * 10)),
        row("tiny, realize, waited for (left on the device)", where,
            timed(synced(lambda: one + 1.0), repeats * 10)),
        row("sum 16M f32", where, timed(synced(lambda: s.sum()), repeats), host["sum"].nbytes),
        _gflops(row("matmul 4096^3 f32", where, t, 0, "TF32 off"), t),
        row("MLP step 784-1024-1024-10, batch 1024", where, timed(synced(step), repeats), 0,
            f"first loss {first:.6f}, eager"),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", action="append", help="vkml device (default vulkan:0)")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per case")
    parser.add_argument("--no-peers", action="store_true", help="skip the PyTorch rows")
    args = parser.parse_args(argv)
    host = _inputs()
    vkml.reset_stats()
    rows: list[Row] = []
    weights: list = []
    for name in args.device or ["vulkan:0"]:
        found, made = vkml_rows(name, args.repeats, host)
        rows, weights = rows + found, weights or made
    stats = vkml.stats()
    if not args.no_peers:
        rows += torch_rows(args.repeats, host, weights)
    print("| case | where | median | min | GB/s | note |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"\nvkml counters: compiles={stats['compiles']:.0f} "
          f"invocations={stats['invocations']:.0f}")  # fmt: skip
    return 1 if any(r[5].startswith("not in cache") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
