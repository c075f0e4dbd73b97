"""Where one turn of issue 10's device loop spends its time on a GPU, dispatch by dispatch.

    python scripts/gpu/turn_cost.py [--device vulkan:0] [--repeats 20]

The loop's turn (``scripts/gpu/builder.py``) is ``where(x.amax() < limit, x * a + b, x)`` on
1M float32: on NVIDIA's ``ampere`` target IREE makes it six dispatches, five for the amax
tree (1M -> 65,536 -> 4,096 -> 256 -> 16 -> 1) and one for the update. Each row is one
graph, captured (``vkml.trace``, so a call plans nothing), called and waited for (the result
left on the device): the differences between rows are what the added dispatches cost:

- ``empty``: ``x + 0`` of 4 elements, the cost of a call itself;
- ``update``: ``x * a + b`` on 1M (one dispatch);
- ``amax``: the tree alone (five dispatches);
- ``turn``, ``10 turns``, ``100 turns``: one graph of that many predicated turns.

Graphs come from the compile cache where iree-base-compiler is absent: run this script once
on the development machine with ``VKML_PRECOMPILE_VULKAN=ampere+f64`` and the same
``VKML_CACHE_DIR`` to compile them for the GPU (``scripts/gpu/prepare.sh`` does).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from bench import timed  # scripts/gpu/bench.py, beside this script
from builder import ELEMENTS, A, B, predicated  # the loop of scripts/gpu/builder.py

import vkml


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="vulkan:0")
    parser.add_argument("--repeats", type=int, default=20, help="timed realizes per row")
    args = parser.parse_args(argv)
    dev = vkml.device(args.device)
    x = vkml.tensor(np.random.default_rng(0).random(ELEMENTS, dtype=np.float32), device=dev)
    small = vkml.tensor(np.ones(4, np.float32), device=dev)
    limit = vkml.tensor(np.float32(2.0), device=dev)
    rows: dict[str, Callable[..., vkml.Tensor]] = {
        "empty (4 elements)": lambda x, s, lim: s + 0.0,
        "update (1 dispatch)": lambda x, s, lim: x * A + B,
        "amax (5 dispatches)": lambda x, s, lim: x.amax(),
        "turn (6 dispatches)": lambda x, s, lim: predicated(x, lim, 1),
        "10 turns (60 dispatches)": lambda x, s, lim: predicated(x, lim, 10),
        "100 turns (600 dispatches)": lambda x, s, lim: predicated(x, lim, 100),
    }
    print(f"device {dev.name}; each row a captured graph called and waited for\n")
    print("| graph | median | min |")
    print("|---|---:|---:|")
    for name, fn in rows.items():
        captured = vkml.trace.capture(fn, x, small, limit)

        def run(captured: vkml.trace.Captured = captured) -> None:
            captured(x, small, limit)
            dev.synchronize()

        med, best = timed(run, args.repeats)
        print(f"| {name} | {med * 1e6:.0f} µs | {best * 1e6:.0f} µs |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
