"""Raw Vulkan through ctypes for scripts/gpu/vk_floor.py: structures, entry points, SPIR-V.

Only what vk_floor.py measures with, laid out as the Vulkan 1.2 headers lay it out on a
64-bit host, where every handle, dispatchable or not, is 8 bytes. Entry points come from
vkGetInstanceProcAddr and vkGetDeviceProcAddr, so device calls go straight to the driver
rather than through the loader's trampolines, as IREE's HAL loads them. An entry point that
returns a VkResult raises VulkanError, naming the call and the code, on anything but
VK_SUCCESS: a timeout or an incomplete answer is a failure here too.

``add_spirv()`` writes the one shader, out[i] = a[i] + b[i], as SPIR-V words, because the GPU
machine has the Vulkan loader but no shader compiler. Standard library only, no NumPy.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable
from typing import Any, ClassVar


def table(text: str) -> list[list[str]]:
    """This file's compact tables: whitespace-separated items, each of ":"-separated parts."""
    return [item.split(":") for item in text.split()]


# VkResult names, for messages
RESULTS = {
    int(code): name
    for code, name in table("""2:TIMEOUT 5:INCOMPLETE -1:ERROR_OUT_OF_HOST_MEMORY
    -2:ERROR_OUT_OF_DEVICE_MEMORY -3:ERROR_INITIALIZATION_FAILED -4:ERROR_DEVICE_LOST
    -7:ERROR_EXTENSION_NOT_PRESENT -9:ERROR_INCOMPATIBLE_DRIVER -13:ERROR_UNKNOWN""")
}


class VulkanError(RuntimeError):
    """A Vulkan call failed; the message names the call and its VkResult."""

    def __init__(self, call: str, result: int) -> None:
        name = f"VK_{RESULTS[result]}" if result in RESULTS else "VkResult"
        super().__init__(f"{call} failed: {name} ({result})")
        self.call, self.result = call, result


class VulkanUnavailable(RuntimeError):
    """No Vulkan here at all: no loader, no driver or no physical device."""


# One letter per C type, for structure fields and entry-point parameters alike: i a 32-bit
# integer, enum, flags or VkBool32; q a 64-bit size, offset, value or timeout; p a handle or a
# pointer (given as an int address); s a NUL-terminated string.
CODES: dict[str, Any] = {
    "i": ctypes.c_uint32,
    "q": ctypes.c_uint64,
    "p": ctypes.c_void_p,
    "s": ctypes.c_char_p,
}


class Struct(ctypes.Structure):
    """A Vulkan structure; one with an STYPE starts with sType (set here) and pNext."""

    STYPE: ClassVar[int | None] = None

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        if self.STYPE is not None:
            self.sType = self.STYPE


def struct_type(stype: int | None, spec: str, *nested: tuple[str, Any]) -> type[Struct]:
    """A Struct from "field:code ..." (see CODES), then the `nested` fields; with an sType
    value, sType and pNext come first. Field names are the headers', shortened where long."""
    head = "sType:i pNext:p " if stype is not None else ""
    fields = [(f, CODES[c]) for f, c in table(head + spec)]
    return type("Struct", (Struct,), {"_fields_": fields + list(nested), "STYPE": stype})


