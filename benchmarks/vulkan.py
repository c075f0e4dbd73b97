"""vkml's ``vulkan:0`` as extra rows in benchmarks 2 and 3, beside the vkml cpu row.

The device and what it is come from ``vkml.device("vulkan:0")`` and its report. Where there is
no Vulkan device the rows are "n/a" with the reason. Mesa's lavapipe (device type ``cpu``) runs
the SPIR-V shaders on this machine's CPU cores through LLVM, so its rows are CPU numbers: they
say what vkml's Vulkan path costs in overhead, not how fast a GPU is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import vkml
from benchmarks.harness import Row, Timing, attempt, describe_failure

VULKAN = "vulkan:0"


@dataclass(frozen=True)
class VulkanRows:
    """The ``vulkan:0`` device, or the reason there is none, and how its rows are labelled."""

    device: vkml.Device | None
    label: str  # row-name prefix: "vkml vulkan:0 on lavapipe (CPU)"
    note: str  # the note cell of each row
    about: str  # one bench note: what the device is, or why its rows are n/a

    def row(self, suffix: str, measure: Callable[[vkml.Device], Timing], work: float = 0.0) -> Row:
        """One row named ``label + suffix``: ``measure(device)``, or n/a without a device."""
        name = self.label + suffix
        if self.device is None:
            return Row(name, unavailable=self.about)
        device = self.device
        return attempt(name, lambda: measure(device), note=self.note, work=work)


def vulkan_rows() -> VulkanRows:
    """What the benchmarks' ``vulkan:0`` rows run on, read from the device's report."""
    try:
        device = vkml.device(VULKAN)
    except Exception as exc:  # noqa: BLE001 - no Vulkan device must never stop the run
        reason = f"no Vulkan device here ({describe_failure(exc)})"
        return VulkanRows(None, f"vkml {VULKAN}", "", reason)
    report = device.report
    on_cpu = report.device_type == "cpu"
    driver = "lavapipe" if on_cpu and "llvmpipe" in report.name.lower() else report.name
    label = f"vkml {VULKAN} on {driver}" + (" (CPU)" if on_cpu else "")
    about = (
        f"{VULKAN} is {report.name} (driver {report.driver_name}, {report.driver_info}; "
        f"Vulkan {report.api_version}; device type {report.device_type}; IREE target "
        f"{device.target.name})."
    )
    if on_cpu:
        about += (
            f" {driver} is a CPU implementation of Vulkan: its rows are CPU numbers (the same "
            "cores as the cpu rows), not GPU numbers. `vkml / this` compares every peer with "
            "the vkml cpu row."
        )
    note = "CPU number: Vulkan run on the CPU" if on_cpu else ""
    return VulkanRows(device, label, note, about)
