"""The slice of the Vulkan C ABI that ``vkml.runtime.vulkan_loader`` reads, declared with ctypes.

Each struct mirrors ``vulkan_core.h`` (Vulkan-Headers 1.3.239) field for field and in order:
ctypes then inserts the same padding as a C compiler, so offsets match on every ABI. The
``VK_*`` values are the header's enumerants. Nothing here calls Vulkan.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    c_char,
    c_char_p,
    c_float,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)

Field = tuple[str, type]

VK_SUCCESS = 0
VK_INCOMPLETE = 5
VK_ERROR_INCOMPATIBLE_DRIVER = -9
VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR = 0x00000001
PORTABILITY_ENUMERATION = b"VK_KHR_portability_enumeration"

VK_STRUCTURE_TYPE_APPLICATION_INFO = 0
VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO = 1
VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 = 1000059000
VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001

VkBool32 = c_uint32
VkDeviceSize = c_uint64
VkFlags = c_uint32


def _all(ctype: type, names: str) -> list[Field]:
    """Consecutive fields of one type, in the order ``names`` lists them."""
    return [(name, ctype) for name in names.split()]


def make_api_version(major: int, minor: int, patch: int = 0) -> int:
    """``VK_MAKE_API_VERSION(0, major, minor, patch)``."""
    return (major << 22) | (minor << 12) | patch


def api_version_parts(version: int) -> tuple[int, int, int]:
    """(major, minor, patch) of a packed ``VK_MAKE_API_VERSION`` value; the variant is dropped."""
    return (version >> 22) & 0x7F, (version >> 12) & 0x3FF, version & 0xFFF


# fmt: off
# (field lists laid out like the header's, not the formatter's one-argument-per-line)


class VkPhysicalDeviceLimits(ctypes.Structure):
    _fields_ = [
        *_all(c_uint32, """maxImageDimension1D maxImageDimension2D maxImageDimension3D
            maxImageDimensionCube maxImageArrayLayers maxTexelBufferElements
            maxUniformBufferRange maxStorageBufferRange maxPushConstantsSize
            maxMemoryAllocationCount maxSamplerAllocationCount"""),
        *_all(VkDeviceSize, "bufferImageGranularity sparseAddressSpaceSize"),
        *_all(c_uint32, """maxBoundDescriptorSets maxPerStageDescriptorSamplers
            maxPerStageDescriptorUniformBuffers maxPerStageDescriptorStorageBuffers
            maxPerStageDescriptorSampledImages maxPerStageDescriptorStorageImages
            maxPerStageDescriptorInputAttachments maxPerStageResources
            maxDescriptorSetSamplers maxDescriptorSetUniformBuffers
            maxDescriptorSetUniformBuffersDynamic maxDescriptorSetStorageBuffers
            maxDescriptorSetStorageBuffersDynamic maxDescriptorSetSampledImages
            maxDescriptorSetStorageImages maxDescriptorSetInputAttachments
            maxVertexInputAttributes maxVertexInputBindings maxVertexInputAttributeOffset
            maxVertexInputBindingStride maxVertexOutputComponents
            maxTessellationGenerationLevel maxTessellationPatchSize
            maxTessellationControlPerVertexInputComponents
            maxTessellationControlPerVertexOutputComponents
            maxTessellationControlPerPatchOutputComponents
            maxTessellationControlTotalOutputComponents
            maxTessellationEvaluationInputComponents maxTessellationEvaluationOutputComponents
            maxGeometryShaderInvocations maxGeometryInputComponents
            maxGeometryOutputComponents maxGeometryOutputVertices
            maxGeometryTotalOutputComponents maxFragmentInputComponents
            maxFragmentOutputAttachments maxFragmentDualSrcAttachments
            maxFragmentCombinedOutputResources maxComputeSharedMemorySize"""),
        ("maxComputeWorkGroupCount", c_uint32 * 3),
        ("maxComputeWorkGroupInvocations", c_uint32),
        ("maxComputeWorkGroupSize", c_uint32 * 3),
        *_all(c_uint32, """subPixelPrecisionBits subTexelPrecisionBits mipmapPrecisionBits
            maxDrawIndexedIndexValue maxDrawIndirectCount"""),
        *_all(c_float, "maxSamplerLodBias maxSamplerAnisotropy"),
        ("maxViewports", c_uint32),
        ("maxViewportDimensions", c_uint32 * 2),
        ("viewportBoundsRange", c_float * 2),
        ("viewportSubPixelBits", c_uint32),
        ("minMemoryMapAlignment", c_size_t),
        *_all(VkDeviceSize, """minTexelBufferOffsetAlignment minUniformBufferOffsetAlignment
            minStorageBufferOffsetAlignment"""),
        ("minTexelOffset", c_int32),
        ("maxTexelOffset", c_uint32),
        ("minTexelGatherOffset", c_int32),
        ("maxTexelGatherOffset", c_uint32),
        *_all(c_float, "minInterpolationOffset maxInterpolationOffset"),
        *_all(c_uint32, """subPixelInterpolationOffsetBits maxFramebufferWidth
            maxFramebufferHeight maxFramebufferLayers"""),
        *_all(VkFlags, """framebufferColorSampleCounts framebufferDepthSampleCounts
            framebufferStencilSampleCounts framebufferNoAttachmentsSampleCounts"""),
        ("maxColorAttachments", c_uint32),
        *_all(VkFlags, """sampledImageColorSampleCounts sampledImageIntegerSampleCounts
            sampledImageDepthSampleCounts sampledImageStencilSampleCounts
            storageImageSampleCounts"""),
        ("maxSampleMaskWords", c_uint32),
        ("timestampComputeAndGraphics", VkBool32),
        ("timestampPeriod", c_float),
        *_all(c_uint32, """maxClipDistances maxCullDistances maxCombinedClipAndCullDistances
            discreteQueuePriorities"""),
        ("pointSizeRange", c_float * 2),
        ("lineWidthRange", c_float * 2),
        *_all(c_float, "pointSizeGranularity lineWidthGranularity"),
        *_all(VkBool32, "strictLines standardSampleLocations"),
        *_all(VkDeviceSize, """optimalBufferCopyOffsetAlignment
            optimalBufferCopyRowPitchAlignment nonCoherentAtomSize"""),
    ]


class VkPhysicalDeviceSparseProperties(ctypes.Structure):
    _fields_ = _all(VkBool32, """residencyStandard2DBlockShape
        residencyStandard2DMultisampleBlockShape residencyStandard3DBlockShape
        residencyAlignedMipSize residencyNonResidentStrict""")


class VkPhysicalDeviceProperties(ctypes.Structure):
    _fields_ = [
        *_all(c_uint32, "apiVersion driverVersion vendorID deviceID"),
        ("deviceType", c_int32),
        ("deviceName", c_char * 256),  # VK_MAX_PHYSICAL_DEVICE_NAME_SIZE
        ("pipelineCacheUUID", c_uint8 * 16),  # VK_UUID_SIZE
        ("limits", VkPhysicalDeviceLimits),
        ("sparseProperties", VkPhysicalDeviceSparseProperties),
    ]


class VkPhysicalDeviceFeatures(ctypes.Structure):
    _fields_ = _all(VkBool32, """robustBufferAccess fullDrawIndexUint32 imageCubeArray
        independentBlend geometryShader tessellationShader sampleRateShading dualSrcBlend
        logicOp multiDrawIndirect drawIndirectFirstInstance depthClamp depthBiasClamp
        fillModeNonSolid depthBounds wideLines largePoints alphaToOne multiViewport
        samplerAnisotropy textureCompressionETC2 textureCompressionASTC_LDR
        textureCompressionBC occlusionQueryPrecise pipelineStatisticsQuery
        vertexPipelineStoresAndAtomics fragmentStoresAndAtomics
        shaderTessellationAndGeometryPointSize shaderImageGatherExtended
        shaderStorageImageExtendedFormats shaderStorageImageMultisample
        shaderStorageImageReadWithoutFormat shaderStorageImageWriteWithoutFormat
        shaderUniformBufferArrayDynamicIndexing shaderSampledImageArrayDynamicIndexing
        shaderStorageBufferArrayDynamicIndexing shaderStorageImageArrayDynamicIndexing
        shaderClipDistance shaderCullDistance shaderFloat64 shaderInt64 shaderInt16
        shaderResourceResidency shaderResourceMinLod sparseBinding sparseResidencyBuffer
        sparseResidencyImage2D sparseResidencyImage3D sparseResidency2Samples
        sparseResidency4Samples sparseResidency8Samples sparseResidency16Samples
        sparseResidencyAliased variableMultisampleRate inheritedQueries""")


_HEAD: list[Field] = [("sType", c_int32), ("pNext", c_void_p)]


class VkPhysicalDeviceProperties2(ctypes.Structure):
    _fields_ = [*_HEAD, ("properties", VkPhysicalDeviceProperties)]


class VkPhysicalDeviceFeatures2(ctypes.Structure):
    _fields_ = [*_HEAD, ("features", VkPhysicalDeviceFeatures)]


class ChainedStruct(ctypes.Structure):
    """A struct for a ``pNext`` chain: its sType, the core version that has it, or the
    device extension that provides it before then."""

    STYPE: int
    CORE: tuple[int, int]
    EXTENSION: bytes


class VkPhysicalDeviceSubgroupProperties(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000094000, (1, 1), b""
    _fields_ = [*_HEAD, *_all(c_uint32, """subgroupSize supportedStages
        supportedOperations quadOperationsInAllStages""")]


class VkPhysicalDeviceIDProperties(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000071004, (1, 1), b""
    _fields_ = [
        *_HEAD,
        ("deviceUUID", c_uint8 * 16),  # VK_UUID_SIZE
        ("driverUUID", c_uint8 * 16),
        ("deviceLUID", c_uint8 * 8),  # VK_LUID_SIZE
        ("deviceNodeMask", c_uint32),
        ("deviceLUIDValid", VkBool32),
    ]


class VkPhysicalDeviceDriverProperties(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000196000, (1, 2), b"VK_KHR_driver_properties"
    _fields_ = [
        *_HEAD,
        ("driverID", c_int32),
        ("driverName", c_char * 256),  # VK_MAX_DRIVER_NAME_SIZE
        ("driverInfo", c_char * 256),  # VK_MAX_DRIVER_INFO_SIZE
        ("conformanceVersion", c_uint8 * 4),  # VkConformanceVersion: major minor subminor patch
    ]


class VkPhysicalDeviceSubgroupSizeControlProperties(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000225000, (1, 3), b"VK_EXT_subgroup_size_control"
    _fields_ = [*_HEAD, *_all(c_uint32, """minSubgroupSize maxSubgroupSize
        maxComputeWorkgroupSubgroups requiredSubgroupSizeStages""")]


class VkPhysicalDeviceShaderFloat16Int8Features(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000082000, (1, 2), b"VK_KHR_shader_float16_int8"
    _fields_ = [*_HEAD, *_all(VkBool32, "shaderFloat16 shaderInt8")]


class VkPhysicalDevice16BitStorageFeatures(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000083000, (1, 1), b"VK_KHR_16bit_storage"
    _fields_ = [*_HEAD, *_all(VkBool32, """storageBuffer16BitAccess
        uniformAndStorageBuffer16BitAccess storagePushConstant16 storageInputOutput16""")]


class VkPhysicalDevice8BitStorageFeatures(ChainedStruct):
    STYPE, CORE, EXTENSION = 1000177000, (1, 2), b"VK_KHR_8bit_storage"
    _fields_ = [*_HEAD, *_all(VkBool32, """storageBuffer8BitAccess
        uniformAndStorageBuffer8BitAccess storagePushConstant8""")]


class VkExtensionProperties(ctypes.Structure):
    _fields_ = [("extensionName", c_char * 256), ("specVersion", c_uint32)]


class VkApplicationInfo(ctypes.Structure):
    _fields_ = [
        ("sType", c_int32),
        ("pNext", c_void_p),
        ("pApplicationName", c_char_p),
        ("applicationVersion", c_uint32),
        ("pEngineName", c_char_p),
        ("engineVersion", c_uint32),
        ("apiVersion", c_uint32),
    ]


class VkInstanceCreateInfo(ctypes.Structure):
    _fields_ = [
        ("sType", c_int32),
        ("pNext", c_void_p),
        ("flags", VkFlags),
        ("pApplicationInfo", POINTER(VkApplicationInfo)),
        ("enabledLayerCount", c_uint32),
        ("ppEnabledLayerNames", POINTER(c_char_p)),
        ("enabledExtensionCount", c_uint32),
        ("ppEnabledExtensionNames", POINTER(c_char_p)),
    ]


# fmt: on

# Handles (VkInstance, VkPhysicalDevice) are pointers; allocators are always NULL here.
# VKAPI_CALL is the C calling convention on every 64-bit platform.
PROTOTYPES: dict[str, type] = {
    "vkEnumerateInstanceVersion": CFUNCTYPE(c_int32, POINTER(c_uint32)),
    "vkEnumerateInstanceExtensionProperties": CFUNCTYPE(
        c_int32, c_char_p, POINTER(c_uint32), POINTER(VkExtensionProperties)
    ),
    "vkCreateInstance": CFUNCTYPE(
        c_int32, POINTER(VkInstanceCreateInfo), c_void_p, POINTER(c_void_p)
    ),
    "vkDestroyInstance": CFUNCTYPE(None, c_void_p, c_void_p),
    "vkEnumeratePhysicalDevices": CFUNCTYPE(c_int32, c_void_p, POINTER(c_uint32), c_void_p),
    "vkEnumerateDeviceExtensionProperties": CFUNCTYPE(
        c_int32, c_void_p, c_char_p, POINTER(c_uint32), POINTER(VkExtensionProperties)
    ),
    "vkGetPhysicalDeviceProperties": CFUNCTYPE(None, c_void_p, POINTER(VkPhysicalDeviceProperties)),
    "vkGetPhysicalDeviceProperties2": CFUNCTYPE(
        None, c_void_p, POINTER(VkPhysicalDeviceProperties2)
    ),
    "vkGetPhysicalDeviceFeatures": CFUNCTYPE(None, c_void_p, POINTER(VkPhysicalDeviceFeatures)),
    "vkGetPhysicalDeviceFeatures2": CFUNCTYPE(None, c_void_p, POINTER(VkPhysicalDeviceFeatures2)),
}