S = struct_type  # the table below reads better short
ApplicationInfo = S(0, "pAppName:s appVersion:i pEngine:s engineVersion:i apiVersion:i")
InstanceCreateInfo = S(1, "flags:i pAppInfo:p layers:i pLayers:p exts:i pExts:p")
QueueCreateInfo = S(2, "flags:i family:i count:i pPriorities:p")
DeviceCreateInfo = S(3, "flags:i queues:i pQueues:p layers:i pLayers:p exts:i pExts:p pFeat:p")
SubmitInfo = S(4, "waits:i pWaits:p pWaitStages:p cmds:i pCmds:p signals:i pSignals:p")
MemoryAllocateInfo = S(5, "size:q memoryTypeIndex:i")
FenceCreateInfo = S(8, "flags:i")
SemaphoreCreateInfo = S(9, "flags:i")
BufferCreateInfo = S(12, "flags:i size:q usage:i sharing:i families:i pFamilies:p")
ShaderModuleCreateInfo = S(16, "flags:i codeSize:q pCode:p")
StageCreateInfo = S(18, "flags:i stage:i module:p pName:s pSpecialization:p")
ComputePipelineCreateInfo = S(
    29,
    "flags:i",
    ("stage", StageCreateInfo),
    ("layout", ctypes.c_void_p),
    ("basePipeline", ctypes.c_void_p),
    ("basePipelineIndex", ctypes.c_int32),
)
PipelineLayoutCreateInfo = S(30, "flags:i sets:i pSetLayouts:p ranges:i pRanges:p")
SetLayoutCreateInfo = S(32, "flags:i bindings:i pBindings:p")
DescriptorPoolCreateInfo = S(33, "flags:i maxSets:i sizes:i pSizes:p")
SetAllocateInfo = S(34, "pool:p count:i pSetLayouts:p")
WriteDescriptorSet = S(35, "set:p binding:i element:i count:i type:i pImage:p pBuffer:p pView:p")
CommandPoolCreateInfo = S(39, "flags:i family:i")
CommandBufferAllocateInfo = S(40, "pool:p level:i count:i")
CommandBufferBeginInfo = S(42, "flags:i pInheritance:p")
MemoryBarrier = S(46, "srcAccess:i dstAccess:i")
Features2 = S(1000059000, "", ("features", ctypes.c_uint32 * 55))
TimelineFeatures = S(1000207000, "timelineSemaphore:i")
SemaphoreTypeCreateInfo = S(1000207002, "type:i initialValue:q")
TimelineSubmitInfo = S(1000207003, "waits:i pWaitValues:p signals:i pSignalValues:p")
SemaphoreWaitInfo = S(1000207004, "flags:i count:i pSemaphores:p pValues:p")
SetLayoutBinding = S(None, "binding:i type:i count:i stages:i pSamplers:p")
PushConstantRange = S(None, "stages:i offset:i size:i")
PoolSize = S(None, "type:i count:i")
BufferInfo = S(None, "buffer:p offset:q range:q")
BufferCopy = S(None, "src:q dst:q size:q")
MemoryRequirements = S(None, "size:q alignment:q typeBits:i")
QueueFamilyProperties = S(None, "flags:i count:i timestampBits:i width:i height:i depth:i")
MemoryType = S(None, "flags:i heap:i")
MemoryHeap = S(None, "size:q flags:i")
MemoryProperties = S(
    None,
    "typeCount:i",
    ("types", MemoryType * 32),
    ("heapCount", ctypes.c_uint32),
    ("heaps", MemoryHeap * 16),
)
PhysicalDeviceProperties = S(
    None,
    "apiVersion:i driverVersion:i vendorID:i deviceID:i deviceType:i",
    ("deviceName", ctypes.c_char * 256),
    ("uuid", ctypes.c_uint8 * 16),
    # limits and sparse properties, unread: 528 bytes in the real layout, 1 KiB is ample
    ("rest", ctypes.c_uint8 * 1024),
)


def signatures(text: str) -> dict[str, str]:
    """name -> "R ARGS" from "name:R:ARGS ...": R is r (returns a VkResult, checked) or v
    (void), ARGS one CODES letter per parameter."""
    return {name: f"{r} {args}" for name, r, args in table(text)}


INSTANCE_FUNCTIONS = signatures("""
    vkCreateInstance:r:ppp  vkDestroyInstance:v:pp
    vkEnumeratePhysicalDevices:r:ppp  vkGetPhysicalDeviceProperties:v:pp
    vkGetPhysicalDeviceQueueFamilyProperties:v:ppp  vkGetPhysicalDeviceMemoryProperties:v:pp
    vkGetPhysicalDeviceFeatures2:v:pp  vkCreateDevice:r:pppp
""")
DEVICE_FUNCTIONS = signatures("""
    vkDestroyDevice:v:pp  vkGetDeviceQueue:v:piip  vkDeviceWaitIdle:r:p  vkMapMemory:r:ppqqip
    vkAllocateMemory:r:pppp  vkFreeMemory:v:ppp  vkGetBufferMemoryRequirements:v:ppp
    vkBindBufferMemory:r:pppq  vkAllocateDescriptorSets:r:ppp  vkUpdateDescriptorSets:v:pipip
    vkCreateComputePipelines:r:ppippp  vkAllocateCommandBuffers:r:ppp
    vkBeginCommandBuffer:r:pp  vkEndCommandBuffer:r:p  vkCmdBindPipeline:v:pip
    vkCmdBindDescriptorSets:v:pipiipip  vkCmdPushConstants:v:ppiiip  vkCmdDispatch:v:piii
    vkCmdPipelineBarrier:v:piiiipipip  vkCmdFillBuffer:v:ppqqi  vkCmdCopyBuffer:v:pppip
    vkQueueSubmit:r:pipp  vkWaitForFences:r:pipiq  vkResetFences:r:pip  vkWaitSemaphores:r:ppq
    vkCreateBuffer:r:pppp  vkCreateShaderModule:r:pppp  vkCreateDescriptorSetLayout:r:pppp
    vkCreatePipelineLayout:r:pppp  vkCreateDescriptorPool:r:pppp  vkCreateCommandPool:r:pppp
    vkCreateFence:r:pppp  vkCreateSemaphore:r:pppp  vkDestroyBuffer:v:ppp
    vkDestroyShaderModule:v:ppp  vkDestroyDescriptorSetLayout:v:ppp  vkDestroyPipeline:v:ppp
    vkDestroyPipelineLayout:v:ppp  vkDestroyDescriptorPool:v:ppp  vkDestroyCommandPool:v:ppp
    vkDestroyFence:v:ppp  vkDestroySemaphore:v:ppp
""")


