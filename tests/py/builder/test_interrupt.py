"""A device loop whose condition never fails: Ctrl-C stops it within a turn and leaves the
process usable (it ignored SIGINT at 10 minutes: IREE runs the loop inside the call, where
Python's handler cannot run; vkml/runtime/stop.py), and ``max_turns`` bounds it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader

DEVICES = ["cpu"] + (["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else [])

FOREVER = """
import faulthandler, signal, sys, threading, time, numpy as np, vkml
faulthandler.enable()  # a crash prints every thread's stack into the test's message
signal.signal(signal.SIGINT, signal.default_int_handler)  # a runner may start us ignoring it
device = sys.argv[1]

@vkml.Graph.builder
def forever(x):
    while x.sum() > 0:  # never false
        x = x + 1.0
    return x

g = forever(vkml.tensor(np.ones(4, np.float32), device=device))
(vkml.tensor([1.0], device=device) * 2.0).numpy()


def announce():  # once the call runs (its module compiled), the loop is turning
    while not any(t.name == "vkml-call" for t in threading.enumerate()):
        time.sleep(0.01)
    print("running", flush=True)


threading.Thread(target=announce, daemon=True).start()
start = time.monotonic()
try:
    g()
except KeyboardInterrupt:
    print(f"interrupted {time.monotonic() - start:.2f}", flush=True)
print("usable", (vkml.tensor([1.0, 2.0], device=device) * 3.0).tolist(), flush=True)
"""


def interrupt_forever(script: Path, device: str) -> tuple[int, list[str], str]:
    """Run the script, Ctrl-C it once its loop turns: its return code, output lines, stderr."""
    child = subprocess.Popen(
        [sys.executable, str(script), device],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "running"
        time.sleep(1.0)  # the loop is turning
        os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=300)
    finally:
        child.kill()  # a failure never leaves the loop turning
    return child.returncode, out.splitlines(), err


@pytest.mark.parametrize("device", DEVICES)
def test_ctrl_c_stops_a_device_loop_within_a_turn(device: str, tmp_path: Path) -> None:
    script = tmp_path / "forever.py"  # the builder reads its function's source from a file
    script.write_text(FOREVER)
    code, lines, err = interrupt_forever(script, device)
    assert code == 0, err
    assert lines[0].startswith("interrupted"), lines
    assert lines[1] == "usable [3.0, 6.0]"


@pytest.mark.parametrize("device", ["reference", *DEVICES])
def test_max_turns_bounds_a_device_loop(device: str) -> None:
    @vkml.Graph.builder(max_turns=7)
    def grow(x):  # type: ignore[no-untyped-def]
        n = x.sum() * 0.0
        while x.sum() > 0:
            x = x + 1.0
            n = n + 1.0
        return x, n

    x, n = grow(vkml.tensor(np.ones(2, np.float32), device=device))()
    assert x.tolist() == [8.0, 8.0] and n.item() == 7.0
    ones = vkml.tensor(np.ones(3, np.float32), device=device)
    (y,) = vkml.while_loop(lambda v: v.sum() > 0, lambda v: v * 2.0, ones, max_turns=5)
    assert y.tolist() == [32.0] * 3
    i, v = vkml.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v + 1.0),
        vkml.tensor(np.int32(0), device=device), ones, max_turns=10,
    )  # fmt: skip
    assert i.item() == 3 and v.tolist() == [4.0] * 3  # the condition ended it first


def test_max_turns_must_be_a_count() -> None:
    with pytest.raises(ValueError, match=r"max_turns must be an int from 0 to 2\*\*31 - 1"):
        vkml.Graph.builder(max_turns=-1)
    with pytest.raises(ValueError, match=r"'while_loop': max_turns must be an int"):
        vkml.while_loop(lambda v: v.sum() > 0, lambda v: v, vkml.ones(2), max_turns=2.5)
