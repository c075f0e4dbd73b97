"""Run vkml's benchmarks beside NumPy, PyTorch, JAX and raw IREE; print and save a markdown table.

Usage: ``python benchmarks/run.py [--quick] [--only NAME[,NAME]] [--output PATH]``
(``make bench`` runs it in full). Names: build, small, chain, sum, matmul, bigchain, mlpstep,
aot, builder, firsthour, cnn, float64 (or 1-12).
"""

from __future__ import annotations

import os
import sys

# OpenBLAS reads these when NumPy loads it, so they go before anything imports NumPy; they are
# removed for this process (and its children) only, and the report says which were set.
REMOVED_ENV = {
    k: os.environ.pop(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ
}
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# inductor's pool of compile workers otherwise keeps competing with the timed loops for 2 cores
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import argparse
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import aot, builder, chain, cnn, first_hour, float64, mlp, report
from benchmarks.cases import CASES
from benchmarks.harness import FULL, QUICK, Bench, Budget, describe_failure

ORDER = [
    "build", "small", "chain", "sum", "matmul", "bigchain", "mlpstep", "aot", "builder",
    "firsthour", "cnn", "float64",
]  # fmt: skip
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "latest.md"


def _selected(only: str | None) -> list[str]:
    if not only:
        return ORDER
    names = []
    for part in only.split(","):
        part = part.strip()
        in_range = part.isdigit() and 1 <= int(part) <= len(ORDER)
        name = ORDER[int(part) - 1] if in_range else part
        if name not in ORDER:
            raise SystemExit(
                f"unknown benchmark {part!r}; choose from {', '.join(ORDER)} or 1-{len(ORDER)}"
            )
        names.append(name)
    return names


def _runner(name: str, args: argparse.Namespace) -> Callable[[Budget], list[Bench]]:
    if name == "mlpstep":
        return mlp.bench_mlp_step
    if name == "aot":
        return aot.bench_aot
    if name == "cnn":
        return cnn.bench_cnn
    if name == "float64":
        return float64.bench_float64
    if name == "builder":
        return builder.bench_builder
    if name == "firsthour":
        return lambda budget: first_hour.bench_first_hour()
    if name != "bigchain":
        return CASES[name]
    if args.chain_sizes:
        sizes = tuple(int(n) for n in args.chain_sizes.split(","))
    else:
        sizes = chain.QUICK_SIZES if args.quick else chain.FULL_SIZES
    return lambda budget: chain.bench_big_chain(budget, sizes, try_goal=not args.quick)


def run(names: list[str], args: argparse.Namespace) -> list[Bench]:
    budget = QUICK if args.quick else FULL
    benches: list[Bench] = []
    for name in names:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            benches += _runner(name, args)(budget)
        except Exception as exc:  # noqa: BLE001 - one broken benchmark must not end the run
            reason = describe_failure(exc)
            benches.append(
                Bench(
                    name,
                    f"{name}: could not run",
                    "ms",
                    target="-",
                    verdict=f"n/a ({reason})",
                    notes=[f"Failed: {reason}"],
                )
            )
        print(
            f"[bench] {name} done in {time.perf_counter() - start:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    return benches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help="comma-separated benchmark names or numbers")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="shorter timing budgets and small chain sizes (a smoke run)",
    )
    parser.add_argument("--chain-sizes", help="bigchain node counts, e.g. 100000 or 10000,30000")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"markdown file to write (default {DEFAULT_OUTPUT.relative_to(REPO)})",
    )
    args = parser.parse_args(argv)
    names = _selected(args.only)
    info = report.machine_info(REPO, REMOVED_ENV)
    started = time.perf_counter()
    benches = run(names, args)
    info.append(("load average at end", " ".join(f"{v:.2f}" for v in os.getloadavg())))
    mode = ("quick" if args.quick else "full") + (
        f", only {', '.join(names)}" if args.only else ", all benchmarks"
    )
    mode += f"; total {time.perf_counter() - started:.0f} s"
    text = report.render(benches, info, mode)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text + "\n")
    print(f"[bench] wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
