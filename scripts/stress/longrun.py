"""Long runs in one process: compiled training steps and realizes of fresh small graphs, with
what a leak would grow measured every so many steps.

    .venv/bin/python scripts/stress/longrun.py [--steps 100000] [--every 10000] [--devices cpu,vulkan:0]

For each device, two runs of ``--steps`` each: the digits MLP's compiled training step
(``opt.compile_step``, one invocation per step, a new batch each time), and a realize of a
graph built afresh each time from new data (the structure repeats, so after the first compile
it is a memory hit: what is measured is what a realize keeps). Every ``--every`` steps:
resident memory (``/proc/self/status`` VmRSS), open file descriptors (``/proc/self/fd``), the
bytes IREE's allocator holds live on the device (its statistics), and the number of compiled
executables and cached modules held in memory. Growth is measured from the first sample after
warm-up (the second) to the last; the target is at most 5 %.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import vkml
from vkml.compiler.cache import default_cache
from vkml.examples import digits
from vkml.graph.node import Node

TARGET_GROWTH = 0.05


@dataclass
class Sample:
    step: int
    rss_kib: int
    fds: int
    buffers: int
    live_bytes: int | None
    executables: int
    cached_modules: int


@dataclass
class Run:
    device: str
    kind: str
    samples: list[Sample] = field(default_factory=list)
    seconds: float = 0.0

    def growth(self, name: str) -> float:
        """Relative growth of ``name`` from the first sample after warm-up to the last."""
        if len(self.samples) < 3:
            return 0.0
        start, end = getattr(self.samples[1], name), getattr(self.samples[-1], name)
        if start is None or end is None:
            return 0.0
        return (end - start) / start if start else float(end > start)


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _live_bytes(device: vkml.Device) -> int | None:
    """Bytes IREE's allocator has handed out and not had back, where it counts frees: the
    Vulkan HAL's statistics count allocations only (``device_bytes_freed`` stays 0 while
    RSS is flat), so there this is None."""
    if device.kind != "cpu":
        return None
    stats = device.session.allocator.statistics  # type: ignore[attr-defined]
    return sum(
        int(stats[f"{m}_bytes_allocated"]) - int(stats[f"{m}_bytes_freed"])
        for m in ("host", "device")
    )


def _buffers_held() -> int:
    """Graph nodes bound to device memory: every IREE buffer vkml keeps alive."""
    return sum(1 for o in gc.get_objects() if isinstance(o, Node) and o.storage is not None)


def sample(step: int, device: vkml.Device) -> Sample:
    return Sample(
        step, _rss_kib(), len(os.listdir("/proc/self/fd")), _buffers_held(), _live_bytes(device),
        len(device._executables),  # type: ignore[attr-defined]
        default_cache().info()["memory_entries"],  # type: ignore[arg-type]
    )  # fmt: skip


def training(device: vkml.Device) -> Callable[[int], None]:
    data = digits.load_data(0)
    model = digits.make_model(0, device)
    step = digits.compiled_step(model, digits.make_optimizer(model, 0.05))
    n = len(data.y_train) // 128

    def one(i: int) -> None:
        at = (i % n) * 128
        step(data.x_train[at : at + 128], data.y_train[at : at + 128]).item()

    return one


def fresh_graphs(device: vkml.Device) -> Callable[[int], None]:
    rng = np.random.default_rng(1)
    pool = rng.normal(size=(64, 16, 16)).astype(np.float32)

    def one(i: int) -> None:
        x = vkml.tensor(pool[i % 64], device=device)
        y = ((x * 1.5 + 0.25).maximum(x) @ x.transpose()).sum(axis=1)
        y.numpy()

    return one


def run(kind: str, device_name: str, steps: int, every: int) -> Run:
    device = vkml.device(device_name)
    one = (training if kind == "training" else fresh_graphs)(device)
    result = Run(device_name, kind)
    start = time.perf_counter()
    for i in range(steps):
        one(i)
        if i % every == 0 or i == steps - 1:
            result.samples.append(sample(i + 1, device))
            s = result.samples[-1]
            print(
                f"{device_name} {kind}: step {i + 1:,}/{steps:,} rss {s.rss_kib / 1024:.1f} MiB "
                f"fds {s.fds} buffers {s.buffers} executables {s.executables}",
                flush=True,
            )
    result.seconds = time.perf_counter() - start
    return result


def report(runs: list[Run], steps: int, every: int) -> str:
    lines = [
        "## Long runs",
        "",
        (
            f"{steps:,} steps per run, sampled every {every:,}; growth from the second "
            f"sample (after warm-up) to the last; target ≤ {TARGET_GROWTH:.0%}."
        ),
        "",
        (
            "| device | run | steps/s | RSS first → last (MiB) | RSS growth | fds "
            "| buffers held | IREE live bytes | executables | cached modules | within target |"
        ),
        "|---|---|---:|---|---:|---|---|---|---|---|---|",
    ]
    for r in runs:
        a, b = r.samples[1 if len(r.samples) > 2 else 0], r.samples[-1]
        names = ("rss_kib", "fds", "buffers", "live_bytes")
        ok = all(r.growth(n) <= TARGET_GROWTH for n in names)
        ok = ok and b.executables == a.executables and b.cached_modules == a.cached_modules
        lines.append(
            f"| {r.device} | {r.kind} | {steps / r.seconds:,.0f} | {a.rss_kib / 1024:.1f} → "
            f"{b.rss_kib / 1024:.1f} | {r.growth('rss_kib'):+.1%} | {a.fds} → {b.fds} | "
            f"{a.buffers} → {b.buffers} | {_bytes(a.live_bytes)} → {_bytes(b.live_bytes)} | "
            f"{a.executables} → {b.executables} | "
            f"{a.cached_modules} → {b.cached_modules} | {'yes' if ok else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def _bytes(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--devices", default="cpu,vulkan:0")
    args = parser.parse_args(argv)
    runs = [
        run(kind, name, args.steps, args.every)
        for name in args.devices.split(",")
        for kind in ("training", "fresh graphs")
    ]
    text = report(runs, args.steps, args.every)
    print(text)
    return text


if __name__ == "__main__":
    main()
