"""``make stress``: every long campaign of issue 14, one after another, into one report.

    .venv/bin/python scripts/stress/run.py [--quick] [--only fuzz,longrun,concurrency,faults]
                                           [--fuzz-minutes M] [--no-shrink]

Writes ``benchmarks/results/stress.md``: fuzzed graphs per device and contract violations
(``fuzz_campaign.py``), long runs of compiled training steps and fresh graphs with RSS, file
descriptors, buffers and caches sampled (``longrun.py``), processes × threads on one cache
(``concurrency.py``) and SIGKILLs at random moments (``faults.py``). ``--quick`` runs each at a
tenth of its size or less, to check the campaigns themselves. Each campaign also runs alone.

``--only`` runs the named campaigns and replaces only their sections of the report, so a
campaign can be rerun (or, on a small machine, run in several sittings) without losing the
others' figures; each section says when, where and how long it ran. The fuzzing campaign keeps
its progress in ``benchmarks/results/fuzz-progress.json`` and resumes from it: ``--fuzz-minutes``
stops it at the first batch boundary after that long, and the next run goes on with the next
seed until 10,000 graphs per device have been checked.
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import concurrency
import faults
import fuzz_campaign
import longrun

from vkml.runtime.vulkan_loader import vulkan_device_reports

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
OUT = RESULTS / "stress.md"
PROGRESS = RESULTS / "fuzz-progress.json"
ORDER = ("fuzz", "longrun", "concurrency", "faults")
TITLE = (
    "# make stress\n\nWritten by scripts/stress/run.py; each section says when it last ran. "
    "The bugs the campaigns found, and the tests that now cover them: "
    "[stress-findings.md](stress-findings.md).\n"
)


def campaigns(args: argparse.Namespace, devices: list[str]) -> dict[str, Callable[[], str]]:
    """The four campaigns at full size (``--quick``: a tenth or less), each giving its section."""
    q, fuzz_minutes = args.quick, args.fuzz_minutes
    return {
        "fuzz": lambda: fuzz_campaign.run(1_000 if q else args.fuzz_graphs, devices,
                                 shrink=not args.no_shrink,
                                 progress=None if q else PROGRESS, minutes=fuzz_minutes),
        "longrun": lambda: longrun.main(["--steps", "2000" if q else "100000",
                                         "--every", "1000" if q else "10000",
                                         "--devices", ",".join(devices)]),
        "concurrency": lambda: concurrency.main(["--processes", "3" if q else "6",
                                                 "--threads", "3" if q else "4"]),
        "faults": lambda: faults.main(["--kills", "4" if q else "20"]),
    }  # fmt: skip


def sections(text: str) -> dict[str, str]:
    """The report's ``## `` sections by campaign name (the order of ``ORDER``)."""
    found = {}
    parts = re.split(r"(?m)^(?=## )", text)
    for part in parts[1:]:
        name = _campaign_of(part.splitlines()[0])
        if name:
            found[name] = part.rstrip("\n") + "\n"
    return found


def _campaign_of(heading: str) -> str | None:
    titles = {"## Fuzzing": "fuzz", "## Long runs": "longrun", "## Concurrency": "concurrency",
              "## Faults": "faults"}  # fmt: skip
    return next((name for title, name in titles.items() if heading.startswith(title)), None)


def stamp(section: str, minutes: float, quick: bool, devices: list[str]) -> str:
    """``section`` with a line under its heading: date, machine, devices, minutes."""
    heading, _, body = section.partition("\n")
    line = (
        f"_Finished {time.strftime('%Y-%m-%d %H:%M')} UTC on {platform.node()} ({platform.machine()}), "
        f"devices {', '.join(devices)}, {minutes:.0f} min{' (--quick sizes)' if quick else ''}._"
    )
    return f"{heading}\n\n{line}\n{body}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the script")
    parser.add_argument("--only", default=",".join(ORDER), help="comma-separated campaigns")
    parser.add_argument("--fuzz-minutes", type=float, default=None,
                        help="stop fuzzing after this long (it resumes next time)")  # fmt: skip
    parser.add_argument("--fuzz-graphs", type=int, default=fuzz_campaign.GOAL,
                        help="graphs per device the fuzz campaign runs to, over all its sittings "
                        f"(more than {fuzz_campaign.GOAL:,}: a sitting past the goal)")  # fmt: skip
    parser.add_argument("--no-shrink", action="store_true",
                        help="record fuzz failures as found, without hypothesis shrinking them")  # fmt: skip
    args = parser.parse_args(argv)
    chosen = args.only.split(",")
    unknown = sorted(set(chosen) - set(ORDER))
    if unknown:
        parser.error(
            f"--only: unknown campaign(s) {', '.join(unknown)}; choose from {', '.join(ORDER)}"
        )
    devices = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
    todo = campaigns(args, devices)
    kept = sections(OUT.read_text()) if OUT.exists() else {}
    for name in ORDER:
        if name in chosen:
            start = time.perf_counter()
            text = todo[name]()
            kept[name] = stamp(text, (time.perf_counter() - start) / 60, args.quick, devices)
            _write(kept)  # after each campaign: a later failure loses nothing
    print(f"wrote {OUT}")


def _write(kept: dict[str, str]) -> None:
    body = "\n".join(kept[name] for name in ORDER if name in kept)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(TITLE + "\n" + body)
    tmp.replace(OUT)


if __name__ == "__main__":
    main()