# Enumerants and flag bits, named as in vulkan_core.h less VK_ and _BIT
DEVICE_TYPES = ("other", "integrated", "discrete", "virtual", "cpu")  # VkPhysicalDeviceType
PREFERENCE = ("discrete", "integrated", "virtual", "cpu", "other")  # which to measure, best first
API_VERSION_1_2 = 1 << 22 | 2 << 12
QUEUE_COMPUTE = 0x2
USAGE_TRANSFER_SRC, USAGE_TRANSFER_DST, USAGE_STORAGE_BUFFER = 0x1, 0x2, 0x20
DEVICE_LOCAL, HOST_VISIBLE, HOST_COHERENT = 0x1, 0x2, 0x4
STAGE_COMPUTE_SHADER, STAGE_TRANSFER, STAGE_HOST = 0x800, 0x1000, 0x4000
SHADER_READ, SHADER_WRITE, TRANSFER_READ, TRANSFER_WRITE, HOST_READ = 32, 64, 2048, 4096, 8192
DESCRIPTOR_STORAGE_BUFFER, SHADER_STAGE_COMPUTE, BIND_POINT_COMPUTE = 7, 0x20, 1
SEMAPHORE_TYPE_TIMELINE = 1
WHOLE_SIZE = (1 << 64) - 1


def api_version(v: int) -> str:
    return f"{v >> 22 & 0x7F}.{v >> 12 & 0x3FF}.{v & 0xFFF}"


def driver_version(vendor: int, v: int) -> str:
    if vendor == 0x10DE:  # NVIDIA packs 10.8.8.6 bits, not VK_MAKE_API_VERSION's 7.10.12
        return f"{v >> 22}.{v >> 14 & 0xFF}.{v >> 6 & 0xFF}.{v & 0x3F}"
    return api_version(v)


def enumerate_all(fn: Callable[..., Any], ctype: Any, *args: Any) -> list[Any]:
    """The two-call enumeration of fn(*args, count, array): the count, then the array."""
    count = ctypes.c_uint32()
    fn(*args, ctypes.byref(count), None)
    array = (ctype * count.value)()
    fn(*args, ctypes.byref(count), array)
    return list(array[: count.value])


def out(fn: Callable[..., Any], *args: Any) -> int:
    """The handle fn(*args, &handle) writes, the shape of every vkCreate and vkAllocate."""
    handle = ctypes.c_void_p()
    fn(*args, ctypes.byref(handle))
    return handle.value or 0


def physical_devices(ivk: Functions, instance: int) -> list[tuple[int, int, dict[str, Any]]]:
    """Each physical device's handle, Vulkan version and description."""
    found = []
    for handle in enumerate_all(ivk.vkEnumeratePhysicalDevices, ctypes.c_void_p, instance):
        p = PhysicalDeviceProperties()
        ivk.vkGetPhysicalDeviceProperties(handle, ctypes.byref(p))
        info = {
            "name": p.deviceName.decode(),
            "type": DEVICE_TYPES[p.deviceType] if p.deviceType < len(DEVICE_TYPES) else "other",
            "vendor_id": f"0x{p.vendorID:04x}",
            "device_id": f"0x{p.deviceID:04x}",
            "driver_version": driver_version(p.vendorID, p.driverVersion),
            "api_version": api_version(p.apiVersion),
        }
        found.append((handle, p.apiVersion, info))
    return found


