"""Vulkan physical devices as the Vulkan loader itself reports them, read through ctypes.

No Vulkan binding and no tool output: ``libvulkan.so.1`` is loaded with ctypes, a minimal
instance is created, each physical device is queried, and the instance is destroyed. A machine
without a loader or driver gets an empty list and one warning that says how to get Vulkan.
"""

from __future__ import annotations

import ctypes
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from vkml.runtime import vulkan_abi as abi

__all__ = [
    "DEVICE_TYPE_PREFERENCE",
    "VulkanDeviceReport",
    "VulkanWarning",
    "best_vulkan_report",
    "by_preference",
    "driver_version_string",
    "shader_loop_cap",
    "vulkan_device_reports",
    "vulkan_problem",
]

LOADER_NAMES: tuple[str, ...] = {
    "win32": ("vulkan-1.dll",),
    "darwin": ("libvulkan.1.dylib", "libMoltenVK.dylib"),
}.get(sys.platform, ("libvulkan.so.1",))

ENABLE_HINT = (
    "to enable Vulkan, install a GPU driver with Vulkan support, or Mesa's CPU "
    "implementation (lavapipe): apt-get install libvulkan1 mesa-vulkan-drivers"
)

# VkPhysicalDeviceType, by enumerant value.
DEVICE_TYPES = ("other", "integrated", "discrete", "virtual", "cpu")
# Which kind of device to prefer, best first: a real GPU, then a virtualised one, then a
# CPU implementation such as lavapipe (correct, but CPU-speed), then anything unclassified.
DEVICE_TYPE_PREFERENCE = ("discrete", "integrated", "virtual", "cpu", "other")

VENDORS = {
    0x10DE: "NVIDIA",
    0x1002: "AMD",
    0x8086: "Intel",
    0x10005: "Mesa",
    0x13B5: "ARM",
    0x5143: "Qualcomm",
    0x106B: "Apple",
}
NVIDIA = 0x10DE

# Drivers that end a shader's loops early, silently, by VkDriverId: the most loop iterations
# one shader invocation may run, all its loops together. Mesa's lavapipe (llvmpipe) gives
# each invocation one counter of 65,535 (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS, "shared
# between every loop"); past it, loops exit and the output is wrong without an error.
DRIVER_ID_MESA_LLVMPIPE = 13
SHADER_LOOP_CAPS: dict[int, int] = {DRIVER_ID_MESA_LLVMPIPE: 65_535}
HIGHEST_API = (1, 3)  # the newest Vulkan version whose structs this module reads

# The warnings already given in this process, by topic: each is given once (see _warn_once).
_WARNED: set[str] = set()
_PROBLEM: list[str] = []


class VulkanWarning(RuntimeWarning):
    """Vulkan is missing or a query failed; vkml carries on without the affected devices."""


class _VulkanCallFailed(Exception):
    """A Vulkan entry point is missing or returned an error code."""


