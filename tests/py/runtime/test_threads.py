"""Driver threads that spin while the device is idle run at the lowest priority
(``vkml.runtime.threads``): on lavapipe, IREE's semaphore waits poll the clock from the moment
the device is made, and at normal priority they took both cores from every compile."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from support.devices import needs_vulkan

import vkml
from vkml.runtime import threads

linux_only = pytest.mark.skipif(not threads.thread_ids(), reason="needs /proc/self/task")


@linux_only
def test_a_busy_thread_is_found_spinning_and_a_waiting_one_is_not() -> None:
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            pass

    before = threads.thread_ids()
    workers = [threading.Thread(target=busy), threading.Thread(target=stop.wait)]
    for w in workers:
        w.start()
    try:
        time.sleep(0.01)
        ids = {w.native_id for w in workers}
        assert ids <= threads.thread_ids() - before
        found = threads.spinning(ids, seconds=0.1)
    finally:
        stop.set()
        for w in workers:
            w.join()
    assert found == {workers[0].native_id}


@linux_only
@needs_vulkan
def test_no_thread_spins_at_normal_priority_after_a_realize_on_lavapipe() -> None:
    if vkml.device("vulkan:0").report.device_type != "cpu":
        pytest.skip("vulkan:0 is a GPU: its driver's waits block")
    # a fresh process: this one may hold a session made before the threads were watched. The
    # machine may be busy (another test worker): a spinning thread at normal priority still
    # gets a fair share of it, more than the 10% that counts as spinning
    script = """
import os, threading
import numpy as np
import vkml
from vkml.runtime import threads
x = vkml.tensor(np.ones(4, np.float32), device="vulkan:0")
(x * 2 + 1).numpy()
others = threads.thread_ids() - {threading.get_native_id()}
lowest = {t for t in others if os.getpriority(os.PRIO_PROCESS, t) == threads.LOWEST_PRIORITY}
print(len(lowest), len(threads.spinning(others - lowest, seconds=0.3)))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    # (Mesa runs its shader-cache thread at the lowest priority itself: only the second count
    # says anything)
    _, spinning = map(int, done.stdout.strip().splitlines()[-1].split())
    assert spinning == 0, f"{spinning} threads spin at normal priority"