def memory_type(memory: Any, type_bits: int, flags: int) -> int:
    """The first of MemoryProperties' types that type_bits allows and that has every flag."""
    types = memory.types[: memory.typeCount]
    return next(i for i, t in enumerate(types) if type_bits >> i & 1 and t.flags & flags == flags)


def _check(name: str) -> Callable[[int, Any, Any], int]:
    def errcheck(result: int, func: Any, args: Any) -> int:
        if result != 0:
            raise VulkanError(name, result)
        return result

    return errcheck


ProcAddr = Callable[[int | None, bytes], int | None]  # vkGetInstanceProcAddr's shape


class Functions:
    """Entry points as attributes, looked up by `get_proc(name)` on first use, then cached."""

    def __init__(self, get_proc: Callable[[bytes], int | None], known: dict[str, str]) -> None:
        self._get_proc, self._table = get_proc, known

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name not in self._table:
            raise AttributeError(name)
        address = self._get_proc(name.encode())
        if not address:
            raise RuntimeError(f"{name}: the Vulkan driver does not provide it")
        ret, args = self._table[name].split(" ")
        restype = ctypes.c_int32 if ret == "r" else None
        fn = ctypes.CFUNCTYPE(restype, *(CODES[c] for c in args))(address)
        if ret == "r":
            fn.errcheck = _check(name)  # type: ignore[assignment]
        setattr(self, name, fn)  # later lookups skip __getattr__
        return fn


def load_loader() -> ProcAddr:
    """vkGetInstanceProcAddr of libvulkan.so.1."""
    try:
        lib = ctypes.CDLL("libvulkan.so.1")
    except OSError as exc:
        raise VulkanUnavailable(f"no Vulkan loader (libvulkan.so.1): {exc}") from exc
    gipa = lib.vkGetInstanceProcAddr
    gipa.restype, gipa.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
    return gipa  # type: ignore[no-any-return]


def instance_functions(gipa: ProcAddr, instance: int | None) -> Functions:
    return Functions(lambda name: gipa(instance, name), INSTANCE_FUNCTIONS)


def device_functions(gipa: ProcAddr, instance: int, device: int) -> Functions:
    address = gipa(instance, b"vkGetDeviceProcAddr")
    if not address:
        raise RuntimeError("the Vulkan loader has no vkGetDeviceProcAddr")
    gdpa = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(address)
    return Functions(lambda name: gdpa(device, name), DEVICE_FUNCTIONS)


class Op:
    """The SPIR-V opcodes add_spirv uses (SPIR-V specification, section 3.49)."""

    Capability, MemoryModel, EntryPoint, ExecutionMode = 17, 14, 15, 16
    Decorate, MemberDecorate = 71, 72
    TypeVoid, TypeBool, TypeInt, TypeFloat, TypeVector = 19, 20, 21, 22, 23
    TypeRuntimeArray, TypeStruct, TypePointer, TypeFunction = 29, 30, 32, 33
    Constant, Variable, Function, FunctionEnd, Label = 43, 59, 54, 56, 248
    Load, Store, AccessChain, CompositeExtract = 61, 62, 65, 81
    FAdd, ULessThan = 129, 176
    SelectionMerge, Branch, BranchConditional, Return = 247, 249, 250, 253


# Enumerants, by the specification's names: decorations, built-ins, storage classes
BLOCK, ARRAY_STRIDE, BUILTIN, BINDING, DESCRIPTOR_SET, OFFSET = 2, 6, 11, 33, 34, 35
GLOBAL_INVOCATION_ID = 28
INPUT, PUSH_CONSTANT, STORAGE_BUFFER = 1, 9, 12
LOCAL_SIZE_X = 64


class SpirvModule:
    """SPIR-V words, written in the order the specification requires. An operand "%name" is
    an id, numbered on first mention, so the entry point can name main before it is defined;
    another str is a literal string, an int a literal number."""

    def __init__(self) -> None:
        self.words: list[int] = []
        self.ids: dict[str, int] = {}

    def op(self, opcode: int, *operands: int | str) -> None:
        body: list[int] = []
        for x in operands:
            if isinstance(x, int):
                body.append(x)
            elif x.startswith("%"):
                body.append(self.ids.setdefault(x, len(self.ids) + 1))
            else:  # UTF-8, NUL-terminated, zero-padded to whole words
                data = x.encode() + b"\0" * (4 - len(x.encode()) % 4)
                body += struct.unpack(f"<{len(data) // 4}I", data)
        self.words += [(len(body) + 1) << 16 | opcode, *body]

    def binary(self) -> bytes:
        # magic, version 1.3 (StorageBuffer storage class is core from 1.3), generator 0,
        # id bound, reserved
        header = [0x07230203, 0x00010300, 0, len(self.ids) + 1, 0]
        return struct.pack(f"<{len(header) + len(self.words)}I", *header, *self.words)


