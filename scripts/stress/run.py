"""``make stress``: every long campaign of issue 14, one after another, into one report.

    .venv/bin/python scripts/stress/run.py [--quick]

Writes ``benchmarks/results/stress.md``: fuzzed graphs per device and contract violations
(``fuzz.py``), long runs of compiled training steps and fresh graphs with RSS, file
descriptors, buffers and caches sampled (``longrun.py``), processes × threads on one cache
(``concurrency.py``) and SIGKILLs at random moments (``faults.py``). ``--quick`` runs each at a
tenth of its size or less, to check the campaigns themselves. Each campaign also runs alone.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import concurrency
import faults
import fuzz
import longrun

from vkml.runtime.vulkan import vulkan_device_reports

OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "stress.md"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the script")
    args = parser.parse_args(argv)
    devices = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
    q = args.quick
    start = time.perf_counter()
    sections = [
        fuzz.run(1_000 if q else 10_000, devices),
        longrun.main(["--steps", "2000" if q else "100000", "--every", "1000" if q else "10000",
                      "--devices", ",".join(devices)]),
        concurrency.main(["--processes", "3" if q else "6", "--threads", "3" if q else "4"]),
        faults.main(["--kills", "4" if q else "20"]),
    ]  # fmt: skip
    head = (
        f"# make stress\n\n{time.strftime('%Y-%m-%d')}, {platform.node()} "
        f"({platform.machine()}), devices {', '.join(devices)}; "
        f"{(time.perf_counter() - start) / 60:.0f} minutes in all"
        f"{' (--quick sizes)' if q else ''}. Written by scripts/stress/run.py.\n"
    )
    OUT.write_text(head + "\n" + "\n".join(sections))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