@dataclass(frozen=True)
class VulkanDeviceReport:
    """What one Vulkan physical device reports: identity, driver, compute limits, features.

    ``index`` is the loader's enumeration order, which is not stable across machines or
    driver installs: choose a device by ``device_type``, not by index.
    """

    index: int
    name: str
    device_type: str  # "discrete", "integrated", "virtual", "cpu" or "other"
    vendor_id: int
    vendor: str  # a well-known vendor's name, else the id in hex
    device_id: int
    device_uuid: str  # deviceUUID in hex ("" on a Vulkan 1.0 device); IREE's path is GPU-<uuid>
    driver_id: int  # VkDriverId; 0 when the device cannot report it
    driver_name: str
    driver_info: str
    driver_version: str
    api_version: str  # "major.minor.patch" of the Vulkan version the device supports
    subgroup_size: int | None  # None on a Vulkan 1.0 device
    subgroup_size_range: tuple[int, int] | None  # (min, max) when subgroup size control exists
    max_compute_workgroup_size: tuple[int, int, int]
    max_compute_workgroup_count: tuple[int, int, int]
    max_compute_workgroup_invocations: int
    max_compute_shared_memory_size: int
    max_push_constants_size: int
    shader_float16: bool
    shader_float64: bool
    shader_int8: bool
    shader_int16: bool
    shader_int64: bool
    storage_buffer_8bit: bool
    storage_buffer_16bit: bool
    # loop iterations per shader invocation after which the driver silently stops a shader
    # (SHADER_LOOP_CAPS); None: no known cap
    shader_loop_cap: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready values (tuples become lists)."""
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in asdict(self).items()
        }


def vulkan_device_reports(warn: bool = True) -> list[VulkanDeviceReport]:
    """One report per Vulkan physical device, in the loader's order; an empty list when there
    is no Vulkan loader or driver, said once with a ``VulkanWarning`` if ``warn`` (the reason
    is kept either way: ``vulkan_problem()``). A device whose query fails is left out."""
    try:
        loader = _open_loader()
    except OSError as exc:
        _problem("loader", f"Vulkan is unavailable: no Vulkan loader ({exc}); {ENABLE_HINT}", warn)
        return []
    try:
        with _instance(loader) as (instance, proc, instance_api):
            handles = _physical_devices(instance, proc)
            if not handles:
                _problem("devices", f"Vulkan reports no physical devices; {ENABLE_HINT}", warn)
            return list(_read_devices(handles, proc, instance_api))
    except _VulkanCallFailed as exc:
        _problem("instance", f"Vulkan is unavailable: {exc}; {ENABLE_HINT}", warn)
        return []


def vulkan_problem() -> str | None:
    """Why the last ``vulkan_device_reports`` found no device, or None."""
    return _PROBLEM[-1] if _PROBLEM else None


def by_preference(reports: Iterable[VulkanDeviceReport]) -> list[VulkanDeviceReport]:
    """``reports`` ordered best first: discrete, integrated, virtual, cpu, other; ties by index."""
    return sorted(reports, key=lambda r: (DEVICE_TYPE_PREFERENCE.index(r.device_type), r.index))


def best_vulkan_report(reports: Iterable[VulkanDeviceReport]) -> VulkanDeviceReport | None:
    """The preferred device among ``reports`` (see ``by_preference``), or None if there is none."""
    ordered = by_preference(reports)
    return ordered[0] if ordered else None


def _problem(topic: str, message: str, warn: bool) -> None:
    _PROBLEM.append(message)
    if warn:
        _warn_once(topic, message, stacklevel=4)


def _warn_once(topic: str, message: str, stacklevel: int = 3) -> None:
    # Once per process and topic: device discovery may run often, the cause does not change.
    if topic not in _WARNED:
        _WARNED.add(topic)
        warnings.warn(message, VulkanWarning, stacklevel=stacklevel)


def _open_loader() -> ctypes.CDLL:
    errors = []
    for name in LOADER_NAMES:
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            errors.append(str(exc))
    raise OSError("; ".join(errors))


ProcLookup = Callable[[str], Any]


def _lookup(loader: ctypes.CDLL, instance: int | None) -> ProcLookup:
    """Resolves entry points through vkGetInstanceProcAddr, as the loader documents."""
    try:
        get_proc_addr = loader.vkGetInstanceProcAddr
    except AttributeError as exc:
        raise _VulkanCallFailed(f"{loader._name} is not a Vulkan loader ({exc})") from exc
    get_proc_addr.restype = ctypes.c_void_p
    get_proc_addr.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

    def proc(name: str) -> Any:
        address = get_proc_addr(instance, name.encode())
        if not address:
            raise _VulkanCallFailed(f"the Vulkan loader does not provide {name}")
        return abi.PROTOTYPES[name](address)

    return proc


def _check(result: int, call: str) -> None:
    if result < 0:
        raise _VulkanCallFailed(f"{call} failed with VkResult {result}")


@contextmanager
def _instance(loader: ctypes.CDLL) -> Iterator[tuple[int, ProcLookup, tuple[int, int]]]:
    """A fresh VkInstance, its entry-point lookup and its API version; destroyed on exit."""
    global_proc = _lookup(loader, None)
    api = _instance_api(global_proc)
    extensions = [e for e in _instance_extensions(global_proc) if e == abi.PORTABILITY_ENUMERATION]
    names = (ctypes.c_char_p * max(len(extensions), 1))(*extensions)
    app = abi.VkApplicationInfo(
        sType=abi.VK_STRUCTURE_TYPE_APPLICATION_INFO,
        pApplicationName=b"vkml",
        pEngineName=b"vkml",
        apiVersion=abi.make_api_version(*api),
    )
    info = abi.VkInstanceCreateInfo(
        sType=abi.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        # Without this flag the loader hides portability drivers such as MoltenVK.
        flags=abi.VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR if extensions else 0,
        pApplicationInfo=ctypes.pointer(app),
        enabledExtensionCount=len(extensions),
        ppEnabledExtensionNames=names,
    )
    handle = ctypes.c_void_p()
    result = global_proc("vkCreateInstance")(ctypes.byref(info), None, ctypes.byref(handle))
    if result == abi.VK_ERROR_INCOMPATIBLE_DRIVER:
        raise _VulkanCallFailed("the Vulkan loader found no driver (VK_ERROR_INCOMPATIBLE_DRIVER)")
    _check(result, "vkCreateInstance")
    assert handle.value is not None
    proc = _lookup(loader, handle.value)
    try:
        yield handle.value, proc, api
    finally:
        proc("vkDestroyInstance")(handle.value, None)


def _instance_api(proc: ProcLookup) -> tuple[int, int]:
    """The loader's Vulkan version, capped at HIGHEST_API (a 1.0 loader lacks the query)."""
    try:
        enumerate_version = proc("vkEnumerateInstanceVersion")
    except _VulkanCallFailed:
        return (1, 0)
    version = ctypes.c_uint32()
    _check(enumerate_version(ctypes.byref(version)), "vkEnumerateInstanceVersion")
    return min(abi.api_version_parts(version.value)[:2], HIGHEST_API)


