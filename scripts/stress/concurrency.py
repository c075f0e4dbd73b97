"""Processes × threads sharing one new cache directory, all asking for the same graphs at once.

    .venv/bin/python scripts/stress/concurrency.py [--processes 6] [--threads 4] [--graphs 12]

Each thread of each process realizes every one of ``--graphs`` graphs (a matmul, a max, a
sum, each with its own constant, so each is its own module) in its own shuffled order, on
cpu. Checked: no process crashes, every result is the bits this process computes alone
(cpu's contract: the same bits every run), and the cache compiled each module once in all
(the per-key lock), with every entry on disk sound.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import vkml
from vkml.compiler.store import DiskStore

WORKER = """
import hashlib, json, random, sys, threading
import numpy as np
import vkml
sys.path.insert(0, sys.argv[4])
from concurrency import graph
threads, graphs, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
digests, failures = {}, []
def work(t):
    order = list(range(graphs))
    random.Random(seed * 1000 + t).shuffle(order)
    for k in order:
        try:
            got = graph(k, vkml.cpu).numpy()
            digests.setdefault(k, set()).add(hashlib.sha256(got.tobytes()).hexdigest())
        except Exception as exc:
            failures.append(repr(exc))
ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
[t.start() for t in ts]
[t.join() for t in ts]
print(json.dumps({"compiles": vkml.stats()["compiles"], "failures": failures,
                  "digests": {k: sorted(v) for k, v in digests.items()}}))
"""


def graph(k: int, device: vkml.Device) -> vkml.Tensor:
    """Graph ``k``: its constant, compiled in (``full``; a Python number would be a run-time
    input), makes its module differ from every other ``k``'s."""
    x = vkml.tensor(
        np.random.default_rng(k % 4).normal(size=(24, 16)).astype(np.float32), device=device
    )
    scale = vkml.full(x.shape, 1.0 + 0.25 * k, device=device)
    return ((x * scale + 0.5).maximum(x) @ x.transpose()).sum(axis=1)


def run(processes: int, threads: int, graphs: int) -> str:
    want = {
        k: hashlib.sha256(graph(k, vkml.cpu).numpy().tobytes()).hexdigest() for k in range(graphs)
    }
    with tempfile.TemporaryDirectory(prefix="vkml-stress-cache-") as cache:
        env = {**os.environ, "VKML_CACHE_DIR": cache}
        start = time.perf_counter()
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    WORKER,
                    str(threads),
                    str(graphs),
                    str(p),
                    str(Path(__file__).parent),
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for p in range(processes)
        ]
        outs = [w.communicate(timeout=1800)[0] for w in workers]
        seconds = time.perf_counter() - start
        crashes = sum(w.returncode != 0 for w in workers)
        reports = [json.loads(o) for o, w in zip(outs, workers) if w.returncode == 0]
        store = DiskStore(Path(cache))
        entries = store.entries()
        damaged = sum(store.read(p.stem) is None for p in entries)
    compiles = int(sum(r["compiles"] for r in reports))
    failures = sum(len(r["failures"]) for r in reports)
    wrong = sum(digests != [want[int(k)]] for r in reports for k, digests in r["digests"].items())
    realizes = processes * threads * graphs
    ok = crashes == failures == wrong == damaged == 0 and compiles == graphs == len(entries)
    intro = (
        f"{processes} processes × {threads} threads on one new cache directory, each thread "
        f"realizing all {graphs} graphs (one module each) in its own order on cpu."
    )
    header = (
        "| realizes | seconds | crashes | failed realizes | results unlike a lone run "
        "| compiles (modules) | entries on disk | damaged entries | within target |"
    )
    row = (
        f"| {realizes:,} | {seconds:.1f} | {crashes} | {failures} | {wrong} | {compiles} "
        f"({graphs}) | {len(entries)} | {damaged} | {'yes' if ok else '**no**'} |"
    )
    rule = "|---:|---:|---:|---:|---:|---|---:|---:|---|"
    return f"## Concurrency\n\n{intro}\n\n{header}\n{rule}\n{row}\n"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--graphs", type=int, default=12)
    args = parser.parse_args(argv)
    text = run(args.processes, args.threads, args.graphs)
    print(text)
    return text


if __name__ == "__main__":
    main()
