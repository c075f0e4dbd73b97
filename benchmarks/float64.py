"""Benchmark 12: vkml's float64 functions on cpu (issue 35, ADR 0021).

12a. float64 ``sin`` of 10^6 values uniform in [-10, 10]: vkml (its own function, the same
bits on every device), NumPy and PyTorch (CPU), whole calls from a resident input to a host
array. Target: within 2x NumPy's time.

12b-12g. The same for ``cos``, ``tan``, ``exp``, ``log``, ``tanh`` and ``atan2``, and 12h
float32 ``sin``, which vkml computes through its float64 function (IREE's own float32 sin
was wrong for large arguments): where vkml stands, no target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Bench, Budget, attempt, ratio_verdict, time_calls
from benchmarks.peers import torch_module

N = 10**6
VKML, NUMPY, TORCH = "vkml cpu", "NumPy", "torch eager (CPU)"
# name, NumPy's function, dtype, input range
CASES: list[tuple[str, str, Any, tuple[float, float]]] = [
    ("sin", "sin", np.float64, (-10.0, 10.0)),
    ("cos", "cos", np.float64, (-10.0, 10.0)),
    ("tan", "tan", np.float64, (-10.0, 10.0)),
    ("exp", "exp", np.float64, (-10.0, 10.0)),
    ("log", "log", np.float64, (1e-3, 10.0)),
    ("tanh", "tanh", np.float64, (-10.0, 10.0)),
    ("atan2", "arctan2", np.float64, (-10.0, 10.0)),
    ("sin", "sin", np.float32, (-10.0, 10.0)),
]


def _rows(name: str, numpy_name: str, args: list[np.ndarray], budget: Budget) -> list[Any]:
    def vkml_fn() -> Callable[[], Any]:
        import vkml

        tensors = [vkml.tensor(a).realize() for a in args]
        fn = getattr(vkml, name)
        return lambda: fn(*tensors).numpy()

    def torch_fn() -> Callable[[], Any]:
        torch = torch_module()
        torch.set_num_threads(2)
        tensors = [torch.from_numpy(a) for a in args]
        fn = getattr(torch, name)
        return lambda: fn(*tensors).numpy()

    numpy_fn = getattr(np, numpy_name)
    return [
        attempt(VKML, lambda: time_calls(vkml_fn(), budget, warmup=3), "resident input"),
        attempt(NUMPY, lambda: time_calls(lambda: numpy_fn(*args), budget, warmup=3)),
        attempt(TORCH, lambda: time_calls(torch_fn(), budget, warmup=3), "2 threads"),
    ]


def bench_float64(budget: Budget) -> list[Bench]:
    rng = np.random.default_rng(0)
    benches = []
    for i, (name, numpy_name, dtype, (low, high)) in enumerate(CASES):
        arity = 2 if name == "atan2" else 1
        args = [rng.uniform(low, high, N).astype(dtype) for _ in range(arity)]
        label = np.dtype(dtype).name
        bench = Bench(
            f"{label}-{name}",
            f"12{chr(ord('a') + i)}. {label} {name} of 10^6 values in [{low:g}, {high:g}]",
            "ms",
            target="vkml cpu <= 2x NumPy time" if i == 0 else "(no target: where vkml stands)",
        )
        bench.rows = _rows(name, numpy_name, args, budget)
        ratio_verdict(bench, VKML, NUMPY, target=2.0 if i == 0 else None)
        benches.append(bench)
    benches[0].notes.append(
        "vkml's float64 functions are its own (vkml/ops/float64, ADR 0021): the same bits on "
        "cpu, reference and Vulkan, within 2.5 ULP; NumPy's and torch's are the C library's "
        "or SIMD code. float32 sin is vkml's float64 sin rounded (IREE's float32 one was "
        "wrong beyond a few periods)."
    )
    return benches
