"""A queued call that may still be running, and the results it is writing.

On Vulkan, realize queues its module (``Abi.queued``) and returns without waiting: each result
is a ``ResultView`` whose ``pending`` is that call until the call is known to be done. What
reads a result on the host waits for it first (``settle``); a later call that reads one
waits on the device instead, through its wait fence (``wait_fence``), so consecutive realizes
queue one after another without the host waiting between them. A call's semaphore and its
transient storage go back to their pools once it is done (``SemaphorePool.reap``).

A call that fails on the device after it was queued (a device lost, say) fails its
semaphore; the error is raised, as the vkml error the call would have raised, by whatever
waits for its results.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence

import iree.runtime as rt

# Held while a call is marked done, so that what it borrowed is given back once.
_COMPLETING = threading.Lock()


def _nothing() -> None:
    pass


def _same(exc: Exception) -> Exception:
    return exc


class Pending:
    """A queued call until it is known to be done: the semaphore value it signals, what must
    stay alive until then (its arguments and results), and what to give back after."""

    __slots__ = ("_error", "_finish", "_keep", "done", "semaphore", "value")

    def __init__(
        self,
        semaphore: rt.HalSemaphore,
        value: int,
        finish: Callable[[], None],
        error: Callable[[Exception], Exception],
        keep: Sequence[object] = (),
    ) -> None:
        self.semaphore = semaphore
        self.value = value
        self.done = False
        self._finish = finish
        self._error = error
        self._keep: Sequence[object] = keep

    def fence(self) -> rt.HalFence:
        """The point the call signals, for a later call to wait on."""
        return rt.HalFence.create_at(self.semaphore, self.value)

    def reached(self) -> bool:
        """Whether the call is done, without waiting.

        Raises:
            DeviceFaultError, InvocationError: the call failed on the device.
        """
        if self.done:
            return True
        try:
            reached = self.semaphore.query() >= self.value
        except RuntimeError as exc:  # the call failed: IREE's status
            if self.done:  # another thread found it done and gave the semaphore back first
                return True
            raise self._error(exc) from exc
        if reached:
            self._complete()
        return reached

    def wait(self, spin: float = 0.0) -> None:
        """Return once the call is done. ``spin``: seconds to poll before blocking, for a
        device whose calls end sooner than a blocked thread wakes up (a discrete GPU's
        tiny call: ~50 µs polled against ~70 µs blocked, ADR 0015).

        Raises:
            DeviceFaultError, InvocationError: the call failed on the device.
        """
        if self.done:
            return
        fence = self.fence()
        try:
            if spin > 0:
                deadline = time.perf_counter() + spin
                while not fence.wait(timeout=0):
                    if time.perf_counter() > deadline:
                        fence.wait()
                        break
            else:
                fence.wait()
        except RuntimeError as exc:
            if self.done:  # as in ``reached``
                return
            raise self._error(exc) from exc
        self._complete()

    def _complete(self) -> None:
        with _COMPLETING:
            if self.done:
                return
            self.done = True
            finish, self._finish, self._error, self._keep = self._finish, _nothing, _same, ()
        finish()  # what it holds (its executable, storage) is let go with it


class ResultView(rt.HalBufferView):
    """A buffer view that a queued call may still be writing: ``pending`` is that call, or
    None once nothing is (and for a buffer no call writes)."""

    pending: Pending | None = None


def settle(views: Iterable[rt.HalBufferView], spin: float = 0.0) -> None:
    """Wait until no queued call is still writing any of ``views`` (see ``Pending.wait``)."""
    for view in views:
        pending = getattr(view, "pending", None)
        if pending is not None:
            pending.wait(spin)
            view.pending = None  # type: ignore[attr-defined]


def wait_fence(views: Iterable[rt.HalBufferView], empty: rt.HalFence) -> rt.HalFence:
    """The fence a queued call reading ``views`` waits on: every call still writing one of
    them (``empty`` when none is)."""
    points: list[Pending] = []
    for view in views:
        pending = getattr(view, "pending", None)
        if pending is not None:
            if pending.reached():
                view.pending = None  # type: ignore[attr-defined]
            elif pending not in points:
                points.append(pending)
    if not points:
        return empty
    fence = rt.HalFence(len(points))
    for p in points:
        fence.insert(p.semaphore, p.value)
    return fence
