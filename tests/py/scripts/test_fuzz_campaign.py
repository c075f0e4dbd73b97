"""scripts/stress/fuzz_campaign.py's bookkeeping: a device fault ends the process, not the sitting.

The campaign's devices and oracles are stand-ins here (no graph is compiled): what is tested
is what the campaign counts, saves and does when a batch loses its device.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# A campaign of 120 graphs on cpu whose device "faults" under the second batch of the first
# process, as lavapipe's did: the first graph fails with the fault, and every graph after it
# crashes because the device is gone.
SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    sys.path.insert(0, {stress!r})
    import fuzz_campaign as fc
    from fuzz.checker import Failure

    first_process = fc.RESTARTS_ENV not in os.environ
    seen = []

    def oracles(batch):
        return [None] * len(batch), []

    def run_device(ref, device, tally, pieces=True):
        seen.append(len(ref))
        tally.graphs += len(ref)
        if first_process and len(seen) == 2:
            lost = [Failure(device.name, 0, "violation", "exact value 1: values differ"),
                    Failure(device.name, 0, "crash", "DeviceFaultError: vulkan:0 failed while "
                            "running 'main' (IREE status DATA_LOSS)")]
            lost += [Failure(device.name, i, "crash", "DeviceFaultError: vulkan:0 was lost")
                     for i in range(1, len(ref))]
            tally.crashes += len(ref)
            return lost
        return []

    fc.oracles, fc.run_device = oracles, run_device
    print(fc.run(3 * fc.BATCH, ["cpu"], progress=Path(sys.argv[1])))
    """
)


def test_a_device_fault_is_one_crash_and_the_sitting_goes_on_in_a_fresh_process(tmp_path):
    script = tmp_path / "campaign.py"
    script.write_text(SCRIPT.format(stress=str(ROOT / "scripts" / "stress")))
    progress = tmp_path / "progress.json"
    done = subprocess.run(
        [sys.executable, str(script), str(progress)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "faulted; going on in a fresh process" in done.stdout
    assert "resuming at seed 0, batch 3" in done.stdout  # after the batch that faulted
    state = json.loads(progress.read_text())
    cpu = state["tallies"]["cpu"]
    # the 39 graphs of its cascade were never checked: a fourth batch makes up for them
    assert cpu["graphs"] == 4 * 40 - 39
    assert cpu["crashes"] == 1  # the fault, not the cascade
    assert state["reference"]["graphs"] == 4 * 40
    assert state["sittings"] == 1  # a fresh process is the same sitting
    (lost,) = [m for m in state["minimal"] if "lost in" in m]
    assert lost.startswith("cpu lost in seed 0, batch 2: cpu crash in graph 0: DeviceFaultError")
    # what the batch found besides the fault is kept: the wrong value first
    (batch,) = [m for m in state["minimal"] if m.startswith("cpu violation")]
    assert "DeviceFaultError" in batch and "was lost" not in batch
