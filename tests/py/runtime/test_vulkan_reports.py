"""vkml.runtime.vulkan_loader: device reports read from the Vulkan loader, and device preference.

The lavapipe tests need Mesa's CPU Vulkan driver; without a Vulkan device they skip and say
how to get one. The fault and ordering tests run everywhere.
"""

from __future__ import annotations

import ctypes
import json
import warnings
from dataclasses import replace
from typing import Any

import pytest

from vkml.runtime import vulkan_abi, vulkan_loader as vulkan
from vkml.runtime.vulkan_loader import VulkanDeviceReport, VulkanWarning

ENABLE = (
    "install libvulkan1 and mesa-vulkan-drivers (apt-get install libvulkan1 mesa-vulkan-drivers)"
)


def _reports_quietly() -> list[VulkanDeviceReport]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VulkanWarning)
        return vulkan.vulkan_device_reports()


@pytest.fixture(scope="module")
def reports() -> list[VulkanDeviceReport]:
    found = _reports_quietly()
    if not found:
        pytest.skip(f"no Vulkan device on this machine: {ENABLE} to run the Vulkan tests")
    return found


@pytest.fixture(scope="module")
def lavapipe(reports: list[VulkanDeviceReport]) -> VulkanDeviceReport:
    for report in reports:
        if "llvmpipe" in report.name:
            return report
    pytest.skip(f"Vulkan devices present but no lavapipe among them: {ENABLE}")


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the warnings already given, so this test sees its own."""
    monkeypatch.setattr(vulkan, "_WARNED", set())


def _vulkan_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, VulkanWarning)]


def test_lavapipe_is_reported_as_a_mesa_cpu_device(lavapipe: VulkanDeviceReport) -> None:
    assert lavapipe.device_type == "cpu"
    assert lavapipe.vendor_id == 0x10005 and lavapipe.vendor == "Mesa"
    assert lavapipe.driver_name == "llvmpipe"
    assert lavapipe.driver_info.startswith("Mesa ")
    major, minor, _ = (int(part) for part in lavapipe.api_version.split("."))
    assert (major, minor) >= (1, 1)


def test_lavapipe_reports_its_features(lavapipe: VulkanDeviceReport) -> None:
    # Mesa 22+ lavapipe exposes all of these; a misplaced struct field reads them as 0.
    assert lavapipe.shader_float16 and lavapipe.shader_float64 and lavapipe.shader_int64
    assert lavapipe.shader_int16 and lavapipe.shader_int8
    assert lavapipe.storage_buffer_16bit and lavapipe.storage_buffer_8bit


def test_every_device_reports_at_least_the_vulkan_minimum_limits(
    reports: list[VulkanDeviceReport],
) -> None:
    # The spec's required minimums (VkPhysicalDeviceLimits table); garbage from a wrong
    # struct layout fails these or the upper bounds.
    for r in reports:
        assert 128 <= r.max_push_constants_size <= 65536, r
        assert r.subgroup_size is not None and r.subgroup_size & (r.subgroup_size - 1) == 0, r
        assert 1 <= r.subgroup_size <= 128, r
        assert all(a >= b for a, b in zip(r.max_compute_workgroup_size, (128, 128, 64))), r
        assert all(c >= 65535 for c in r.max_compute_workgroup_count), r
        assert 128 <= r.max_compute_workgroup_invocations <= 65536, r
        assert r.max_compute_shared_memory_size >= 16384, r
        assert r.device_type in vulkan.DEVICE_TYPE_PREFERENCE, r


def test_reports_are_numbered_in_enumeration_order(reports: list[VulkanDeviceReport]) -> None:
    assert [r.index for r in reports] == list(range(len(reports)))


def test_device_uuid_names_the_same_device_in_iree(
    reports: list[VulkanDeviceReport], lavapipe: VulkanDeviceReport
) -> None:
    # IREE's Vulkan driver selects a device by "vulkan://GPU-<deviceUUID>", not by our index.
    import iree.runtime as rt

    paths = {d["path"] for d in rt.get_driver("vulkan").query_available_devices()}
    assert f"GPU-{lavapipe.device_uuid}" in paths
    assert paths <= {f"GPU-{r.device_uuid}" for r in reports}


def test_as_dict_is_json_ready_and_rebuilds_the_report(lavapipe: VulkanDeviceReport) -> None:
    data: dict[str, Any] = json.loads(json.dumps(lavapipe.as_dict()))
    assert data["device_type"] == "cpu"
    assert data["max_compute_workgroup_size"] == list(lavapipe.max_compute_workgroup_size)
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    assert VulkanDeviceReport(**fields) == lavapipe


def test_missing_loader_gives_no_devices_and_one_warning(
    monkeypatch: pytest.MonkeyPatch, fresh_warnings: None
) -> None:
    monkeypatch.setattr(vulkan, "LOADER_NAMES", ("libvkml-no-such-vulkan.so.1",))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert vulkan.vulkan_device_reports() == []
        assert vulkan.vulkan_device_reports() == []
    [message] = _vulkan_warnings(record)
    assert "Vulkan is unavailable" in message
    assert "apt-get install libvulkan1 mesa-vulkan-drivers" in message


def test_loader_that_fails_to_open_is_treated_as_missing(
    monkeypatch: pytest.MonkeyPatch, fresh_warnings: None
) -> None:
    def refuse(name: str, *args: object, **kwargs: object) -> ctypes.CDLL:
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert vulkan.vulkan_device_reports() == []
    assert len(_vulkan_warnings(record)) == 1


def test_loader_without_a_driver_gives_no_devices_and_one_warning(
    reports: list[VulkanDeviceReport], monkeypatch: pytest.MonkeyPatch, fresh_warnings: None
) -> None:
    # The loader rescans its driver manifests at every vkCreateInstance.
    monkeypatch.setenv("VK_DRIVER_FILES", "/nonexistent/vkml_icd.json")
    monkeypatch.setenv("VK_ICD_FILENAMES", "/nonexistent/vkml_icd.json")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert vulkan.vulkan_device_reports() == []
        assert vulkan.vulkan_device_reports() == []
    [message] = _vulkan_warnings(record)
    assert "no driver" in message and "mesa-vulkan-drivers" in message


def test_a_device_that_fails_its_query_is_left_out_with_one_warning(
    reports: list[VulkanDeviceReport], monkeypatch: pytest.MonkeyPatch, fresh_warnings: None
) -> None:
    real = vulkan._read_device

    def fail_first(index: int, *args: object) -> VulkanDeviceReport:
        if index == 0:
            raise vulkan._VulkanCallFailed("vkGetPhysicalDeviceProperties2 failed")
        return real(index, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(vulkan, "_read_device", fail_first)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        partial = vulkan.vulkan_device_reports()
        vulkan.vulkan_device_reports()
    assert [r.index for r in partial] == [r.index for r in reports[1:]]
    [message] = _vulkan_warnings(record)
    assert "device 0" in message and "vkGetPhysicalDeviceProperties2" in message


BASE = VulkanDeviceReport(
    index=0, name="x", device_type="cpu", vendor_id=0x10005, vendor="Mesa", device_id=0,
    device_uuid="6d65736132322e332e36000000000000",
    driver_id=13, driver_name="llvmpipe", driver_info="", driver_version="0.0.1",
    api_version="1.3.230", subgroup_size=8, subgroup_size_range=(8, 8),
    max_compute_workgroup_size=(1024, 1024, 1024),
    max_compute_workgroup_count=(65535, 65535, 65535), max_compute_workgroup_invocations=1024,
    max_compute_shared_memory_size=32768, max_push_constants_size=128, shader_float16=True,
    shader_float64=True, shader_int8=True, shader_int16=True, shader_int64=True,
    storage_buffer_8bit=True, storage_buffer_16bit=True,
)  # fmt: skip


def test_preference_is_discrete_integrated_virtual_cpu_other_then_index() -> None:
    kinds = ["other", "cpu", "virtual", "integrated", "discrete", "discrete"]
    reports = [replace(BASE, index=i, device_type=kind) for i, kind in enumerate(kinds)]
    ordered = vulkan.by_preference(reports)
    assert [(r.device_type, r.index) for r in ordered] == [
        ("discrete", 4), ("discrete", 5), ("integrated", 3), ("virtual", 2), ("cpu", 1),
        ("other", 0),
    ]  # fmt: skip
    assert vulkan.best_vulkan_report(reports) == reports[4]
    assert vulkan.best_vulkan_report(reports[:2]) == reports[1]  # lavapipe beats "other"


def test_best_of_no_reports_is_none() -> None:
    assert vulkan.best_vulkan_report([]) is None


def test_driver_version_decodes_nvidia_packing_and_the_vulkan_one_otherwise() -> None:
    nvidia = (535 << 22) | (104 << 14) | (5 << 6)
    assert vulkan.driver_version_string(0x10DE, nvidia) == "535.104.05"
    assert vulkan.driver_version_string(0x10DE, nvidia | 3) == "535.104.05.3"
    assert vulkan.driver_version_string(0x10005, 1) == "0.0.1"
    amd = vulkan_abi.make_api_version(2, 0, 279)
    assert vulkan.driver_version_string(0x1002, amd) == "2.0.279"


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="sizes pinned for 64-bit ABIs")
def test_struct_layouts_match_vulkan_core_h() -> None:
    # sizeof/offsetof printed by gcc from vulkan_core.h 1.3.239 on x86-64.
    sizes = {
        vulkan_abi.VkPhysicalDeviceLimits: 504,
        vulkan_abi.VkPhysicalDeviceProperties: 824,
        vulkan_abi.VkPhysicalDeviceFeatures: 220,
        vulkan_abi.VkPhysicalDeviceProperties2: 840,
        vulkan_abi.VkPhysicalDeviceDriverProperties: 536,
        vulkan_abi.VkPhysicalDeviceSubgroupProperties: 32,
        vulkan_abi.VkPhysicalDeviceIDProperties: 64,
        vulkan_abi.VkInstanceCreateInfo: 64,
        vulkan_abi.VkExtensionProperties: 260,
    }
    assert {k.__name__: ctypes.sizeof(k) for k in sizes} == {
        k.__name__: v for k, v in sizes.items()
    }
    limits = vulkan_abi.VkPhysicalDeviceLimits
    assert limits.maxPushConstantsSize.offset == 32
    assert limits.maxComputeWorkGroupCount.offset == 220
    assert limits.maxComputeWorkGroupSize.offset == 236
    assert limits.nonCoherentAtomSize.offset == 496
    assert vulkan_abi.VkPhysicalDeviceFeatures.shaderFloat64.offset == 156


def test_lavapipe_reports_its_shader_loop_cap(lavapipe: VulkanDeviceReport) -> None:
    # gallivm's LP_MAX_TGSI_LOOP_ITERATIONS: one counter for all loops of an invocation
    assert lavapipe.shader_loop_cap == 65_535


def test_shader_loop_cap_by_driver_id_or_lavapipe_name() -> None:
    assert vulkan.shader_loop_cap(vulkan.DRIVER_ID_MESA_LLVMPIPE, "anything") == 65_535
    assert vulkan.shader_loop_cap(0, "llvmpipe (LLVM 15.0.6, 256 bits)") == 65_535  # Vulkan 1.0
    assert vulkan.shader_loop_cap(4, "NVIDIA H200") is None  # VK_DRIVER_ID_NVIDIA_PROPRIETARY
    assert vulkan.shader_loop_cap(0, "some GPU") is None
