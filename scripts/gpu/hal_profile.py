"""Where an IREE Vulkan call spends its time: hand-written modules under IREE's own tools.

Issue 12 (Vulkan at the GPU's speed) asks what one invocation through IREE's Vulkan HAL
costs and why: ~0.65-1.2 ms on an H200 against ~45 µs for a raw submit and fence wait. This
script measures it below vkml, with IREE's ``iree-benchmark-module`` on small StableHLO
modules (no vkml in the loop), and records a HAL profile of each (``iree-profile``: the host
time of every queue operation, alloca, execute, dealloca, and the device's own duration of
each).

Two steps, because the GPU machine has no compiler:

    python scripts/gpu/hal_profile.py prepare --target ampere     # here: writes .gpuprof/
    python scripts/gpu/hal_profile.py run --out $OUT              # there, with .gpuprof carried

``prepare`` compiles each module of ``MODULES`` for the IREE Vulkan target (``llvmpipe`` to
rehearse on lavapipe here). ``run`` times every module under each runtime variant of
``VARIANTS`` (IREE runtime flags), profiles each module once, and writes ``hal.md`` (the
table) and ``queue.txt`` (each profile's queue-operation timeline, a few calls' worth) to
``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(".gpuprof")


@dataclass(frozen=True)
class Module:
    """A hand-written module: its StableHLO, compile flags beyond the target, and inputs."""

    name: str
    mlir: str
    inputs: tuple[str, ...]
    flags: tuple[str, ...] = ()
    note: str = ""


def _chain(n: int) -> str:
    """Eight elementwise ops over n float32 (scripts/gpu/bench.py's chain8), one result."""
    t = f"tensor<{n}xf32>"
    ops = ["multiply", "add", "subtract", "multiply", "abs", "add", "multiply", "subtract"]
    consts = [0.999, 0.5, 0.25, 1.001, None, 1.0, 0.5, 0.125]
    lines, prev = [], "%x"
    for k, (op, c) in enumerate(zip(ops, consts)):
        if c is None:
            lines.append(f"  %v{k} = stablehlo.{op} {prev} : {t}")
        else:
            lines.append(f"  %c{k} = stablehlo.constant dense<{c}> : {t}")
            lines.append(f"  %v{k} = stablehlo.{op} {prev}, %c{k} : {t}")
        prev = f"%v{k}"
    body = "\n".join(lines)
    return f"func.func @main(%x: {t}) -> {t} {{\n{body}\n  return {prev} : {t}\n}}\n"


ADD = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
ADD_OUT = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>,
                 %out: tensor<4xf32> {iree.abi.output = 0 : index}) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
