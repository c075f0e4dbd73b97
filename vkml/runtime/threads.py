"""Driver threads that spin while the device is idle, and lowering their priority.

IREE's Vulkan driver waits for its queues' semaphores on threads of its own. Mesa's lavapipe
answers such a wait by polling the clock in a loop, so from the moment the device is made two
threads keep both cores of a 2-core machine busy for the life of the process, whatever it
does: every compile of that process ran against them (a 2-file test slice took 72 s, 52 s with
them at the lowest priority). A GPU driver blocks in the same wait. vkml cannot make the wait
block, so on a Vulkan implementation that runs on the CPU it gives the threads found spinning
right after the device is made the lowest priority (nice 19): they still poll, but only with
what the rest of the machine leaves.

Linux only (``/proc/self/task``); elsewhere nothing is done.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_TASKS = Path("/proc/self/task")

# How long the threads are watched, and the share of it a spinning thread runs for at least.
# A thread that waits as a thread should runs for none of it; one that polls gets its share
# of the cores, a third or less on a 2-core machine busy with other work.
WATCH_SECONDS = 0.05
SPINNING_SHARE = 0.1
LOWEST_PRIORITY = 19


def thread_ids() -> set[int]:
    """This process's native threads (empty where there is no ``/proc``)."""
    try:
        return {int(name) for name in os.listdir(_TASKS)}
    except OSError:
        return set()


def _run_ns(tid: int) -> int | None:
    try:
        return int((_TASKS / str(tid) / "schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def spinning(candidates: set[int], seconds: float = WATCH_SECONDS) -> set[int]:
    """The threads of ``candidates`` that ran for most of ``seconds`` (watched, not waited on
    in any other way)."""
    before = {tid: _run_ns(tid) for tid in candidates}
    start = time.perf_counter_ns()
    time.sleep(seconds)
    elapsed = time.perf_counter_ns() - start
    found = set()
    for tid, ran_before in before.items():
        ran_after = _run_ns(tid)
        ran = None if ran_before is None or ran_after is None else ran_after - ran_before
        if ran is not None and ran >= SPINNING_SHARE * elapsed:
            found.add(tid)
    return found


def demote_spinning(candidates: set[int]) -> set[int]:
    """Give the threads of ``candidates`` that spin the lowest priority; return them."""
    found = spinning(candidates) if candidates else set()
    for tid in found:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, LOWEST_PRIORITY)
        except OSError:  # the thread ended, or no permission: it keeps its priority
            pass
    return found
