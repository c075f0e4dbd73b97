"""Exported modules on a GPU machine that has no compiler: prepare here, check there.

    python scripts/gpu/aot.py prepare FOLDER [--target vulkan:ampere+f64]   # here
    python scripts/gpu/aot.py check FOLDER [--device vulkan:0]              # there

``prepare`` exports, for the GPU's IREE Vulkan target, the digits MLP's ``predict`` (its
initial weights, the 359 held-out images as one batch) and an SGD ``train_step`` of it, with
the inputs and cpu's results (``vkml`` realize on cpu) as ``.npy`` files. ``check`` loads both
modules on the GPU with ``vkml.aot.load``, runs ``predict`` with IREE's ``iree-run-module``
too, and prints a Markdown report: the two runs on the GPU must agree bit for bit, the labels
must equal cpu's, the logits and losses must be within the contract's bounds of cpu's
(matmul is not bit-exact across devices, ADR 0005); and the fresh-process time from
``vkml.aot.load`` to the first labels. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import iree._runtime.libs as iree_runtime_libs
import numpy as np

import vkml
from vkml import nn
from vkml.examples.digits import load_data, make_model

STEPS = 3
FIRST_RESULT = """
import sys, time
import iree._runtime.libs as iree_runtime_libs
import numpy as np
x = np.load(sys.argv[2])
start = time.perf_counter()
import vkml
loaded = vkml.aot.load(sys.argv[1], device=sys.argv[3])
labels = loaded.predict(x)["labels"]
print((time.perf_counter() - start) * 1000)
"""


def prepare(folder: Path, target: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = load_data(0)
    x = data.x_test.astype(np.float32)
    model = make_model(0, vkml.cpu)

    def predict(images: vkml.Tensor) -> dict[str, vkml.Tensor]:
        logits = model(images)
        return {"logits": logits, "labels": logits.argmax(axis=1)}

    vkml.aot.export(predict, x, device=target, weights=model).save(folder / "predict.vmfb")
    out = predict(vkml.tensor(x))
    np.save(folder / "x.npy", x)
    np.save(folder / "logits.npy", out["logits"].numpy())
    np.save(folder / "labels.npy", out["labels"].numpy())

    xb, yb = data.x_train[:128].astype(np.float32), data.y_train[:128].astype(np.int64)
    opt = nn.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = opt.compile_step(lambda images, labels: nn.cross_entropy(model(images), labels))
    train = vkml.aot.export(step, xb, yb, name="train_step", device=target, weights=model)
    train.save(folder / "train.vmfb")
    (signature,) = train.functions
    state: dict[str, np.ndarray] = {**model.state_dict(), "lr": np.asarray(0.1, np.float32)}
    for p_name, slots in zip((n for n, _ in model.named_parameters()), opt.state):
        for key, t in slots.items():
            state[f"{p_name}.{key}"] = t.numpy()
    inputs = {s.name: state[s.name] for s in signature.inputs[2:]}
    np.savez(folder / "state.npz", **inputs)  # type: ignore[arg-type]
    np.save(folder / "xb.npy", xb)
    np.save(folder / "yb.npy", yb)
    losses = [step(xb, yb).item() for _ in range(STEPS)]
    (folder / "losses.json").write_text(json.dumps(losses))
    print(f"prepared {folder} for {target}: {sorted(p.name for p in folder.iterdir())}")


def check(folder: Path, device_name: str) -> int:
    device = vkml.device(device_name)
    x, want_logits = np.load(folder / "x.npy"), np.load(folder / "logits.npy")
    physical = getattr(getattr(device, "report", None), "name", "")
    lines = [f"# Exported modules on {device} ({physical})", ""]
    failures = 0

    def verdict(ok: bool, what: str) -> None:
        nonlocal failures
        failures += not ok
        lines.append(f"- {'ok' if ok else 'FAILED'}: {what}")

    loaded = vkml.aot.load(folder / "predict.vmfb", device=device)
    got = loaded.predict(x)
    run = subprocess.run(
        [iree_tool("iree-run-module"),
         f"--module={folder / 'predict.vmfb'}", "--device=vulkan", "--function=predict",
         f"--parameters=model={folder / 'predict.irpa'}", f"--input=@{folder / 'x.npy'}",
         f"--output=@{folder / 'gpu_logits.npy'}", f"--output=@{folder / 'gpu_labels.npy'}"],
        capture_output=True, text=True,
    )  # fmt: skip
    verdict(
        run.returncode == 0,
        f"iree-run-module ran predict (exit {run.returncode}) {run.stderr[-300:]}",
    )
    if run.returncode == 0:
        same = np.array_equal(np.load(folder / "gpu_logits.npy"), got["logits"])
        verdict(same, "iree-run-module and vkml.aot.load give the same logits, bit for bit")
    verdict(np.array_equal(got["labels"], np.load(folder / "labels.npy")), "labels equal cpu's")
    scale = np.abs(want_logits).max()
    worst = float(np.abs(got["logits"] - want_logits).max() / scale)
    verdict(worst < 1e-5, f"logits within 1e-5 of cpu's (relative to max |logit|): {worst:.2e}")

    train = vkml.aot.load(folder / "train.vmfb", device=device)
    (signature,) = train.manifest.functions
    state = dict(np.load(folder / "state.npz"))
    xb, yb = np.load(folder / "xb.npy"), np.load(folder / "yb.npy")
    losses = []
    for _ in range(STEPS):
        outs = train.train_step(xb, yb, *[state[s.name] for s in signature.inputs[2:]])
        losses.append(float(outs[0]))
        state.update({s.name: v for s, v in zip(signature.outputs[1:], outs[1:])})
    want = json.loads((folder / "losses.json").read_text())
    close = all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(losses, want))
    verdict(close, f"{STEPS} exported SGD steps: losses {losses} vs cpu {want}")

    times = []
    for _ in range(5):
        child = subprocess.run(
            [sys.executable, "-c", FIRST_RESULT, str(folder / "predict.vmfb"),
             str(folder / "x.npy"), device_name],
            capture_output=True, text=True, env=os.environ,
        )  # fmt: skip
        if child.returncode != 0:
            verdict(False, f"fresh-process load failed: {child.stderr[-300:]}")
            break
        times.append(float(child.stdout.strip().splitlines()[-1]))
    if times:
        lines.append(
            f"- fresh process, import vkml + aot.load + first predict: median "
            f"{np.median(times):.1f} ms (min {min(times):.1f}, {len(times)} runs)"
        )
    start = time.perf_counter()
    for _ in range(20):
        loaded.predict(x)
    lines.append(
        f"- warm predict (upload, one invocation, readback): {(time.perf_counter() - start) / 20 * 1000:.2f} ms"
    )
    print("\n".join(lines))
    return 1 if failures else 0


def iree_tool(name: str) -> str:
    """The path of one of iree-base-runtime's tools: the binary inside the package, found
    even where the wheel was unpacked with ``pip --target`` (no console scripts)."""
    return str(Path(iree_runtime_libs.library_path) / name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("prepare", "check"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--target", default="vulkan:ampere+f64", help="prepare: the GPU's target")
    parser.add_argument("--device", default="vulkan:0", help="check: the GPU")
    args = parser.parse_args()
    if args.mode == "prepare":
        prepare(args.folder, args.target)
        return 0
    return check(args.folder, args.device)


if __name__ == "__main__":
    sys.exit(main())
