"""The demo: a lazy graph that runs only when observed, on cpu, checked against reference.

python -m vkml.examples.demo        (or: make demo, vkml demo)
"""

from __future__ import annotations

import sys
import time

import numpy as np

import vkml


def build(x: vkml.Tensor, w: vkml.Tensor) -> vkml.Tensor:
    """A small network layer and its softmax: matmul, bias, GELU, normalise, softmax."""
    h = (x @ w + 0.1).gelu()
    h = (h - h.mean(axis=1, keepdims=True)) * (h.amax(axis=1, keepdims=True) + 1.0).rsqrt()
    return vkml.softmax(h, axis=1)


def main() -> int:
    rng = np.random.default_rng(0)
    x_host = rng.normal(size=(64, 32)).astype(np.float32)
    w_host = rng.normal(scale=0.2, size=(32, 16)).astype(np.float32)

    vkml.reset_stats()
    x, w = vkml.tensor(x_host), vkml.tensor(w_host)
    t0 = time.perf_counter()
    out = build(x, w)
    build_us = (time.perf_counter() - t0) * 1e6
    print(f"built the graph in {build_us:.0f} us: {out!r}")
    print(f"  invocations so far: {vkml.stats()['invocations']:.0f}  (nothing has run)")

    t0 = time.perf_counter()
    got = out.numpy()
    first_ms = (time.perf_counter() - t0) * 1e3
    s = vkml.stats()
    how = "compiled" if s["compiles"] else "loaded from the disk cache"
    print(
        f"observed with .numpy(): {first_ms:.1f} ms ({how}, "
        f"compile {s['compile_seconds']:.2f} s, {s['invocations']:.0f} invocation)"
    )

    # the same structure with new data: structural hash -> cache hit -> one invocation
    x2 = vkml.tensor(rng.normal(size=(64, 32)).astype(np.float32))
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        build(x2, w).numpy()
        times.append(time.perf_counter() - t0)
    s = vkml.stats()
    print(
        f"same graph, new data: {np.median(times) * 1e6:.0f} us per realize "
        f"(memory cache hits: {s['cache_hits_memory']:.0f}, compiles: {s['compiles']:.0f})"
    )

    ref = build(
        vkml.tensor(x_host, device=vkml.reference), vkml.tensor(w_host, device=vkml.reference)
    )
    want = ref.numpy()
    err = float(np.max(np.abs(got - want)))
    ok = err <= 1e-5
    print(f"cpu vs reference: max abs difference {err:.2e} ({'ok' if ok else 'MISMATCH'})")
    print(f"result: rows sum to {got.sum(axis=1).mean():.6f}, argmax of row 0 = {got[0].argmax()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
