#!/usr/bin/env python3
"""The fuzzing campaign: hypothesis-generated graphs on the reference and on devices.

Each batch of independent graphs (``tests/py/fuzz/strategies.py``) is realized in one
``vkml.realize`` per device and checked against the reference device by the contract rule
of ``tests/py/fuzz/checker.py``, then realized again in pieces. A failing batch is shrunk by
hypothesis (on the failing devices only) to a minimal graph, printed for a regression test;
the campaign then goes on with the next seed. Progress is printed after every batch.

A device that faults (``DeviceFaultError``: lavapipe has lost its device under a batch) is not
brought back within a process, so every later graph on it would crash too: the campaign counts
that batch as one crash, saves its state and goes on in a fresh process (``os.execv``), at most
``RESTARTS`` times a sitting.

    .venv/bin/python scripts/stress/fuzz_campaign.py --graphs 10000 --devices cpu,vulkan:0

``run(graphs, devices)`` returns the markdown section ``scripts/stress/run.py`` writes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "py"))  # the fuzz package lives with the tests

from fuzz.checker import Failure, Oracle, Tally, oracles, run_device
from fuzz.strategies import Case, batches
from hypothesis import HealthCheck, Phase, given, seed, settings

import vkml

GOAL = 10_000  # graphs per device issue 14 asks for
BATCH = 40  # graphs per realize: compile time grows slower than the graphs in a batch
MAX_STEPS = 10
MAX_REPEAT = 150  # one graph in ten is a step list replayed up to this often (~1,000+ nodes)
CHUNK = 25  # batches per hypothesis seed (its first batch is hypothesis's simplest one)
RESTARTS = 5  # fresh processes a sitting may start after device faults
# set for the fresh process: the sitting's deadline (time.time()) and restarts so far
DEADLINE_ENV, RESTARTS_ENV = "VKML_FUZZ_DEADLINE", "VKML_FUZZ_RESTARTS"


class OutOfTime(BaseException):
    """The sitting's time is up: not an Exception, so hypothesis does not take it for a
    failure to shrink."""


class DeviceLost(BaseException):
    """A device faulted under a batch; the rest of the sitting needs a fresh process. Not an
    Exception, so hypothesis does not shrink it."""

    def __init__(self, device: str, message: str) -> None:
        super().__init__(f"{device}: {message}")
        self.device = device


@dataclass
class Campaign:
    """State across chunks: a tally per device, the minimal failures found."""

    devices: list[vkml.Device]
    tallies: dict[str, Tally]
    reference: Tally = field(default_factory=Tally)
    minimal: list[str] = field(default_factory=list)
    shrinking: list[str] | None = None  # the failing devices, while hypothesis shrinks
    started: float = field(default_factory=time.perf_counter)
    seed: int = 0  # the hypothesis seed being drawn from
    done: int = 0  # batches of that seed checked; a resumed sitting draws that many unchecked
    # first (hypothesis need not draw the same batches after them as an unbroken run would)
    skip: int = 0
    deadline: float | None = None
    save: Callable[[], None] = lambda: None

    def check(self, batch: list[Case]) -> None:
        """One batch on every device (only the failing ones while shrinking); raises on a
        failure so that hypothesis shrinks it."""
        if self.skip:
            self.skip -= 1
            return
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfTime
        ref, found = oracles(batch)
        devices = [d for d in self.devices if self.shrinking is None or d.name in self.shrinking]
        throwaway = self.shrinking is not None
        lost: Failure | None = None
        for device in devices:
            tally = Tally() if throwaway else self.tallies[device.name]
            crashes = tally.crashes
            failures = run_device(ref, device, tally, pieces=True)
            fault = next((f for f in failures if _is_device_fault(f)), None)
            if fault is not None:
                # the fault and the device's wrong values, not the crashes of the graphs it
                # could no longer run (neither counted as crashes nor as graphs checked)
                cascade = {f.graph for f in failures if f.kind == "crash" and f is not fault}
                tally.graphs -= len(cascade - {fault.graph, -1})
                failures = [f for f in failures if f.kind == "violation" or f is fault]
                tally.crashes = crashes + 1
                lost = lost or fault
            found += failures
        if not throwaway:
            self._count_reference(ref, found)
            self.done += 1  # counted: a fresh process after a fault resumes after it
            if found:
                self.minimal.append(_describe(found, batch))  # as found; shrinking may refine it
            self.save()
            self.progress()
        if lost is not None:
            where = f"seed {self.seed}, batch {self.done}{' (shrinking)' if throwaway else ''}"
            self.minimal.append(f"{lost.device} lost in {where}: {_describe([lost], batch)}")
            self.save()
            raise DeviceLost(lost.device, _describe([lost], batch))
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


def _is_device_fault(failure: Failure) -> bool:
    """Whether ``failure`` is a device fault (not out-of-memory, which the device survives)."""
    return failure.kind == "crash" and "DeviceFaultError:" in failure.message


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
        if shrink:
            campaign.minimal.append(f"(shrunk) {exc}")
        print(f"[fuzz] failure (seed {chunk_seed}):\n{exc}", flush=True)
    campaign.shrinking = None


def run(
    graphs: int,
    devices: list[str],
    shrink: bool = True,
    progress: Path | None = None,
    minutes: float | None = None,
) -> str:
    """Fuzz ``graphs`` graphs on each of ``devices`` (and the reference); the report as a
    markdown section: graphs per device, nodes, crashes, contract violations, seconds.

    With ``progress`` (a JSON file) the campaign starts from what the file holds and writes
    it back after every chunk of batches, so it can run in several sittings; ``minutes``
    ends a sitting at the first chunk boundary after that long."""
    os.environ.setdefault("VKML_CACHE_DIR", tempfile.mkdtemp(prefix="vkml-fuzz-"))
    campaign = Campaign([vkml.device(d) for d in devices], {d: Tally() for d in devices})
    sittings, before = _resume(campaign, progress)
    sitting = time.perf_counter()
    deadline = float(os.environ.get(DEADLINE_ENV, "0")) or (
        time.time() + 60 * minutes if minutes is not None else None
    )
    if deadline is not None:
        campaign.deadline = sitting + deadline - time.time()
    if progress is not None:
        campaign.save = lambda: _save(
            progress, campaign, sittings, before + time.perf_counter() - sitting
        )
    try:
        while min(t.graphs for t in campaign.tallies.values()) < graphs:
            left = -(-(graphs - min(t.graphs for t in campaign.tallies.values())) // BATCH)
            campaign.skip = campaign.done
            run_chunk(campaign, campaign.seed, min(CHUNK, campaign.done + left), shrink)
            campaign.seed, campaign.done = campaign.seed + 1, 0
            campaign.save()
    except OutOfTime:
        print(f"[fuzz] {minutes} minutes are up; the next sitting resumes at seed {campaign.seed}")
    except DeviceLost as lost:
        if progress is None:  # nothing to resume from: the report says what was run
            print(f"[fuzz] {lost.device} faulted; stopping")
        else:
            _restart(lost, deadline)
    return report(campaign, graphs, sittings)


def _restart(lost: DeviceLost, deadline: float | None) -> None:
    """Go on in a fresh process (the same command), whose device is whole again."""
    restarts = int(os.environ.get(RESTARTS_ENV, "0"))
    if restarts >= RESTARTS:
        print(f"[fuzz] {lost.device} faulted again after {restarts} fresh processes; stopping")
        return
    print(f"[fuzz] {lost.device} faulted; going on in a fresh process", flush=True)
    os.environ[RESTARTS_ENV] = str(restarts + 1)
    if deadline is not None:
        os.environ[DEADLINE_ENV] = repr(deadline)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *sys.argv])


def _resume(campaign: Campaign, progress: Path | None) -> tuple[int, float]:
    """Load ``progress`` into ``campaign``; this sitting's number and the seconds of the
    sittings before (1, 0.0 for a fresh campaign)."""
    if progress is None or not progress.exists():
        return 1, 0.0
    state = json.loads(progress.read_text())
    if sorted(state["tallies"]) != sorted(campaign.tallies):
        raise SystemExit(
            f"{progress} holds a campaign on {', '.join(sorted(state['tallies']))}, not on "
            f"{', '.join(sorted(campaign.tallies))}: delete it to start a new campaign"
        )
    campaign.tallies = {name: Tally(**t) for name, t in state["tallies"].items()}
    campaign.reference = Tally(**state["reference"])
    campaign.minimal = list(state["minimal"])
    campaign.seed, campaign.done = state["seed"], state["done"]
    print(f"[fuzz] resuming at seed {campaign.seed}, batch {campaign.done + 1}")
    restarted = RESTARTS_ENV in os.environ  # the same sitting, in a fresh process
    return state["sittings"] + (0 if restarted else 1), state["seconds"]


def _save(progress: Path, campaign: Campaign, sittings: int, seconds: float) -> None:
    state = {
        "seed": campaign.seed,
        "done": campaign.done,
        "sittings": sittings,
        "seconds": seconds,
        "tallies": {name: asdict(t) for name, t in campaign.tallies.items()},
        "reference": asdict(campaign.reference),
        "minimal": campaign.minimal,
    }
    tmp = progress.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    tmp.replace(progress)  # a killed sitting leaves the last whole state


def report(campaign: Campaign, target: int, sittings: int = 1) -> str:
    done = min(t.graphs for t in campaign.tallies.values())
    goal = min(target, GOAL)  # a sitting past the goal (--fuzz-graphs) is not a new goal
    status = (
        f"**{done:,} of the {goal:,} graphs per device so far** (the campaign resumes from "
        "benchmarks/results/fuzz-progress.json)"
        if done < goal
        else f"{goal:,} graphs per device reached ({done:,} so far)"
    )
    lines = [
        "## Fuzzing",
        "",
        (
            "Hypothesis-generated graphs (tests/py/fuzz), each realized on the device and on "
            "`reference` and checked by the contract rule of tests/py/fuzz/checker.py, and "
            f"realized again in pieces; {BATCH} graphs per compile. {status}; "
            f"{sittings} sitting(s), hypothesis seeds 0-{campaign.seed} of up to "
            f"{CHUNK} batches each."
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
        lines.append(f"- failure: `{failure.splitlines()[0][:300]}`")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=10_000, help="graphs per device")
    parser.add_argument("--devices", default="cpu,vulkan:0", help="comma-separated devices")
    parser.add_argument("--no-shrink", action="store_true", help="record failures unshrunk")
    parser.add_argument("--progress", type=Path, help="JSON file to resume from and save to")
    parser.add_argument("--minutes", type=float, help="stop after this long (at a chunk's end)")
    args = parser.parse_args()
    devices = args.devices.split(",")
    print(run(args.graphs, devices, not args.no_shrink, args.progress, args.minutes))


if __name__ == "__main__":
    main()
