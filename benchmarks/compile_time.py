"""Compile time of vkml's large dispatches with and without IREE's constant-expression
hoisting (``--iree-opt-const-expr-hoisting``), side by side in one run.

    .venv/bin/python -m benchmarks.compile_time      # writes benchmarks/results/compile-time.md

vkml's exact recipes make large dispatches: on Vulkan every float32 division is ~180 integer
ops (``vkml-exact-divide``), everywhere a float16 op is ~100 (``vkml-soft-f16``). IREE's
``HoistIntoGlobals`` analysis grows with the square of a dispatch's size, which is why vkml's
targets turn it off (``vkml.compiler.target.NO_CONST_EXPR_HOISTING``). Each row compiles the
same pass-rewritten module twice, once with vkml's flags and once with hoisting back on,
interleaved; the ratio is the point (this 2-core machine is noisy).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import vkml
from vkml.compiler.target import CPU_TARGET, NO_CONST_EXPR_HOISTING, Target
from vkml.dialect.ir import compile_stablehlo
from vkml.graph.walk import toposort
from vkml.passes.pipelines import pipeline_for
from vkml.passes.run import run_passes

OUT = Path(__file__).resolve().parent / "results" / "compile-time.md"


def _divides(device: vkml.Device, n: int) -> vkml.Tensor:
    x = vkml.tensor(np.float32(7.0), device=device)
    y = x
    for i in range(n):
        y = y / (x + i) + 1.0
    return y


def _halves(device: vkml.Device, n: int) -> vkml.Tensor:
    x = vkml.tensor(np.ones(8, np.float16), device=device)
    y = x
    for _ in range(n):
        y = y * x + 1.5
    return y


def _module(device: vkml.Device, root: vkml.Tensor) -> tuple[str, Target]:
    target = device.target
    lowered = device._lower(toposort([root.node]), [root.node])
    return run_passes(lowered.text, pipeline_for(target.backend, target.loop_cap)), target


def _seconds(text: str, target: Target, flags: list[str]) -> float:
    start = time.perf_counter()
    compile_stablehlo(text, target.backend, flags, None)
    return time.perf_counter() - start


def main() -> None:
    cases: list[tuple[str, str, Callable[[vkml.Device, int], vkml.Tensor], int]] = [
        ("float32 divides in a chain", "vulkan:0", _divides, 10),
        ("float32 divides in a chain", "vulkan:0", _divides, 20),
        ("float16 multiply-adds in a chain", "cpu", _halves, 50),
        ("float16 multiply-adds in a chain", "cpu", _halves, 100),
    ]
    rows = []
    for what, name, build, n in cases:
        device = vkml.device(name)
        text, target = _module(device, build(device, n))
        vkml_flags = list(target.flags)
        hoisting = [f for f in vkml_flags if f not in NO_CONST_EXPR_HOISTING]
        without = _seconds(text, target, vkml_flags)
        with_it = _seconds(text, target, hoisting)
        ops = text.count(" = ")
        label = f"{target.name}" if target is not CPU_TARGET else "llvm-cpu"
        rows.append(f"| {n} {what} | {label} | {ops:,} | {with_it:.1f} | {without:.1f} | "
                    f"{with_it / without:.1f}x |")  # fmt: skip
        print(rows[-1], flush=True)
    OUT.write_text(
        "# Compile time: IREE's constant-expression hoisting on and off\n\n"
        f"{time.strftime('%Y-%m-%d')}, written by `python -m benchmarks.compile_time` "
        "(see its docstring); one compile each, interleaved, on a 2-core machine.\n\n"
        "| module | target | ops after vkml's passes | s, hoisting on (IREE's default) | "
        "s, off (vkml's flags) | ratio |\n|---|---|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
