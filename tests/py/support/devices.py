"""Markers for tests that need a device this machine may not have."""

from __future__ import annotations

import pytest

from vkml.runtime.vulkan_loader import vulkan_device_reports

# a test (or, as ``pytestmark``, a module) that runs on vulkan:0
needs_vulkan = pytest.mark.skipif(
    not vulkan_device_reports(),
    reason="no Vulkan device: install a GPU driver, or Mesa's CPU Vulkan "
    "(apt-get install libvulkan1 mesa-vulkan-drivers), to run the Vulkan tests",
)
