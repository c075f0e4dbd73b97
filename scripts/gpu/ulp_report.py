"""Measured error of every non-bit-exact op on a device, against ``reference``.

    python scripts/gpu/ulp_report.py [--device vulkan:0]

Runs the same programs as the op x dtype contract test (tests/py/devices/test_vulkan_device.py,
so on a machine without the compiler they come from the same cache entries) and prints, per
op and float dtype, the largest distance to the reference in units in the last place (the
number of representable values between the two), beside the op table's bound. For sin and cos
the table bounds the absolute error in eps instead, and for matmul the relative error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "py")]

import ml_dtypes
from support import op_programs as ops_test
from support.numerics import ulp_distance as ulp_distances

import vkml
from vkml.ops.registry import OPS


def ulp_distance(got: np.ndarray, want: np.ndarray) -> int:
    """The largest number of representable steps between ``got`` and ``want``."""
    d = ulp_distances(got, want)
    return int(d.max()) if d.size else 0


FLOATS = ("float32", "float16", "bfloat16", "float64")


def measure(device: vkml.Device, dtype: str) -> dict[str, str]:
    # the contract test's programs and inputs: the same graphs, hence the same cache entries
    progs = ops_test.programs_on(device, dtype)
    results = ops_test.run_on_both(device, dtype, progs)
    found: dict[str, str] = {}
    for name, (op, _) in progs.items():
        got, want = results[device.name][name], results["reference"][name]
        if OPS[op].bit_exact or got.dtype.kind not in "fV":
            continue
        eps = float(ml_dtypes.finfo(got.dtype).eps)
        g, w = got.astype(np.float64), want.astype(np.float64)
        if op in ("sin", "cos"):
            err = np.nanmax(np.abs(g - w)) / eps
            found[name] = f"{err:.1f} eps abs (bound {OPS[op].ulp})"
        elif op == "matmul":
            err = np.nanmax(np.abs(g - w) / np.maximum(np.abs(w), 1e-300)) / eps
            found[name] = f"{err:.2f} eps rel"
        else:
            found[name] = f"{ulp_distance(got, want)} ULP (bound {OPS[op].ulp})"
    return found


# Wide ranges, beyond the contract tests' inputs: Vulkan bounds exp by 3 + 2|x| ULP, so its
# error grows with the argument where llvm-cpu's stays within a few ULP.
WIDE = {
    "exp": np.linspace(-87.0, 88.0, 1 << 15, dtype=np.float32),
    "sigmoid": np.linspace(-87.0, 87.0, 1 << 15, dtype=np.float32),
    "tanh": np.linspace(-10.0, 10.0, 1 << 15, dtype=np.float32),
    "log": np.geomspace(1e-30, 1e30, 1 << 15).astype(np.float32),
    "gelu": np.linspace(-10.0, 10.0, 1 << 15, dtype=np.float32),
}


def measure_wide(device: vkml.Device) -> dict[str, str]:
    """Each op of ``WIDE`` over its range on ``device`` (one realize) against reference."""
    results = {}
    for where in (vkml.reference, device):
        outs = {op: getattr(vkml.tensor(x, device=where), op)() for op, x in WIDE.items()}
        vkml.realize(*outs.values())
        results[where.name] = {op: t.numpy() for op, t in outs.items()}
    return {
        op: f"{ulp_distance(results[device.name][op], results['reference'][op])} ULP "
        f"over [{WIDE[op].min():.3g}, {WIDE[op].max():.3g}] (bound {OPS[op].ulp})"
        for op in WIDE
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="vulkan:0")
    args = parser.parse_args()
    device = vkml.device(args.device)
    table: dict[str, dict[str, str]] = {}
    for dtype in FLOATS:
        if not device.supports("add", vkml.dtypes.to_dtype(dtype)):
            continue
        for name, text in measure(device, dtype).items():
            table.setdefault(name, {})[dtype] = text
    target = getattr(getattr(device, "target", None), "name", device.name)
    print(f"Largest error against reference on {device} ({target})\n")
    print("| program | " + " | ".join(FLOATS) + " |")
    print("|---|" + "---|" * len(FLOATS))
    for name in sorted(table):
        print(f"| {name} | " + " | ".join(table[name].get(d, "") for d in FLOATS) + " |")
    print("\nfloat32 over wide ranges:\n")
    for op, text in measure_wide(device).items():
        print(f"- {op}: {text}")
    stats = vkml.stats()
    print(f"\nvkml counters: compiles={stats['compiles']} invocations={stats['invocations']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
