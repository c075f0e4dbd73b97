"""Small GPU benchmark for a run on another machine: realize latency and elementwise bandwidth.

    python scripts/gpu/bench.py [--device vulkan:0] [--device cpu] [--repeats 20]

Cases, each on every ``--device``:

- ``tiny, upload+realize+readback``: a 4-element float32 array uploaded, ``x + 1``, read back.
- ``tiny, realize+readback``: the same with the input already on the device.
- ``chain8 16M f32``: eight elementwise ops (mul, add, sub, mul, abs, add, mul, sub) over 16M
  float32 already on the device, realized (one invocation) and waited for
  (``Device.synchronize``) but not read back. GB/s counts the
  64 MiB read and the 64 MiB written once each, what a fused kernel must move.
- ``upload 64 MiB`` and ``readback 64 MiB``: host to device and back.

The chain's result is compared bit for bit with NumPy doing the same ops in the same order
(the determinism contract makes these elementwise ops exact). NumPy, and PyTorch on CUDA where
it is installed, run the same cases as a yardstick. Every graph must come from the compile
cache when iree-base-compiler is absent: a device whose graph is missing gets a "not in
cache" row instead of a number. Prints one Markdown table and vkml's counters.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import vkml

N = 16 * 1024 * 1024
TINY = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def chain(x: Any) -> Any:
    """The eight-op chain, for vkml tensors, NumPy arrays and torch tensors alike (Python
    scalars keep float32 in all three)."""
    y = x * 0.999
    y = y + 0.5
    y = y - 0.25
    y = y * 1.001
    y = abs(y)
    y = y + 1.0
    y = y * 0.5
    return y - 0.125


def timed(fn: Callable[[], Any], repeats: int, warmup: int = 2) -> tuple[float, float]:
    """(median, min) seconds of ``fn`` over ``repeats`` calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def waited(dev: vkml.Device, fn: Callable[[], Any]) -> Callable[[], None]:
    """``fn``, then a wait for what it queued on ``dev`` (a realize returns once its call is
    queued: the time of the device's work is until ``dev.synchronize()`` returns)."""

    def call() -> None:
        fn()
        dev.synchronize()

    return call


Row = tuple[str, str, str, str, str, str]


def row(
    case: str, where: str, t: tuple[float, float] | None, nbytes: int = 0, note: str = ""
) -> Row:
    if t is None:
        return (case, where, "-", "-", "-", note)
    med, best = t
    rate = f"{nbytes / med / 1e9:.1f}" if nbytes else ""
    return (case, where, f"{med * 1e6:.0f} µs", f"{best * 1e6:.0f} µs", rate, note)


def vkml_rows(name: str, repeats: int, host: np.ndarray, expected: np.ndarray) -> list[Row]:
    dev = vkml.device(name)
    where = f"vkml {name}"
    if hasattr(dev, "target"):
        where += f" ({dev.target.name})"
    rows: list[Row] = []
    try:
        rows.append(
            row(
                "tiny, upload+realize+readback",
                where,
                timed(lambda: (vkml.tensor(TINY, device=dev) + 1.0).numpy(), repeats * 10),
            )
        )
        resident = vkml.tensor(TINY, device=dev)
        rows.append(
            row(
                "tiny, realize+readback",
                where,
                timed(lambda: (resident + 1.0).numpy(), repeats * 10),
            )
        )
        x = vkml.tensor(host, device=dev)
        x.realize()
        rows.append(
            row(
                "chain8 16M f32",
                where,
                timed(waited(dev, lambda: chain(x).realize()), repeats),
                2 * host.nbytes,
            )
        )
        differ = int(np.count_nonzero(chain(x).numpy().view(np.uint32) != expected.view(np.uint32)))
        note = f"DIFFERS from NumPy in {differ} of {N}" if differ else "bit-identical to NumPy"
        rows[-1] = rows[-1][:5] + (note,)
        result = chain(x).realize()
        rows.append(
            row("readback 64 MiB", where, timed(lambda: result.numpy(), repeats), host.nbytes)
        )
        rows.append(
            row(
                "upload 64 MiB",
                where,
                timed(waited(dev, lambda: vkml.tensor(host, device=dev).realize()), repeats),
                host.nbytes,
            )
        )
    except vkml.CompileError as exc:
        first_line = str(exc).split(". ")[0]
        rows.append(row("(remaining cases)", where, None, note=f"not in cache: {first_line}"))
    return rows


def numpy_rows(repeats: int, host: np.ndarray) -> list[Row]:
    return [
        row("tiny, upload+realize+readback", "NumPy (host)", timed(lambda: TINY + 1.0, repeats * 10)),
        row("chain8 16M f32", "NumPy (host)", timed(lambda: chain(host), repeats),
            2 * host.nbytes, "8 passes, unfused"),
    ]  # fmt: skip


def torch_rows(repeats: int, host: np.ndarray) -> list[Row]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    where = f"PyTorch CUDA ({torch.cuda.get_device_name(0)})"
    tiny = torch.from_numpy(TINY)

    def tiny_step() -> None:
        (tiny.cuda() + 1.0).cpu()

    x = torch.from_numpy(host).cuda()

    def chain_step() -> None:
        chain(x)
        torch.cuda.synchronize()

    def upload() -> None:
        torch.from_numpy(host).cuda()
        torch.cuda.synchronize()

    return [
        row("tiny, upload+realize+readback", where, timed(tiny_step, repeats * 10)),
        row("chain8 16M f32", where, timed(chain_step, repeats), 2 * host.nbytes,
            "eager, 8 kernels"),
        row("readback 64 MiB", where, timed(lambda: x.cpu(), repeats), host.nbytes),
        row("upload 64 MiB", where, timed(upload, repeats), host.nbytes),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--device", action="append", help="vkml device (repeatable; default vulkan:0)"
    )
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per large case")
    parser.add_argument("--no-peers", action="store_true", help="skip the NumPy and PyTorch rows")
    args = parser.parse_args(argv)
    host = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    expected = chain(host)
    vkml.reset_stats()
    rows: list[Row] = []
    for name in args.device or ["vulkan:0"]:
        rows += vkml_rows(name, args.repeats, host, expected)
    stats = vkml.stats()
    if not args.no_peers:
        rows += numpy_rows(args.repeats, host) + torch_rows(args.repeats, host)
    print("| case | where | median | min | GB/s | note |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(
        f"\nvkml counters: compiles={stats['compiles']:.0f} "
        f"cache_hits_disk={stats['cache_hits_disk']:.0f} "
        f"cache_hits_memory={stats['cache_hits_memory']:.0f} "
        f"invocations={stats['invocations']:.0f}"
    )
    failed = any(r[5].startswith(("DIFFERS", "not in cache")) for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
