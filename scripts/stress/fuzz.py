#!/usr/bin/env python3
"""The fuzzing campaign: hypothesis-generated graphs on the reference and on devices.

Each batch of independent graphs (``tests/py/fuzz/strategies.py``) is realized in one
``vkml.realize`` per device and checked against the reference device by the contract rule
of ``tests/py/fuzz/checker.py``, then realized again in pieces. A failing batch is shrunk by
hypothesis (on the failing devices only) to a minimal graph, printed for a regression test;
the campaign then goes on with the next seed. Progress is printed after every batch.

    .venv/bin/python scripts/stress/fuzz.py --graphs 10000 --devices cpu,vulkan:0

``run(graphs, devices)`` returns the markdown section ``scripts/stress/run.py`` writes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "py"))  # the fuzz package lives with the tests

from fuzz.checker import Failure, Oracle, Tally, oracles, run_device
from fuzz.strategies import Case, batches
from hypothesis import HealthCheck, Phase, given, seed, settings

import vkml

BATCH = 40  # graphs per realize: compile time grows slower than the graphs in a batch
MAX_STEPS = 10
MAX_REPEAT = 150  # one graph in ten is a step list replayed up to this often (~1,000+ nodes)


@dataclass
class Campaign:
    """State across chunks: a tally per device, the minimal failures found."""

    devices: list[vkml.Device]
    tallies: dict[str, Tally]
    reference: Tally = field(default_factory=Tally)
    minimal: list[str] = field(default_factory=list)
    shrinking: list[str] | None = None  # the failing devices, while hypothesis shrinks
    started: float = field(default_factory=time.perf_counter)

    def check(self, batch: list[Case]) -> None:
        """One batch on every device (only the failing ones while shrinking); raises on a
        failure so that hypothesis shrinks it."""
        ref, found = oracles(batch)
        devices = [d for d in self.devices if self.shrinking is None or d.name in self.shrinking]
        throwaway = self.shrinking is not None
        for device in devices:
            tally = Tally() if throwaway else self.tallies[device.name]
            found += run_device(ref, device, tally, pieces=True)
        if not throwaway:
            self._count_reference(ref, found)
            self.progress()
        if found:
            self.shrinking = sorted({f.device for f in found if f.device != "reference"})
            raise AssertionError(_describe(found, batch))

    def _count_reference(self, ref: list[Oracle | None], found: list[Failure]) -> None:
        self.reference.graphs += len(ref)
        self.reference.crashes += sum(1 for f in found if f.device == "reference")

    def progress(self) -> None:
        seconds = time.perf_counter() - self.started
        parts = [
            f"{name}: {t.graphs} graphs, {t.crashes} crashes, {t.violations} violations"
            for name, t in self.tallies.items()
        ]
        print(f"[fuzz {seconds:7.1f}s] " + "; ".join(parts), flush=True)


def _describe(found: list[Failure], batch: list[Case]) -> str:
    lines = []
    for f in found[:5]:
        case = batch[f.graph] if 0 <= f.graph < len(batch) else None
        lines.append(f"{f.device} {f.kind} in graph {f.graph}: {f.message[:800]}\n  {case!r}")
    return "\n".join(lines)


def run_chunk(campaign: Campaign, chunk_seed: int, n_batches: int, shrink: bool) -> None:
    """``n_batches`` batches drawn from ``chunk_seed``; a failure is shrunk and recorded."""
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]

    @seed(chunk_seed)
    @settings(
        max_examples=n_batches, deadline=None, database=None, phases=phases,
        suppress_health_check=list(HealthCheck), print_blob=False,
    )  # fmt: skip
    @given(batches(BATCH, max_steps=MAX_STEPS, max_repeat=MAX_REPEAT, min_size=BATCH))
    def property(batch: list[Case]) -> None:
        campaign.check(batch)

    campaign.shrinking = None
    try:
        property()
    except AssertionError as exc:
        campaign.minimal.append(str(exc))
        print(f"[fuzz] minimal failure (seed {chunk_seed}):\n{exc}", flush=True)
    campaign.shrinking = None


def run(graphs: int, devices: list[str], shrink: bool = True) -> str:
    """Fuzz ``graphs`` graphs on each of ``devices`` (and the reference); the report as a
    markdown section: graphs per device, nodes, crashes, contract violations, seconds."""
    os.environ.setdefault("VKML_CACHE_DIR", tempfile.mkdtemp(prefix="vkml-fuzz-"))
    campaign = Campaign([vkml.device(d) for d in devices], {d: Tally() for d in devices})
    chunk_seed = 0
    while min(t.graphs for t in campaign.tallies.values()) < graphs:
        left = graphs - min(t.graphs for t in campaign.tallies.values())
        run_chunk(campaign, chunk_seed, max(1, -(-left // BATCH)), shrink)
        chunk_seed += 1
    return report(campaign)


def report(campaign: Campaign) -> str:
    lines = [
        "## Fuzzing",
        "",
        (
            "Hypothesis-generated graphs (tests/py/fuzz), each realized on the device and on "
            "`reference` and checked by the contract rule of tests/py/fuzz/checker.py, and "
            f"realized again in pieces; {BATCH} graphs per compile."
        ),
        "",
        "| device | graphs | nodes | crashes | contract violations | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for name, t in campaign.tallies.items():
        lines.append(
            f"| {name} | {t.graphs} | {t.nodes} | {t.crashes} | {t.violations} | {t.seconds:.0f} |"
        )
    lines.append("")
    for name, t in campaign.tallies.items():
        counted = ", ".join(f"{k} {v}" for k, v in sorted(t.checked.items()))
        lines.append(f"- {name}: outputs checked by class: {counted}")
    lines.append(f"- reference crashes: {campaign.reference.crashes}")
    for failure in campaign.minimal:
        lines.append(f"- minimal failure: `{failure.splitlines()[0][:300]}`")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=10_000, help="graphs per device")
    parser.add_argument("--devices", default="cpu,vulkan:0", help="comma-separated devices")
    parser.add_argument("--no-shrink", action="store_true", help="record failures unshrunk")
    args = parser.parse_args()
    print(run(args.graphs, args.devices.split(","), shrink=not args.no_shrink))


if __name__ == "__main__":
    main()
