"""One IREE VM instance and HAL device per driver, created on first use and then shared."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import iree.runtime as rt

from vkml.runtime import threads
from vkml.runtime.queue import SemaphorePool

_LOCK = threading.Lock()
_SESSIONS: dict[str, HalSession] = {}


@dataclass(frozen=True)
class HalSession:
    """A driver's VM instance, HAL device and HAL module: what every loaded module needs;
    and the semaphores its queued calls signal (``vkml.runtime.queue``)."""

    driver: str
    instance: rt.VmInstance
    device: rt.HalDevice
    hal_module: rt.VmModule
    semaphores: SemaphorePool

    @property
    def allocator(self) -> rt.HalAllocator:
        return self.device.allocator


def session(driver: str, demote_spinning_threads: bool = False) -> HalSession:
    """The shared session of an IREE HAL driver such as ``local-task`` or ``vulkan``.

    With ``demote_spinning_threads`` (a Vulkan implementation on the CPU), the threads the
    driver starts that spin while the device is idle get the lowest priority when the session
    is made (``vkml.runtime.threads``)."""
    found = _SESSIONS.get(driver)
    if found is not None:
        return found
    with _LOCK:
        found = _SESSIONS.get(driver)
        if found is None:
            instance = rt.VmInstance()
            existing = threads.thread_ids() if demote_spinning_threads else set()
            device = rt.get_device(driver)
            if demote_spinning_threads:
                threads.demote_spinning(threads.thread_ids() - existing)
            hal_module = rt.create_hal_module(instance, device)
            found = HalSession(driver, instance, device, hal_module, SemaphorePool(device))
            _SESSIONS[driver] = found
    return found


def existing_session(driver: str) -> HalSession | None:
    """The driver's session if one was made, without making one."""
    return _SESSIONS.get(driver)
