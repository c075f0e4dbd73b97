"""One IREE VM instance and HAL device per driver, created on first use and then shared."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import iree.runtime as rt

_LOCK = threading.Lock()
_SESSIONS: dict[str, HalSession] = {}


@dataclass(frozen=True)
class HalSession:
    """A driver's VM instance, HAL device and HAL module: what every loaded module needs."""

    driver: str
    instance: rt.VmInstance
    device: rt.HalDevice
    hal_module: rt.VmModule

    @property
    def allocator(self) -> rt.HalAllocator:
        return self.device.allocator


def session(driver: str) -> HalSession:
    """The shared session of an IREE HAL driver such as ``local-task`` or ``vulkan``."""
    found = _SESSIONS.get(driver)
    if found is not None:
        return found
    with _LOCK:
        found = _SESSIONS.get(driver)
        if found is None:
            instance = rt.VmInstance()
            device = rt.get_device(driver)
            found = HalSession(driver, instance, device, rt.create_hal_module(instance, device))
            _SESSIONS[driver] = found
    return found
