"""What a queued call borrows and gives back: a semaphore to signal, storage for transients.

A module compiled with IREE's "coarse-fences" model (``Abi.queued``) takes a wait fence and a
signal fence; whoever reads its results waits on the signal fence (``vkml.runtime.pending``).
A fence is a (semaphore, value) pair, and
creating a Vulkan timeline semaphore costs the NVIDIA driver two kernel calls of ~250 µs each
(an allocation and a free, seen with strace on an H100: ADR 0015), which is most of what a
synchronous IREE call (a new semaphore per call) costs there. So each session keeps its
semaphores and hands one to each call, with the next value on it; a semaphore serves one
call at a time, since a timeline's values must be signalled in order, and goes back to the
pool once its call is found done (``SemaphorePool.reap``, at the next call).

The same holds for the memory IREE keeps values in between a module's dispatches: allocated
per call, each allocation and free is a queue operation of ~0.3-0.5 ms there. A module that
takes that storage as an argument (``Abi.transients``) gets a buffer from its executable's
pool, one per call in flight.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import iree.runtime as rt

from vkml.errors import InvocationError
from vkml.runtime.pending import Pending

T = TypeVar("T")

# Calls queued on one session before the next waits for the oldest (each holds a semaphore
# and its module's transient storage until it is done); threads queueing at once may pass it
# by one call each.
MAX_IN_FLIGHT = 16


class _Pool(Generic[T]):
    """Idle items, each with a number the next borrower continues from."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._idle: list[tuple[T, int]] = []
        self._lock = threading.Lock()
        self.created = 0

    def take(self) -> tuple[T, int]:
        """An item no other call uses, and its number plus one (1 for a new item)."""
        with self._lock:
            if self._idle:
                item, last = self._idle.pop()
                return item, last + 1
            self.created += 1
        return self._make(), 1

    def give(self, item: T, number: int) -> None:
        """Return ``item`` once its call is done (a failed call keeps it: it may be in use)."""
        with self._lock:
            self._idle.append((item, number))

    def release(self) -> None:
        """Drop the idle items (made again when next needed): IREE objects must go before
        the interpreter tears its modules down (``IreeDevice.release``)."""
        with self._lock:
            self._idle.clear()


class SemaphorePool(_Pool[rt.HalSemaphore]):
    """Idle timeline semaphores of one HAL device; an item's number is the last value
    signalled on it, so ``take`` gives the value this call signals."""

    def __init__(self, device: rt.HalDevice) -> None:
        super().__init__(lambda: device.create_semaphore(0))
        self._nothing: rt.HalFence | None = None
        self._flight: deque[Pending] = deque()
        self._failures: list[InvocationError] = []  # found by reap, raised by drain

    def queued(self, call: Pending) -> None:
        """Keep ``call`` (queued, not waited for) until ``reap`` finds it done."""
        with self._lock:
            self._flight.append(call)

    def reap(self) -> None:
        """Let the calls that are done give back what they borrowed, oldest first (stopping
        at the first still running: one queue mostly ends them in order), and wait for the
        oldest while more than ``MAX_IN_FLIGHT`` are queued, so a host that runs ahead of its
        device does not queue without end. A call that failed keeps its semaphore; its error
        is raised where its results are read."""
        while True:
            with self._lock:
                if not self._flight:
                    return
                oldest = self._flight[0]
                full = len(self._flight) >= MAX_IN_FLIGHT
            try:
                if full:
                    oldest.wait()
                elif not oldest.reached():
                    return
            except InvocationError as exc:
                with self._lock:
                    self._failures.append(exc)
            with self._lock:
                if self._flight and self._flight[0] is oldest:
                    self._flight.popleft()

    @property
    def nothing(self) -> rt.HalFence:
        """The wait fence of a call that waits for nothing: empty, shared, never changed."""
        if self._nothing is None:
            self._nothing = rt.HalFence(1)
        return self._nothing

    def drain(self, spin: float = 0.0) -> None:
        """Wait for every call in flight (``Pending.wait``), then raise the first failure of
        those or of the calls ``reap`` found failed since the last ``drain``."""
        with self._lock:
            flight = list(self._flight)
        failure: InvocationError | None = None
        for call in flight:
            try:
                call.wait(spin)
            except InvocationError as exc:
                failure = failure or exc
        self.reap()
        with self._lock:
            found, self._failures = self._failures, []
        failure = failure or (found[0] if found else None)
        if failure is not None:
            raise failure

    def release(self) -> None:
        """Wait for the calls in flight, then drop the idle semaphores."""
        try:
            self.drain()
        except InvocationError:
            pass  # a failure is raised where its results are read
        with self._lock:
            self._flight.clear()
        super().release()
        self._nothing = None


class StoragePool(_Pool[rt.HalBuffer]):
    """Idle device buffers of ``size`` bytes for one module's transients."""

    def __init__(self, allocator: rt.HalAllocator, size: int) -> None:
        super().__init__(
            lambda: allocator.allocate_buffer(
                memory_type=rt.MemoryType.DEVICE_LOCAL,
                allowed_usage=rt.BufferUsage.DEFAULT,
                allocation_size=max(size, 64),  # IREE binds it even when nothing lives there
            )
        )
        self.size = size
