"""argsort's cost on cpu: compile time (cold cache) and run time against NumPy's and PyTorch's
stable argsort, side by side in one run.

    .venv/bin/python -m benchmarks.sorting      # writes benchmarks/results/sorting.md

vkml sorts with a bitonic network (``vkml.ops.emitters.sort``): p(p+1)/2 compare-exchange passes
for a row padded to 2^p, each its own dispatch, so the compile grows with log^2 n and the work
with n log^2 n, where NumPy's radix/merge sort is n log n. A fresh cache directory makes the
first call a compile; the run time is the best of five calls after it. Ratios are the point
(this 2-core machine is noisy).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

import vkml

OUT = Path(__file__).resolve().parent / "results" / "sorting.md"
SIZES = ((64, 1_000), (8, 10_000), (1, 70_000))  # (rows, row length)


def _best(fn: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    # read at the first compile: a fresh directory makes each first call a compile
    os.environ["VKML_CACHE_DIR"] = tempfile.mkdtemp(prefix="vkml-sort-bench-")
    rows = []
    for count, n in SIZES:
        x = np.random.default_rng(0).standard_normal((count, n)).astype(np.float32)
        t = vkml.tensor(x)
        p = (n - 1).bit_length()
        passes = p * (p + 1) // 2
        start = time.perf_counter()
        vkml.argsort(t).numpy()
        compile_s = time.perf_counter() - start
        run_vkml = _best(lambda t=t: vkml.argsort(t).numpy())
        run_numpy = _best(lambda x=x: np.argsort(x, axis=1, kind="stable"))
        tx = torch.from_numpy(x)
        run_torch = _best(lambda tx=tx: torch.argsort(tx, dim=1, stable=True))
        rows.append(
            f"| {count} x {n:,} | {passes} | {compile_s:.1f} | {run_vkml * 1e3:.2f} | "
            f"{run_numpy * 1e3:.2f} | {run_torch * 1e3:.2f} | {run_vkml / run_numpy:.1f}x | "
            f"{run_vkml / run_torch:.1f}x |"
        )
        print(rows[-1], flush=True)
    OUT.write_text(
        "# argsort on cpu: vkml's bitonic network against NumPy and PyTorch\n\n"
        f"{time.strftime('%Y-%m-%d')}, written by `python -m benchmarks.sorting` (see its "
        "docstring); float32 rows, one run on a 2-core machine.\n\n"
        "| rows x length | passes | first call, s (compile) | vkml, ms | NumPy, ms | "
        "torch, ms | vkml / NumPy | vkml / torch |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(rows)
        + "\n"
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
