"""Timing and result records shared by every benchmark.

A benchmark produces a ``Bench``: one ``Row`` per implementation (vkml first), each holding
either a ``Timing`` or the reason it is "n/a". Ratios are always ``vkml time / peer time`` on
medians, so a ratio below 1 means vkml is faster than that peer.
"""

from __future__ import annotations

import gc
import statistics
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Budget:
    """How long a timed series may run, and the bounds on its repetition count."""

    seconds: float = 3.0
    min_reps: int = 5
    max_reps: int = 20_000
    # warm-up keeps calling for at least this long: JIT peers settle after their first calls
    warmup_seconds: float = 1.0


FULL = Budget(3.0, 7, 20_000, 1.0)
QUICK = Budget(0.6, 3, 2_000, 0.2)


@dataclass(frozen=True)
class Timing:
    """Median and minimum of a series of wall-clock measurements, in seconds."""

    median: float
    minimum: float
    reps: int

    @staticmethod
    def of(samples: list[float]) -> Timing:
        return Timing(statistics.median(samples), min(samples), len(samples))

    def scaled(self, factor: float) -> Timing:
        """The same series expressed per unit (e.g. per node): both times times ``factor``."""
        return Timing(self.median * factor, self.minimum * factor, self.reps)


def time_calls(fn: Callable[[], object], budget: Budget, warmup: int = 1) -> Timing:
    """Warm ``fn`` up (``warmup`` calls and ``budget.warmup_seconds``), then time repeated calls.

    Each call's result is dropped after its time is taken. The repetition count is
    ``budget.seconds`` over the median warm-up call (the first call, which may compile, left
    out), clamped to the budget's bounds, so slow cases still get ``min_reps`` samples.
    """
    clock = time.perf_counter
    warm: list[float] = []
    if warmup:
        fn()  # may compile: neither the warm-up clock nor the estimate counts it
        start = clock()
        while len(warm) + 1 < warmup or clock() - start < budget.warmup_seconds:
            begin = clock()
            fn()
            warm.append(clock() - begin)
    gc.collect()
    samples = [_timed_call(fn)]
    estimate = statistics.median(warm) if warm else samples[0]
    reps = int(budget.seconds / max(estimate, 1e-9))
    reps = max(budget.min_reps, min(budget.max_reps, reps))
    samples += [_timed_call(fn) for _ in range(reps - 1)]
    return Timing.of(samples)


def _timed_call(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    # freeing the result (a 10,000-node chain, a 64 MiB buffer) is left out of the timing
    del result
    return elapsed


@dataclass
class Row:
    """One implementation's result in a benchmark: a timing, or why there is none."""

    name: str
    timing: Timing | None = None
    unavailable: str = ""
    note: str = ""
    # work per call, for a throughput column (e.g. FLOPs for matmul); 0 = none
    work: float = 0.0
    # the vkml row this one's ratio divides by; "" = the benchmark's first vkml row
    compare_to: str = ""

    @property
    def ok(self) -> bool:
        return self.timing is not None


@dataclass
class Bench:
    """A benchmark's rows plus its target, checked against the rows by ``check``."""

    key: str
    title: str
    unit: str  # "us", "ms", "s", or "auto" (per cell): how the table prints times
    rows: list[Row] = field(default_factory=list)
    target: str = ""
    verdict: str = ""  # filled by the benchmark: "met", "NOT met" or "n/a (...)"
    measured: str = ""  # the number the verdict is about, as printed in the summary
    notes: list[str] = field(default_factory=list)
    throughput_unit: str = ""  # e.g. "GFLOP/s" when rows carry ``work``

    def row(self, name: str) -> Row | None:
        for row in self.rows:
            if row.name == name:
                return row
        return None

    def reference(self) -> Row | None:
        """The vkml row the ratios divide by: the first row whose name starts with vkml.

        None when that row failed: the ratios are then "n/a", not against another vkml row
        (a Vulkan row, say) that the column does not name.
        """
        for row in self.rows:
            if row.name.startswith("vkml"):
                return row if row.ok else None
        return None


def ratio_verdict(bench: Bench, ours: str, theirs: str, target: float | None = 1.0) -> None:
    """``bench``'s measured number (row ``ours`` as a ratio of row ``theirs``, medians) and
    its verdict: met where the ratio is at most ``target`` ("-" without one)."""
    mine, peer = bench.row(ours), bench.row(theirs)
    if mine is None or peer is None or mine.timing is None or peer.timing is None:
        bench.verdict = "n/a (vkml or the peer failed)"
        return
    ratio = mine.timing.median / peer.timing.median
    scale, unit = (1e6, "us") if bench.unit == "us" else (1e3, "ms")
    bench.measured = f"{mine.timing.median * scale:.0f} {unit} = {ratio:.2f}x {theirs}"
    bench.verdict = "-" if target is None else ("met" if ratio <= target else "NOT met")


def attempt(
    name: str,
    measure: Callable[[], Timing],
    note: str = "",
    work: float = 0.0,
    compare_to: str = "",
) -> Row:
    """Run one implementation's measurement; any failure becomes an "n/a" row with the reason."""
    try:
        return Row(name, measure(), note=note, work=work, compare_to=compare_to)
    except Exception as exc:  # noqa: BLE001 - a peer failing must never stop the run
        return failed(name, exc, note)


def failed(name: str, exc: BaseException, note: str = "") -> Row:
    """An "n/a" row for ``name`` whose reason is ``exc``."""
    return Row(name, unavailable=describe_failure(exc), note=note)


def describe_failure(exc: BaseException) -> str:
    """A one-line reason for an "n/a" cell: exception type and the first line of its message."""
    message = str(exc).strip().splitlines()
    first = message[0] if message else ""
    if len(first) > 240:
        first = first[:237] + "..."
    where = traceback.extract_tb(exc.__traceback__)
    origin = f" ({where[-1].name})" if where else ""
    return f"{type(exc).__name__}: {first}{origin}"


def ratio(bench: Bench, row: Row) -> float | None:
    """``vkml median / row median``; None when either is missing."""
    reference = bench.row(row.compare_to) if row.compare_to else bench.reference()
    if reference is None or not row.ok or reference.timing is None or row.timing is None:
        return None
    return reference.timing.median / row.timing.median