def add_spirv() -> bytes:
    """The compute shader: out[i] = a[i] + b[i] for i < n, with a, b, out at bindings 0, 1, 2
    of set 0 and n a uint push constant; local size LOCAL_SIZE_X. In GLSL it would read:
    ``if (gl_GlobalInvocationID.x < n) out_[i] = a[i] + b[i];``"""
    m = SpirvModule()
    m.op(Op.Capability, 1)  # Shader
    m.op(Op.MemoryModel, 0, 1)  # Logical, GLSL450
    m.op(Op.EntryPoint, 5, "%main", "main", "%gid")  # GLCompute; before 1.4 only Input listed
    m.op(Op.ExecutionMode, "%main", 17, LOCAL_SIZE_X, 1, 1)  # LocalSize
    m.op(Op.Decorate, "%gid", BUILTIN, GLOBAL_INVOCATION_ID)
    m.op(Op.Decorate, "%floats", ARRAY_STRIDE, 4)
    for block in ("%buf", "%params"):
        m.op(Op.Decorate, block, BLOCK)
        m.op(Op.MemberDecorate, block, 0, OFFSET, 0)
    for binding, var in enumerate(("%a", "%b", "%out")):
        m.op(Op.Decorate, var, DESCRIPTOR_SET, 0)
        m.op(Op.Decorate, var, BINDING, binding)
    m.op(Op.TypeVoid, "%void")
    m.op(Op.TypeFunction, "%fn", "%void")
    m.op(Op.TypeBool, "%bool")
    m.op(Op.TypeInt, "%u32", 32, 0)
    m.op(Op.TypeFloat, "%f32", 32)
    m.op(Op.TypeVector, "%uvec3", "%u32", 3)
    m.op(Op.Constant, "%u32", "%zero", 0)
    m.op(Op.TypeRuntimeArray, "%floats", "%f32")
    m.op(Op.TypeStruct, "%buf", "%floats")
    m.op(Op.TypeStruct, "%params", "%u32")
    m.op(Op.TypePointer, "%buf_ptr", STORAGE_BUFFER, "%buf")
    m.op(Op.TypePointer, "%f32_ptr", STORAGE_BUFFER, "%f32")
    m.op(Op.TypePointer, "%params_ptr", PUSH_CONSTANT, "%params")
    m.op(Op.TypePointer, "%u32_pc_ptr", PUSH_CONSTANT, "%u32")
    m.op(Op.TypePointer, "%uvec3_in_ptr", INPUT, "%uvec3")
    for var in ("%a", "%b", "%out"):
        m.op(Op.Variable, "%buf_ptr", var, STORAGE_BUFFER)
    m.op(Op.Variable, "%params_ptr", "%pc", PUSH_CONSTANT)
    m.op(Op.Variable, "%uvec3_in_ptr", "%gid", INPUT)
    m.op(Op.Function, "%void", "%main", 0, "%fn")
    m.op(Op.Label, "%entry")
    m.op(Op.Load, "%uvec3", "%gid_v", "%gid")
    m.op(Op.CompositeExtract, "%u32", "%i", "%gid_v", 0)
    m.op(Op.AccessChain, "%u32_pc_ptr", "%n_ptr", "%pc", "%zero")
    m.op(Op.Load, "%u32", "%n", "%n_ptr")
    m.op(Op.ULessThan, "%bool", "%in_range", "%i", "%n")
    m.op(Op.SelectionMerge, "%done", 0)
    m.op(Op.BranchConditional, "%in_range", "%body", "%done")
    m.op(Op.Label, "%body")
    for var in ("%a", "%b"):
        m.op(Op.AccessChain, "%f32_ptr", f"{var}_ptr", var, "%zero", "%i")
        m.op(Op.Load, "%f32", f"{var}_i", f"{var}_ptr")
    m.op(Op.FAdd, "%f32", "%sum", "%a_i", "%b_i")
    m.op(Op.AccessChain, "%f32_ptr", "%out_ptr", "%out", "%zero", "%i")
    m.op(Op.Store, "%out_ptr", "%sum")
    m.op(Op.Branch, "%done")
    m.op(Op.Label, "%done")
    m.op(Op.Return)
    m.op(Op.FunctionEnd)
    return m.binary()
