"""Machine description and the markdown tables the benchmark run prints and saves."""

from __future__ import annotations

import ctypes
import datetime
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

from benchmarks.harness import Bench, Row, ratio

RATIO_LINE = (
    "Column `vkml / this` = vkml's median time / this row's median time, where vkml "
    "is the table's first vkml row unless its notes say otherwise: **below 1 means "
    "vkml is faster**, above 1 means vkml is slower. Times are wall clock per call."
)
UNITS = {"us": (1e6, "µs"), "ms": (1e3, "ms"), "s": (1.0, "s")}


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit(repo: Path) -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            check=False,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            check=False,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{' (with local changes)' if dirty.strip() else ''}" if head else "unknown"


def blas_description() -> str:
    """The BLAS library and kernel NumPy uses: threadpoolctl, else OpenBLAS asked directly."""
    import numpy as np

    try:
        from threadpoolctl import threadpool_info

        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            return "; ".join(
                f"{i.get('internal_api')} {i.get('version')} "
                f"kernel {i.get('architecture')}, {i.get('num_threads')} threads"
                for i in infos
            )
    except ImportError:
        pass
    config = getattr(np, "__config__", None)
    blas = getattr(config, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    name = f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    core = _openblas_corename()
    return f"{name}, kernel {core}" if core else f"{name} (kernel unknown: no threadpoolctl)"


def _openblas_corename() -> str:
    """Ask a loaded OpenBLAS for its core name, as threadpoolctl does; "" if none answers."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return ""
    paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in (
            "scipy_openblas_get_corename64_",
            "scipy_openblas_get_corename",
            "openblas_get_corename64_",
            "openblas_get_corename",
        ):
            getter = getattr(library, symbol, None)
            if getter is not None:
                getter.restype = ctypes.c_char_p
                return (getter() or b"").decode()
    return ""


def machine_info(repo: Path, removed_env: dict[str, str]) -> list[tuple[str, str]]:
    """(label, value) pairs describing where and with what the run happened."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    removed = ", ".join(f"{k}={v}" for k, v in removed_env.items()) or "none were set"
    return [
        ("date", datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("CPU", _cpu_model()),
        ("cores", f"{os.cpu_count()} logical, {usable} usable by this process"),
        ("load average at start", " ".join(f"{v:.2f}" for v in os.getloadavg())),
        ("python", platform.python_version()),
        ("vkml", f"{_version('vkml')} (commit {_git_commit(repo)})"),
        ("numpy", _version("numpy")),
        ("BLAS used by numpy", blas_description()),
        ("torch", _version("torch")),
        ("jax / jaxlib", f"{_version('jax')} / {_version('jaxlib')}"),
        (
            "iree compiler / runtime",
            f"{_version('iree-base-compiler')} / {_version('iree-base-runtime')}",
        ),
        ("OpenBLAS variables unset for this run", removed),
    ]


def human_seconds(seconds: float) -> str:
    """``seconds`` in the unit that keeps it readable (µs, ms or s)."""
    unit = "us" if seconds < 1e-3 else "ms" if seconds < 1.0 else "s"
    return _time_cell(seconds, unit)


def _time_cell(seconds: float, unit: str) -> str:
    if unit == "auto":
        return human_seconds(seconds)
    scale, label = UNITS[unit]
    value = seconds * scale
    digits = 3 if value < 10 else 2 if value < 100 else 1 if value < 1000 else 0
    return f"{value:.{digits}f} {label}"


def _ratio_cell(bench: Bench, row: Row) -> str:
    if row.name.startswith("vkml"):
        return "—"
    value = ratio(bench, row)
    return "n/a" if value is None else f"{value:.3g}"


def bench_table(bench: Bench) -> list[str]:
    """The markdown section of one benchmark: title, table, notes."""
    throughput = bench.throughput_unit
    header = ["implementation", "median", "min", "reps"]
    header += [throughput] if throughput else []
    header += ["vkml / this", "note"]
    lines = [
        f"### {bench.title}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for row in bench.rows:
        if row.timing is None:
            cells = [row.name, "n/a", "", ""] + ([""] if throughput else [])
            cells += ["n/a", "; ".join(x for x in (row.unavailable, row.note) if x)]
        else:
            t = row.timing
            cells = [
                row.name,
                _time_cell(t.median, bench.unit),
                _time_cell(t.minimum, bench.unit),
                str(t.reps),
            ]
            if throughput:
                rate = row.work / t.median / 1e9
                cells.append(f"{rate:.{2 if rate < 10 else 1}f}" if row.work else "")
            cells += [_ratio_cell(bench, row), row.note]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if bench.notes:
        lines.append("")
        lines += [f"- {note}" for note in bench.notes]
    lines.append("")
    return lines


def summary_table(benches: list[Bench]) -> list[str]:
    lines = ["| benchmark | target | measured | verdict |", "|---|---|---|---|"]
    for bench in benches:
        if bench.target and bench.target != "none (context)":
            verdict = bench.verdict or "n/a (vkml failed)"
            lines.append(
                f"| {bench.title.split(', ')[0]} | {bench.target} | "
                f"{bench.measured or 'n/a'} | {verdict} |"
            )
    return lines + [""]


def render(benches: list[Bench], info: list[tuple[str, str]], mode: str) -> str:
    lines = ["# vkml benchmarks", "", f"Mode: {mode}.", ""]
    lines += [f"- {label}: {value}" for label, value in info]
    lines += ["", "## Targets", ""] + summary_table(benches)
    lines += ["## Results", "", RATIO_LINE, ""]
    for bench in benches:
        lines += bench_table(bench)
    return "\n".join(lines)
