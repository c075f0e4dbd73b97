"""argsort on vulkan:0 against NumPy's stable argsort: the same positions, and the time.

Run on the GPU machine from modules compiled here (VKML_PRECOMPILE_VULKAN=ampere+f64 and
VKML_CACHE_DIR=.gpucache: run this script here first, on lavapipe, to fill the cache), as
scripts/gpu/prepare.sh does for run.sh. Rows hold repeated integers (ties: stability counts)
and NaN in row 0; the time is the best of five calls, a readback included.
"""

from __future__ import annotations

import time

import numpy as np

import vkml

SIZES = ((64, 1_000), (8, 10_000), (1, 70_000))


def main() -> None:
    device = vkml.device("vulkan:0")
    print(device)
    for rows, n in SIZES:
        x = np.random.default_rng(0).integers(-1000, 1000, (rows, n)).astype(np.float32)
        x[0, ::5] = np.nan
        t = vkml.tensor(x, device=device)
        same = np.array_equal(vkml.argsort(t).numpy(), np.argsort(x, axis=1, kind="stable"))
        times = []
        for _ in range(5):
            start = time.perf_counter()
            vkml.argsort(t).numpy()
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        np.argsort(x, axis=1, kind="stable")
        numpy_s = time.perf_counter() - start
        print(
            f"{rows} x {n:,}: equal to NumPy's stable argsort: {same}; "
            f"best of 5 {min(times) * 1e3:.2f} ms (NumPy {numpy_s * 1e3:.2f} ms)"
        )


if __name__ == "__main__":
    main()
