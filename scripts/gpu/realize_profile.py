"""Where a tiny realize's time goes, on one device: vkml's Python, IREE's calls, the wait.

    python scripts/gpu/realize_profile.py [--device vulkan:0] [--calls 3000]

Two cases on 4 resident float32 values, each timed (median and minimum per call) and then
run under ``cProfile``, whose table (the functions with the most time of their own, in µs
per call of the case) says which part of vkml or which IREE binding the time is spent in:

- ``realize``: ``(x + 1).realize()``, the result left on the device (on Vulkan the call is
  queued, not waited for);
- ``realize+synchronize``: the same, then ``Device.synchronize()``;
- ``realize+readback``: ``(x + 1).numpy()``.

The profiler's own cost inflates Python functions more than calls into C, so read the
table for where the time goes and the timings for how much. Graphs come from the compile
cache where iree-base-compiler is absent (scripts/gpu/prepare.sh runs this script too).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from collections.abc import Callable

import numpy as np
from bench import timed

import vkml


def _table(fn: Callable[[], object], calls: int, top: int) -> str:
    """The ``top`` functions by time of their own under cProfile, in µs per call of ``fn``."""
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        fn()
    profile.disable()
    stats = pstats.Stats(profile, stream=io.StringIO())
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    lines = [f"{'own µs':>8} {'total µs':>9} {'calls':>6}  function"]
    for (path, line, name), (_, ncalls, own, total, _) in rows:
        where = name if path == "~" else f"{path.rsplit('vkml/', 1)[-1]}:{line}({name})"
        lines.append(
            f"{own / calls * 1e6:8.2f} {total / calls * 1e6:9.2f} {ncalls / calls:6.1f}  {where}"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="vulkan:0")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    dev = vkml.device(args.device)
    x = vkml.tensor(np.ones(4, np.float32), device=dev)

    def waited() -> None:
        (x + 1.0).realize()
        dev.synchronize()

    cases: dict[str, Callable[[], object]] = {
        "realize": lambda: (x + 1.0).realize(),
        "realize+synchronize": waited,
        "realize+readback": lambda: (x + 1.0).numpy(),
    }
    target = getattr(dev, "target", None)
    print(f"device {dev.name}" + (f" ({target.name})" if target is not None else ""))
    for name, fn in cases.items():
        med, best = timed(fn, args.calls, warmup=100)
        print(f"\n== {name}: median {med * 1e6:.1f} µs, min {best * 1e6:.1f} µs per call")
        print(_table(fn, args.calls, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