def _instance_extensions(proc: ProcLookup) -> list[bytes]:
    call = proc("vkEnumerateInstanceExtensionProperties")
    return _extension_names(lambda n, out: call(None, n, out), "instance")


def _device_extensions(proc: ProcLookup, device: int) -> set[bytes]:
    call = proc("vkEnumerateDeviceExtensionProperties")
    return set(_extension_names(lambda n, out: call(device, None, n, out), "device"))


def _extension_names(call: Callable[[Any, Any], int], what: str) -> list[bytes]:
    # The two-call idiom; VK_INCOMPLETE means the list grew in between: ask again.
    while True:
        count = ctypes.c_uint32()
        _check(call(ctypes.byref(count), None), f"enumerating {what} extensions")
        items = (abi.VkExtensionProperties * count.value)()
        result = call(ctypes.byref(count), items)
        if result != abi.VK_INCOMPLETE:
            _check(result, f"enumerating {what} extensions")
            return [items[i].extensionName for i in range(count.value)]


def _physical_devices(instance: int, proc: ProcLookup) -> list[int]:
    call = proc("vkEnumeratePhysicalDevices")
    while True:
        count = ctypes.c_uint32()
        _check(call(instance, ctypes.byref(count), None), "vkEnumeratePhysicalDevices")
        handles = (ctypes.c_void_p * count.value)()
        result = call(instance, ctypes.byref(count), handles)
        if result != abi.VK_INCOMPLETE:
            _check(result, "vkEnumeratePhysicalDevices")
            return [handle for handle in handles[: count.value] if handle]


def _read_devices(
    handles: list[int], proc: ProcLookup, instance_api: tuple[int, int]
) -> Iterator[VulkanDeviceReport]:
    for index, handle in enumerate(handles):
        try:
            yield _read_device(index, handle, proc, instance_api)
        except _VulkanCallFailed as exc:
            _warn_once(
                "device", f"Vulkan device {index} could not be queried and is left out: {exc}"
            )


def _chain(
    kinds: tuple[type[abi.ChainedStruct], ...], api: tuple[int, int], extensions: set[bytes]
) -> tuple[dict[type, abi.ChainedStruct], int | None]:
    """The structs of ``kinds`` this device has, linked by pNext, and the chain's head address."""
    present = {
        kind: kind(sType=kind.STYPE)
        for kind in kinds
        if api >= kind.CORE or kind.EXTENSION in extensions
    }
    head: int | None = None
    for struct in present.values():
        struct.pNext = head
        head = ctypes.addressof(struct)
    return present, head


PROPERTY_CHAIN = (
    abi.VkPhysicalDeviceIDProperties,
    abi.VkPhysicalDeviceSubgroupProperties,
    abi.VkPhysicalDeviceDriverProperties,
    abi.VkPhysicalDeviceSubgroupSizeControlProperties,
)
FEATURE_CHAIN = (
    abi.VkPhysicalDeviceShaderFloat16Int8Features,
    abi.VkPhysicalDevice16BitStorageFeatures,
    abi.VkPhysicalDevice8BitStorageFeatures,
)


def _read_device(
    index: int, handle: int, proc: ProcLookup, instance_api: tuple[int, int]
) -> VulkanDeviceReport:
    props = abi.VkPhysicalDeviceProperties()
    proc("vkGetPhysicalDeviceProperties")(handle, ctypes.byref(props))
    # A struct is usable when both the instance and the device have its version (or its
    # extension): the instance decides which *2 queries exist, the device what they fill.
    api = min(instance_api, abi.api_version_parts(props.apiVersion)[:2])
    extensions = _device_extensions(proc, handle)
    prop_structs: dict[type, Any] = {}
    feat_structs: dict[type, Any] = {}
    features = abi.VkPhysicalDeviceFeatures()
    if api >= (1, 1):
        prop_structs, head = _chain(PROPERTY_CHAIN, api, extensions)
        props2 = abi.VkPhysicalDeviceProperties2(
            sType=abi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=head
        )
        proc("vkGetPhysicalDeviceProperties2")(handle, ctypes.byref(props2))
        props = props2.properties
        feat_structs, head = _chain(FEATURE_CHAIN, api, extensions)
        features2 = abi.VkPhysicalDeviceFeatures2(
            sType=abi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, pNext=head
        )
        proc("vkGetPhysicalDeviceFeatures2")(handle, ctypes.byref(features2))
        features = features2.features
    else:
        proc("vkGetPhysicalDeviceFeatures")(handle, ctypes.byref(features))
    return _report(index, props, features, prop_structs, feat_structs)


