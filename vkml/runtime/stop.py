"""Stopping a call whose device loops would not end: Ctrl-C during a ``realize``.

A module with device loops takes a stop flag (``Abi.stop``): two ``int32`` zeros in memory the
host can map, which every loop reads at each turn. IREE runs such a loop's turns inside the
call, where Python's SIGINT handler cannot run, so the call runs on a worker thread while the
main thread waits for it; a ``KeyboardInterrupt`` in that wait sets the flag, every loop ends
at its next turn (within one host sync), the call returns, and the interrupt is raised again.
The results of a stopped call are dropped: nothing is bound, the process stays usable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from vkml.dtypes import int32
from vkml.runtime.buffers import upload_mappable
from vkml.runtime.hal import HalSession
from vkml.runtime.interrupts import interrupts_held

T = TypeVar("T")

WAKE_SECONDS = 0.05  # how often the waiting main thread looks for an interrupt


class StopFlag:
    """One call's stop flag: the buffer view it passes, and ``stop()`` to set it."""

    def __init__(self, sess: HalSession, device: str) -> None:
        self.view = upload_mappable(sess, np.zeros(2, np.int32), int32, device)
        self._host = self.view.get_buffer().map().asarray((2,), np.dtype(np.int32))

    def stop(self) -> None:
        self._host[:] = 1


def stoppable(call: Callable[[], T], flag: StopFlag) -> T:
    """``call()``, which Ctrl-C ends through ``flag``: on the main thread the call runs on a
    worker thread and an interrupt of the wait sets the flag, waits for the call to end and
    raises ``KeyboardInterrupt``. Elsewhere (a signal only reaches the main thread) the call
    runs as it is.

    The wait wakes every ``WAKE_SECONDS``: a process-directed SIGINT may land on any thread
    (the worker, one of IREE's), and Python raises it on the main thread only when that thread
    next runs bytecode. It waits for an event the call sets when it ends, never for the thread:
    Python 3.11's ``Thread.join``, interrupted while the thread runs, marks it stopped, and a
    process that then exited with the call still inside IREE aborted. An interrupt while the
    worker starts is held until it has started, then stops it."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    outcome: dict[str, Any] = {}
    ended = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc
        finally:
            ended.set()

    worker = threading.Thread(target=work, name="vkml-call", daemon=True)
    try:
        with interrupts_held():  # the worker exists, or the interrupt came before it
            worker.start()
        _wait_for(ended)
    except KeyboardInterrupt:
        flag.stop()
        _wait_out(ended)
        raise
    if "error" in outcome:
        raise outcome["error"]
    result: T = outcome["value"]
    return result


def _wait_for(ended: threading.Event) -> None:
    while not ended.wait(WAKE_SECONDS):
        pass


def _wait_out(ended: threading.Event) -> None:
    """Wait for a stopped call to end (within a turn); further interrupts meanwhile are
    dropped, since leaving the call running is what would make the process abort at exit."""
    while True:
        try:
            _wait_for(ended)
            return
        except KeyboardInterrupt:
            continue
