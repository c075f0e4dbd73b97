"""A ``while`` on a device condition on a GPU: issue 10's loop, per launch.

    python scripts/gpu/builder.py [--device vulkan:0] [--repeats 5] [--no-peers]

The loop (``benchmarks/builder.py``'s, on one device): 1,000 data-dependent steps on a
1M-element float32 state, ``while x.amax() < limit: x = x * 1.001 + 0.001``, the limit a
tensor chosen so that exactly 1,000 turns run. Rows, each a launch with the state read back,
each checked bit for bit against NumPy's steps:

- the builder's loop at several ``turns_per_sync`` (given explicitly, so the modules
  ``prepare.sh`` compiles on another device are the ones this machine asks for);
- ``vkml.while_loop``: IREE's own loop, one step and one host sync per turn;
- the same steps predicated by hand in one graph, timed on 100 steps and scaled to 1,000;
- PyTorch on CUDA, where it is installed: the condition read back every turn.

Prints one Markdown table. Issue 10's target: the builder ≤ 50 ms per launch on the H200.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from bench import timed  # scripts/gpu/bench.py, beside this script

import vkml

ELEMENTS = 1 << 20
STEPS = 1_000
HAND_STEPS = 100
TURNS = (16, 64, 128)
A, B = 1.001, 0.001


def after(x: np.ndarray, steps: int) -> np.ndarray:
    for _ in range(steps):
        x = x * np.float32(A) + np.float32(B)
    return x


def limit_for(x: np.ndarray, steps: int) -> np.float32:
    """A limit that the state's maximum passes at exactly ``steps`` steps."""
    before = np.float32(after(x, steps - 1).max())
    return np.nextafter(before, np.float32(np.inf))


def predicated(x: Any, limit: Any, turns: int) -> Any:
    """``turns`` turns of the loop, each applied where the condition holds (one graph)."""
    for _ in range(turns):
        x = vkml.where(x.amax() < limit, x * A + B, x)
    return x


def device_while(x: Any, limit: Any) -> Any:
    while x.amax() < limit:
        x = x * A + B
    return x


def cell(case: str, fn: Callable[[], np.ndarray], want: np.ndarray, repeats: int,
         scale: float = 1.0) -> str:  # fmt: skip
    try:
        got = fn()
        if not np.array_equal(got, want):
            return f"| {case} | - | - | DIFFERS from NumPy |"
        med, best = timed(fn, repeats, warmup=1)
    except Exception as exc:  # noqa: BLE001 - one failing case must not end the table
        first = (str(exc).splitlines() or [""])[0][:160]
        note = "not in cache" if "cache" in first else type(exc).__name__
        return f"| {case} | - | - | {note}: {first} |"
    return f"| {case} | {med * scale * 1e3:.1f} ms | {best * scale * 1e3:.1f} ms | |"


def vkml_rows(name: str, repeats: int, x0: np.ndarray) -> list[str]:
    dev = vkml.device(name)
    x = vkml.tensor(x0, device=dev)
    lim = vkml.tensor(limit_for(x0, STEPS), device=dev)
    want = after(x0, STEPS)
    rows = []
    for turns in TURNS:
        g = vkml.Graph.builder(turns_per_sync=turns)(device_while)(x, lim)
        launch = functools.partial(lambda graph: graph().numpy(), g)
        rows.append(cell(f"vkml {name} builder while, {turns} turns per sync", launch, want,
                         repeats))  # fmt: skip

    def native() -> np.ndarray:
        (out,) = vkml.while_loop(lambda v: v.amax() < lim, lambda v: v * A + B, x)
        return out.numpy()

    rows.append(cell(f"vkml {name} while_loop (a host sync per step)", native, want, 1))
    hand_lim = vkml.tensor(limit_for(x0, HAND_STEPS), device=dev)

    def by_hand() -> np.ndarray:
        return predicated(x, hand_lim, HAND_STEPS + 1).numpy()

    rows.append(cell(f"vkml {name} predicated by hand (x{STEPS // HAND_STEPS} of {HAND_STEPS})",
                     by_hand, after(x0, HAND_STEPS), repeats, STEPS / HAND_STEPS))  # fmt: skip
    return rows


def torch_rows(repeats: int, x0: np.ndarray) -> list[str]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    t = torch.from_numpy(x0).cuda()
    limit = float(limit_for(x0, STEPS))

    def run() -> np.ndarray:
        v = t
        while v.amax() < limit:
            v = v * A + B
        return v.cpu().numpy()

    # CUDA may contract x * a + b into one rounding: then the bits differ, and the row says so
    return [cell(f"PyTorch CUDA ({torch.cuda.get_device_name(0)}) while", run,
                 after(x0, STEPS), repeats)]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", action="append", help="vkml device (default vulkan:0)")
    parser.add_argument("--repeats", type=int, default=5, help="timed launches per case")
    parser.add_argument("--no-peers", action="store_true", help="skip the PyTorch row")
    args = parser.parse_args(argv)
    x0 = np.random.default_rng(0).random(ELEMENTS, dtype=np.float32)
    rows: list[str] = []
    for name in args.device or ["vulkan:0"]:
        rows += vkml_rows(name, args.repeats, x0)
    if not args.no_peers:
        rows += torch_rows(args.repeats, x0)
    print(f"{STEPS:,} data-dependent steps on {ELEMENTS:,} float32, per launch + readback\n")
    print("| case | median | min | note |")
    print("|---|---:|---:|---|")
    print("\n".join(rows))
    return 1 if any("DIFFERS" in r or "not in cache" in r for r in rows if "vkml" in r) else 0


if __name__ == "__main__":
    sys.exit(main())