def _report(
    index: int,
    props: abi.VkPhysicalDeviceProperties,
    features: abi.VkPhysicalDeviceFeatures,
    prop_structs: dict[type, Any],
    feat_structs: dict[type, Any],
) -> VulkanDeviceReport:
    limits = props.limits
    ids = prop_structs.get(abi.VkPhysicalDeviceIDProperties)
    driver = prop_structs.get(abi.VkPhysicalDeviceDriverProperties)
    subgroup = prop_structs.get(abi.VkPhysicalDeviceSubgroupProperties)
    size_control = prop_structs.get(abi.VkPhysicalDeviceSubgroupSizeControlProperties)
    f16_i8 = feat_structs.get(abi.VkPhysicalDeviceShaderFloat16Int8Features)
    storage16 = feat_structs.get(abi.VkPhysicalDevice16BitStorageFeatures)
    storage8 = feat_structs.get(abi.VkPhysicalDevice8BitStorageFeatures)
    device_type = props.deviceType
    driver_id = driver.driverID if driver else 0
    name = props.deviceName.decode(errors="replace")
    return VulkanDeviceReport(
        index=index,
        name=name,
        device_type=DEVICE_TYPES[device_type] if 0 <= device_type < 5 else "other",
        vendor_id=props.vendorID,
        vendor=VENDORS.get(props.vendorID, f"0x{props.vendorID:04X}"),
        device_id=props.deviceID,
        device_uuid=bytes(ids.deviceUUID).hex() if ids else "",
        driver_id=driver_id,
        driver_name=driver.driverName.decode(errors="replace") if driver else "",
        driver_info=driver.driverInfo.decode(errors="replace") if driver else "",
        driver_version=driver_version_string(props.vendorID, props.driverVersion),
        api_version="{}.{}.{}".format(*abi.api_version_parts(props.apiVersion)),
        subgroup_size=subgroup.subgroupSize if subgroup else None,
        subgroup_size_range=(
            (size_control.minSubgroupSize, size_control.maxSubgroupSize) if size_control else None
        ),
        max_compute_workgroup_size=tuple(limits.maxComputeWorkGroupSize),
        max_compute_workgroup_count=tuple(limits.maxComputeWorkGroupCount),
        max_compute_workgroup_invocations=limits.maxComputeWorkGroupInvocations,
        max_compute_shared_memory_size=limits.maxComputeSharedMemorySize,
        max_push_constants_size=limits.maxPushConstantsSize,
        shader_float16=bool(f16_i8 and f16_i8.shaderFloat16),
        shader_float64=bool(features.shaderFloat64),
        shader_int8=bool(f16_i8 and f16_i8.shaderInt8),
        shader_int16=bool(features.shaderInt16),
        shader_int64=bool(features.shaderInt64),
        storage_buffer_8bit=bool(storage8 and storage8.storageBuffer8BitAccess),
        storage_buffer_16bit=bool(storage16 and storage16.storageBuffer16BitAccess),
        shader_loop_cap=shader_loop_cap(driver_id, name),
    )


def shader_loop_cap(driver_id: int, device_name: str) -> int | None:
    """The loop iterations a shader invocation may run on this driver before it silently
    stops the shader, or ``None`` where no cap is known. A Vulkan 1.0 device reports no
    driver id: lavapipe is then known by its name."""
    if driver_id == 0 and device_name.startswith("llvmpipe"):
        driver_id = DRIVER_ID_MESA_LLVMPIPE
    return SHADER_LOOP_CAPS.get(driver_id)


def driver_version_string(vendor_id: int, version: int) -> str:
    """A packed driverVersion as its vendor writes it: NVIDIA's 10.8.8.6-bit scheme
    (e.g. 535.104.05), everyone else's VK_MAKE_API_VERSION major.minor.patch."""
    if vendor_id == NVIDIA:
        major, minor = (version >> 22) & 0x3FF, (version >> 14) & 0xFF
        secondary, tertiary = (version >> 6) & 0xFF, version & 0x3F
        text = f"{major}.{minor}.{secondary:02d}"
        return f"{text}.{tertiary}" if tertiary else text
    return "{}.{}.{}".format(*abi.api_version_parts(version))
