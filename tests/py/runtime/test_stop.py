"""``stoppable``: Ctrl-C ends a call through its stop flag whichever thread the signal lands
on and whenever it comes, and the call's worker thread never outlives the interrupt (a daemon
thread still inside IREE when Python exits aborts the process)."""

from __future__ import annotations

import signal
import threading
import time

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


def test_an_interrupt_while_the_worker_starts_stops_the_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flag = Flag()
    workers: list[threading.Thread] = []
    start_thread = threading.Thread.start

    def start_then_interrupt(self: threading.Thread) -> None:
        start_thread(self)
        workers.append(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        stop.stoppable(lambda: loop_until(flag), flag)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert flag.set.is_set()
    assert [w.is_alive() for w in workers] == [False]


def test_a_call_that_ends_returns_its_value_and_raises_its_error() -> None:
    assert stop.stoppable(lambda: 7, Flag()) == 7  # type: ignore[arg-type]

    def fail() -> None:
        raise ValueError("from the call")

    with pytest.raises(ValueError, match="from the call"):
        stop.stoppable(fail, Flag())  # type: ignore[arg-type]
