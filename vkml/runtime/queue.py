"""Timeline semaphores for queued calls, reused: one per call in flight, never one per call.

A module compiled with IREE's "coarse-fences" model (``Abi.queued``) takes a wait fence and a
signal fence; the caller waits on the signal fence. A fence is a (semaphore, value) pair, and
creating a Vulkan timeline semaphore costs the NVIDIA driver two kernel calls of ~250 µs each
(an allocation and a free, seen with strace on an H100: ADR 0015), which is most of what a
synchronous IREE call (a new semaphore per call) costs there. So each session keeps its
semaphores and hands one to each call, with the next value on it; a semaphore serves one
call at a time, since a timeline's values must be signalled in order.
"""

from __future__ import annotations

import threading

import iree.runtime as rt


class SemaphorePool:
    """Idle semaphores of one HAL device, each with the last value signalled on it."""

    def __init__(self, device: rt.HalDevice) -> None:
        self._device = device
        self._idle: list[tuple[rt.HalSemaphore, int]] = []
        self._lock = threading.Lock()
        self.created = 0
        self._nothing: rt.HalFence | None = None

    @property
    def nothing(self) -> rt.HalFence:
        """The wait fence of a call that waits for nothing: empty, shared, never changed."""
        if self._nothing is None:
            self._nothing = rt.HalFence(1)
        return self._nothing

    def take(self) -> tuple[rt.HalSemaphore, int]:
        """A semaphore no other call uses, and the value this call signals on it."""
        with self._lock:
            if self._idle:
                semaphore, last = self._idle.pop()
                return semaphore, last + 1
            self.created += 1
        return self._device.create_semaphore(0), 1

    def give(self, semaphore: rt.HalSemaphore, value: int) -> None:
        """Return ``semaphore`` once ``value`` was reached on it (its call is done)."""
        with self._lock:
            self._idle.append((semaphore, value))

    def release(self) -> None:
        """Drop the idle semaphores and the empty fence (made again when next needed): IREE
        objects must go before the interpreter tears its modules down (``IreeDevice.release``)."""
        with self._lock:
            self._idle.clear()
            self._nothing = None
