"""Benchmark 10: what a newcomer meets in the first hour (issue 30), counted with
``vkml.stats()``: a Python number that changes (a learning rate), a loop over a tensor's rows,
a training step under a learning-rate schedule, and the cold start (``import vkml``, a first
small realize). Each row runs in a fresh process with an empty compile cache, so a compile
is a compile; the peers (jax.jit, PyTorch eager) run the same loop in the same run.

    .venv/bin/python -m benchmarks.first_hour    # writes benchmarks/results/first-hour.md
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import Bench, Row, Timing, failed

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "results" / "first-hour.md"
RATES = [float(r) for r in np.linspace(1e-3, 1.0, 100)]
ROWS, COLUMNS = 10, 1000
STEPS = 50


def _vkml_rates(compiled_in: bool) -> dict[str, Any]:
    import vkml

    x = vkml.tensor(np.linspace(-1, 1, COLUMNS, dtype=np.float32))
    start = time.perf_counter()
    for lr in RATES:  # a compiled-in constant (full) is how every number was before
        (x * (vkml.full(x.shape, lr) if compiled_in else lr) + 0.5).numpy()
    return {"seconds": time.perf_counter() - start, "compiles": vkml.stats()["compiles"]}


def _vkml_rows() -> dict[str, Any]:
    import vkml

    x = vkml.tensor(np.arange(ROWS * COLUMNS, dtype=np.float32).reshape(ROWS, COLUMNS))
    start = time.perf_counter()
    sums = [row.sum().item() for row in x]
    assert len(sums) == ROWS
    return {"seconds": time.perf_counter() - start, "compiles": vkml.stats()["compiles"]}


def _vkml_schedule() -> dict[str, Any]:
    import vkml
    from vkml import nn

    keys = vkml.random.split(vkml.random.key(0), 2)
    model = nn.Sequential(nn.Linear(64, 32, key=keys[0]), nn.ReLU(), nn.Linear(32, 10, key=keys[1]))
    opt = nn.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = opt.compile_step(lambda x, y: nn.cross_entropy(model(x), y))
    rng = np.random.default_rng(0)
    x, y = rng.random((32, 64), np.float32), rng.integers(0, 10, 32)
    vkml.reset_stats()
    start = time.perf_counter()
    for i in range(STEPS):
        opt.lr = 0.1 * 0.5 ** (i / 10)  # a new learning rate every step
        step(x, y)
    return {"seconds": time.perf_counter() - start, "compiles": vkml.stats()["compiles"]}


def _vkml_cold() -> dict[str, Any]:
    start = time.perf_counter()
    import vkml

    imported = time.perf_counter()
    (vkml.tensor([1.0, 2.0, 3.0]) * 2.0 + 1.0).numpy()
    return {"seconds": time.perf_counter() - imported, "import": imported - start,
            "compiles": vkml.stats()["compiles"]}  # fmt: skip


def _jax_rates() -> dict[str, Any]:
    import jax

    f = jax.jit(lambda x, lr: x * lr + 0.5)
    x = jax.numpy.linspace(-1, 1, COLUMNS, dtype=np.float32)
    start = time.perf_counter()
    for lr in RATES:
        np.asarray(f(x, np.float32(lr)))
    return {"seconds": time.perf_counter() - start, "compiles": f._cache_size()}


def _torch_rates() -> dict[str, Any]:
    import torch

    x = torch.linspace(-1, 1, COLUMNS)
    start = time.perf_counter()
    for lr in RATES:
        (x * lr + 0.5).numpy()
    return {"seconds": time.perf_counter() - start, "compiles": 0}


def _jax_rows() -> dict[str, Any]:
    import jax

    x = jax.numpy.arange(ROWS * COLUMNS, dtype=np.float32).reshape(ROWS, COLUMNS)
    start = time.perf_counter()
    sums = [float(row.sum()) for row in x]
    assert len(sums) == ROWS
    return {"seconds": time.perf_counter() - start, "compiles": None}


CHILDREN = {
    "vkml-rates": lambda: _vkml_rates(False), "vkml-rates-compiled-in": lambda: _vkml_rates(True),
    "vkml-rows": _vkml_rows, "vkml-schedule": _vkml_schedule, "vkml-cold": _vkml_cold,
    "jax-rates": _jax_rates, "torch-rates": _torch_rates, "jax-rows": _jax_rows,
}  # fmt: skip


def _child(name: str, cache: str | None = None) -> dict[str, Any]:
    env = {**os.environ, "VKML_CACHE_DIR": cache or tempfile.mkdtemp(prefix="vkml-first-")}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.first_hour", "--child", name],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _row(name: str, child: str, compare_to: str = "") -> Row:
    try:
        got = _child(child)
    except Exception as exc:  # noqa: BLE001 - one peer failing must not end the run
        return failed(name, exc)
    compiles = "" if got["compiles"] is None else f"{got['compiles']} compiles"
    return Row(
        name, Timing(got["seconds"], got["seconds"], 1), note=compiles, compare_to=compare_to
    )


def bench_first_hour() -> list[Bench]:
    rates = Bench(
        "firsthour_rates", f"10a. x * lr + 0.5 for {len(RATES)} values of lr ({COLUMNS} float32)",
        "auto", target="1 compile",
    )  # fmt: skip
    rates.rows = [
        _row("vkml (lr a run-time input)", "vkml-rates"),
        _row("vkml, lr compiled in (as before)", "vkml-rates-compiled-in"),
        _row("jax.jit(f)(x, lr)", "jax-rates"),
        _row("torch eager", "torch-rates"),
    ]
    rows = Bench(
        "firsthour_rows", f"10b. [row.sum().item() for row in x], x {ROWS}x{COLUMNS} float32",
        "auto", target="1 compile",
    )  # fmt: skip
    rows.rows = [
        _row("vkml (the index a run-time input)", "vkml-rows"),
        _row("jax eager", "jax-rows"),
    ]
    schedule = Bench(
        "firsthour_schedule", f"10c. compile_step under a new learning rate each of {STEPS} steps",
        "auto", target="1 compile of the step",
    )  # fmt: skip
    schedule.rows = [_row("vkml compile_step", "vkml-schedule")]
    for bench in (rates, rows, schedule):
        first = bench.rows[0]
        count = first.note.split()[0] if first.ok else ""
        bench.measured = f"{count} compiles" if count else "n/a"
        bench.verdict = "met" if count == "1" else ("n/a" if not count else "NOT met")
    return [rates, rows, schedule, _bench_cold()]


def _bench_cold() -> Bench:
    cold = Bench("firsthour_cold", "10d. import vkml, then a first small realize, fresh process",
                 "auto", target="import <= 0.3 s; first realize <= 0.5 s")  # fmt: skip
    cache = tempfile.mkdtemp(prefix="vkml-first-")
    try:
        empty, warm = _child("vkml-cold", cache), _child("vkml-cold", cache)
    except Exception as exc:  # noqa: BLE001
        cold.rows, cold.verdict = [failed("vkml", exc)], "n/a"
        return cold
    cold.rows = [
        Row("import vkml", Timing(empty["import"], empty["import"], 1)),
        Row(
            "first realize, empty cache (a compile)", Timing(empty["seconds"], empty["seconds"], 1)
        ),
        Row("first realize, disk cache warm", Timing(warm["seconds"], warm["seconds"], 1)),
    ]
    cold.measured = f"import {empty['import']:.2f} s, realize {empty['seconds']:.2f} s cold"
    met = empty["import"] <= 0.3 and empty["seconds"] <= 0.5
    cold.verdict = "met" if met else "NOT met"
    return cold


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(CHILDREN[sys.argv[2]]()))
        return
    from benchmarks import report

    benches = bench_first_hour()
    text = report.render(benches, report.machine_info(REPO, {}), "first hour")
    print(text)
    OUT.write_text(text + "\n")


if __name__ == "__main__":
    main()
