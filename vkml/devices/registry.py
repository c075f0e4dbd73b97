"""The devices by name: ``cpu``, ``reference`` and each Vulkan device the loader reports
(``vulkan:N``, made on first use); ``vkml.device(name)`` and ``vkml.best_device()``."""

from __future__ import annotations

from vkml.compiler.target import CPU_TARGET
from vkml.devices.cpu import CpuDevice
from vkml.devices.device import Device
from vkml.devices.reference import ReferenceDevice
from vkml.devices.vulkan import VulkanDevice
from vkml.errors import DeviceError
from vkml.runtime.vulkan_loader import (
    VulkanDeviceReport,
    best_vulkan_report,
    vulkan_device_reports,
    vulkan_problem,
)

cpu = CpuDevice("cpu", CPU_TARGET)
reference = ReferenceDevice("reference")

_DEVICES: dict[str, Device] = {"cpu": cpu, "reference": reference}


def device(name: str | Device) -> Device:
    """The device named ``name``: ``"cpu"`` or ``"reference"``.

    Raises:
        DeviceError: no device has that name; the message lists the ones present.
    """
    if isinstance(name, Device):
        return name
    key = str(name).strip().lower()
    found = _DEVICES.get(key)
    if found is None and key.startswith("vulkan"):
        found = _vulkan_device(key)
    if found is None:
        vulkan = [f"vulkan:{r.index}" for r in vulkan_reports()]
        present = ", ".join([*(d for d in _DEVICES if d not in vulkan), *vulkan])
        problem = vulkan_problem() if key.startswith("vulkan") and not vulkan else None
        why = f" ({problem})" if problem else ""
        raise DeviceError(f"unknown device {name!r}; devices present: {present}{why}")
    return found


_VULKAN_REPORTS: list[VulkanDeviceReport] | None = None


def vulkan_reports() -> list[VulkanDeviceReport]:
    """The Vulkan devices' reports, read from the loader once per process. Quiet: where
    Vulkan is missing, asking for a ``vulkan`` device by name says why (``device``)."""
    global _VULKAN_REPORTS
    if _VULKAN_REPORTS is None:
        _VULKAN_REPORTS = vulkan_device_reports(warn=False)
    return _VULKAN_REPORTS


def _vulkan_device(key: str) -> Device | None:
    index = key.partition(":")[2] or "0"
    if key.partition(":")[0] != "vulkan" or not index.isdigit():
        return None
    name = f"vulkan:{int(index)}"  # "vulkan", "vulkan:0" and "vulkan:00" are one device
    if name in _DEVICES:
        return _DEVICES[name]
    reports = vulkan_reports()
    if int(index) >= len(reports):
        return None
    device = VulkanDevice(name, reports[int(index)])
    _DEVICES[name] = device
    return device


def all_devices() -> list[Device]:
    return list(_DEVICES.values())


def best_device() -> Device:
    """The best device here: a discrete GPU, else an integrated one, else a virtual one, else
    ``vkml.cpu``. A Vulkan implementation on the CPU (Mesa's lavapipe) never outranks
    ``vkml.cpu``: it runs the same host cores through a shader emulator, tens of times
    slower (the digits demo: ~110 steps/s against ~6,900).

    Vulkan device indices are not stable across environments (a container can number the
    same GPU differently), so choosing by type, as this does, is the portable way.
    """
    best = best_vulkan_report(vulkan_reports())
    if best is None or best.device_type in ("cpu", "other"):
        return cpu
    return device(f"vulkan:{best.index}")


__all__ = ["Device", "all_devices", "best_device", "cpu", "device", "reference"]