# three dependent adds, each result behind a barrier: IREE splits the call at each one
ADD3_BARRIERS = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.optimization_barrier %0 : tensor<4xf32>
  %2 = stablehlo.add %1, %b : tensor<4xf32>
  %3 = stablehlo.optimization_barrier %2 : tensor<4xf32>
  %4 = stablehlo.add %3, %b : tensor<4xf32>
  return %4 : tensor<4xf32>
}
"""
ADD5 = ADD3_BARRIERS.replace("stablehlo.optimization_barrier %0", "stablehlo.add %0, %b").replace(
    "stablehlo.optimization_barrier %2", "stablehlo.add %2, %b"
)
# the same three adds, each result behind IREE's compute barrier (vkml.dialect.fusion_stops)
ADD3_FENCES = ADD3_BARRIERS.replace(
    "stablehlo.optimization_barrier %0 : tensor<4xf32>",
    "iree_tensor_ext.compute_barrier.end %0 : tensor<4xf32> -> tensor<4xf32>",
).replace(
    "stablehlo.optimization_barrier %2 : tensor<4xf32>",
    "iree_tensor_ext.compute_barrier.end %2 : tensor<4xf32> -> tensor<4xf32>",
)
SMALL = ("4xf32=1,2,3,4", "4xf32=1,1,1,1")
MODULES = (
    Module("add", ADD, SMALL, note="IREE allocates the result"),
    Module("add-out", ADD_OUT, (*SMALL, "4xf32=0"), note="result storage passed in"),
    Module("add-async", ADD, SMALL, ("--iree-execution-model=async-external",), "fences"),
    Module(
        "add-out-async",
        ADD_OUT,
        (*SMALL, "4xf32=0"),
        ("--iree-execution-model=async-external",),
        "result passed in, fences",
    ),
    Module("add5", ADD5, SMALL, note="five dependent adds, one kernel"),
    Module("add3-barriers", ADD3_BARRIERS, SMALL, note="two optimization barriers"),
    Module("add3-fences", ADD3_FENCES, SMALL, note="two fusion fences"),
    Module("chain8-16M", _chain(16 * 1024 * 1024), ("16777216xf32=1.5",), note="64 MiB in/out"),
)

# Modules fence_wait.py calls itself (iree-benchmark-module cannot pass a !hal.buffer): three
# dispatches split by fences, queued, result passed in; the second with IREE's transient
# storage argument (iree.abi.transients): the caller's buffer instead of an alloca per call.
_ADD3_OUT = ADD3_FENCES.replace(
    "%b: tensor<4xf32>)", "%b: tensor<4xf32>, %out: tensor<4xf32> {iree.abi.output = 0 : index})"
)
CALL_MODULES = (
    Module("add3-out-async", _ADD3_OUT, (), ("--iree-execution-model=async-external",)),
    Module(
        "add3-out-async-transients",
        _ADD3_OUT.replace(
            "{iree.abi.output = 0 : index})",
            "{iree.abi.output = 0 : index}, %storage: !hal.buffer {iree.abi.transients})",
        ),
        (),
        ("--iree-execution-model=async-external",),
    ),
)

# Runtime variants: (label, iree-benchmark-module flags). Each is a documented IREE 3.13 flag
# (iree-benchmark-module --help) that could change the cost of a queue operation.
VARIANTS = (
    ("default", ()),
    ("caching allocator", ("--device_allocator=caching",)),
    ("descriptor ABI", ("--vulkan_dispatch_abi=descriptor",)),
    ("no BDA replay cache", ("--vulkan_cached_bda_replay_instances=0",)),
    ("shared queue", ("--vulkan_dedicated_compute_queue=false",)),
    ("no vulkan tracing", ("--vulkan_tracing=false",)),
)
PROFILE = "queue-events,device-queue-events"


def _tool(name: str, package: str = "iree._runtime_libs") -> str:
    """An IREE tool: on PATH, else beside the installed ``package`` (the runtime wheel
    unpacked with ``pip --target`` puts no tool on PATH)."""
    found = shutil.which(name) or shutil.which(Path(sys.executable).parent / name)
    if found:
        return found
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} not found: install {package.split('.')[1]}'s wheel")
    return str(Path(next(iter(spec.submodule_search_locations))) / name)


def prepare(target: str) -> None:
    """Compile every module for the IREE Vulkan ``target`` into .gpuprof/."""
    compiler = _tool("iree-compile", "iree.compiler")
    HERE.mkdir(exist_ok=True)
    for m in (*MODULES, *CALL_MODULES):
        cmd = [
            compiler, "-", "--iree-input-type=stablehlo", "--iree-hal-target-backends=vulkan-spirv",
            f"--iree-vulkan-target={target}", *m.flags, "-o", str(HERE / f"{m.name}.vmfb"),
        ]  # fmt: skip
        subprocess.run(cmd, input=m.mlir, text=True, check=True)
    print(f"wrote {len(MODULES) + len(CALL_MODULES)} modules for {target} to {HERE}/")


def _bench(m: Module, flags: tuple[str, ...], reps: int, extra: tuple[str, ...] = ()) -> str:
    cmd = [
        _tool("iree-benchmark-module"), "--device=vulkan", f"--module={HERE / m.name}.vmfb",
        "--function=main", *(f"--input={i}" for i in m.inputs), f"--benchmark_min_time={reps}x",
        "--benchmark_format=json", *flags, *extra,
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        status = re.findall(r"c/runtime/src/\S+: [A-Z_]+; [^;\n]*", done.stdout + done.stderr)
        return f"failed ({status[0] if status else done.returncode})"
    rows = json.loads(done.stdout[done.stdout.index("{") :])["benchmarks"]
    real = [r for r in rows if r.get("run_type") == "iteration"]
    us = real[0]["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[real[0]["time_unit"]]
    return f"{us:.0f} µs"


def _queue_timeline(path: Path, calls: int = 6) -> str:
    """The last ``calls`` calls' queue operations: op, host time since the first shown (µs),
    host wait until ready, and the device's duration where the profile has it."""
    done = subprocess.run(
        [_tool("iree-profile"), "queue", "--format=jsonl", str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    device = {e["submission_id"]: e for e in events if e["type"] == "queue_device_event"}
    host = [e for e in events if e["type"] == "queue_event"]
    calls_seen = max(1, sum(1 for e in host if e["op"] == "execute"))
    shown = host[-calls * max(1, len(host) // calls_seen) :]
    if not shown:
        return "(no queue events)"
    t0 = shown[0]["host_time_ns"]
    lines = []
    for e in shown:
        dev = device.get(e["submission_id"], {}).get("duration_ns")
        lines.append(
            f"{e['op']:>9} t={(e['host_time_ns'] - t0) / 1e3:9.1f} µs "
            f"ready+{(e['ready_host_time_ns'] - e['host_time_ns']) / 1e3:7.1f} µs "
            f"strategy={e.get('dependency_strategy', '')} waits={e['wait_count']} "
            f"device={'' if dev is None else f'{dev / 1e3:.1f} µs'}"
        )
    return "\n".join(lines)


def run(out: Path, reps: int) -> None:
    """Time and profile every prepared module; write hal.md and queue.txt to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    header = "| module | note | " + " | ".join(label for label, _ in VARIANTS) + " |"
    table = [header, "|" + "---|" * (len(VARIANTS) + 2)]
    timelines = []
    for m in MODULES:
        cells = [_bench(m, flags, reps) for _, flags in VARIANTS]
        table.append(f"| {m.name} | {m.note} | " + " | ".join(cells) + " |")
        print(table[-1], flush=True)
        prof = out / f"{m.name}.ireeprof"
        profiled = _bench(
            m, (), 50, (f"--device_profiling_mode={PROFILE}", f"--device_profiling_output={prof}")
        )
        explain = subprocess.run(
            [_tool("iree-profile"), "explain", str(prof)], capture_output=True, text=True
        ).stdout
        ops = re.findall(r"queue operations:.*\n.*\n.*", explain)
        timelines.append(
            f"== {m.name} (profiled: {profiled} per call)\n{ops[0] if ops else explain[-800:]}\n"
            f"{_queue_timeline(prof)}\n"
        )
        prof.unlink(missing_ok=True)
    (out / "hal.md").write_text(
        f"iree-benchmark-module real time per call, {reps} calls each\n\n" + "\n".join(table) + "\n"
    )
    (out / "queue.txt").write_text("\n".join(timelines))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="compile the modules into .gpuprof/ (here)")
    prep.add_argument("--target", default="ampere", help="IREE Vulkan target (llvmpipe here)")
    go = sub.add_parser("run", help="time and profile them (on the GPU machine)")
    go.add_argument("--out", type=Path, default=Path("/tmp/hal-profile"))
    go.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.target)
    else:
        run(args.out, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
