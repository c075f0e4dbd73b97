"""``stoppable``: Ctrl-C ends a call through its stop flag whichever thread the signal lands
on and whenever it comes, and the call's worker thread never outlives the interrupt (a daemon
thread still inside IREE when Python exits aborts the process)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from vkml.runtime import stop

PATIENCE = 10.0  # seconds a call waits for its flag before it gives up


class Flag:
    """Stands in for ``StopFlag``: the host side of the flag only."""

    def __init__(self) -> None:
        self.set = threading.Event()

    def stop(self) -> None:
        self.set.set()


def loop_until(flag: Flag, on_start: object = None) -> str:
    """A device loop in miniature: turns until the flag is set (or ``PATIENCE`` runs out)."""
    if callable(on_start):
        on_start()
    return "stopped" if flag.set.wait(PATIENCE) else "ran on"


@pytest.fixture(autouse=True)
def python_handles_sigint() -> object:
    """Python's own SIGINT handler, whatever the runner started the tests with (a
    background job ignores SIGINT)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupt_that_lands_on_the_worker_thread_still_stops_the_call() -> None:
    # A process-directed SIGINT goes to any thread that does not block it; Python runs its
    # handler on the main thread only once that thread wakes, so a wait that never wakes
    # (an untimed join) left the loop running for ever.
    flag = Flag()

    def interrupt_from_here() -> None:
        time.sleep(0.2)  # the main thread is waiting for the call by now
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        stop.stoppable(lambda: loop_until(flag, interrupt_from_here), flag)  # type: ignore[arg-type]
    assert flag.set.is_set()
    assert time.monotonic() - start < PATIENCE / 2


def test_an_interrupted_wait_ends_only_once_the_call_has_ended() -> None:
    # Python 3.11's Thread.join, interrupted while the thread runs, marks it stopped
    # (threading.py, bpo-45274's handler releases the lock the running thread holds): the wait
    # for a stopped call then ended at once, the call still inside IREE, and a process that
    # exited meanwhile aborted ("exception not rethrown", issue 30).
    flag, ended = Flag(), threading.Event()
    main = threading.get_ident()

    def interrupt_main() -> None:
        time.sleep(0.2)  # the main thread is in its wait
        signal.pthread_kill(main, signal.SIGINT)

    def loop_then_end_the_turn() -> None:
        threading.Thread(target=interrupt_main).start()
        loop_until(flag)
        time.sleep(0.5)  # the turn in flight when the flag was set
        ended.set()

    with pytest.raises(KeyboardInterrupt):
        stop.stoppable(loop_then_end_the_turn, flag)  # type: ignore[arg-type]
    assert ended.is_set()


class Hung(Exception):
    """A wait that should have ended did not."""


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise ``Hung`` in the block after ``seconds`` (a failing test must not hang)."""

    def hung(*_: object) -> None:
        raise Hung

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_an_interrupt_before_the_worker_exists_stops_it_once_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Raised before the thread existed, the interrupt's wait for the call would never end.
    flag, began = Flag(), threading.Event()
    start_thread = threading.Thread.start

    def interrupt_then_start(self: threading.Thread) -> None:
        signal.raise_signal(signal.SIGINT)
        start_thread(self)

    monkeypatch.setattr(threading.Thread, "start", interrupt_then_start)
    with deadline(5), pytest.raises(KeyboardInterrupt):
        stop.stoppable(lambda: loop_until(flag, began.set), flag)  # type: ignore[arg-type]
    assert began.is_set() and flag.set.is_set()


def test_an_error_as_the_worker_starts_stops_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    flag, ended = Flag(), threading.Event()
    start_thread = threading.Thread.start

    def start_then_interrupt(self: threading.Thread) -> None:
        start_thread(self)
        raise KeyboardInterrupt

    def call() -> None:
        loop_until(flag)
        ended.set()

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    with deadline(5), pytest.raises(KeyboardInterrupt):
        stop.stoppable(call, flag)  # type: ignore[arg-type]
    assert flag.set.is_set() and ended.is_set()


def test_a_call_that_ends_returns_its_value_and_raises_its_error() -> None:
    assert stop.stoppable(lambda: 7, Flag()) == 7  # type: ignore[arg-type]

    def fail() -> None:
        raise ValueError("from the call")

    with pytest.raises(ValueError, match="from the call"):
        stop.stoppable(fail, Flag())  # type: ignore[arg-type]
