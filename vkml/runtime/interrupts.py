"""Holding Ctrl-C over a step that must not be cut in two.

Python raises ``KeyboardInterrupt`` on the main thread between any two bytecodes, so a step
that starts something it must later wait for (a worker thread) or that a native library cannot
survive being interrupted in (``iree.compiler``'s module init) can be left half done. Such a
step runs inside ``interrupts_held()``: a Ctrl-C meanwhile is recorded and raised once it ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block whole: on the main thread a SIGINT that arrives inside it raises
    ``KeyboardInterrupt`` after it. Only a Python handler is held: an ignored SIGINT stays
    ignored, and one whose handler was set from C (``getsignal`` reads ``None``) is left to it.
    If the block raises, its error propagates and a held interrupt is dropped with it."""
    held: list[int] = []
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if on_main else None
    hold = callable(previous)
    if hold:
        signal.signal(signal.SIGINT, lambda number, _: held.append(number))
    try:
        yield
    finally:
        if hold:
            signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt
