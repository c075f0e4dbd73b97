"""The exceptions vkml raises.

Every error names the operation, the values involved and, where there is one, the remedy.
Each class also derives from the built-in exception a NumPy or PyTorch user would catch
(``ValueError``, ``TypeError``, ``IndexError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "ArtifactError",
    "AxisError",
    "BuilderError",
    "CacheWarning",
    "CompileError",
    "CompileMemoryError",
    "ConfigError",
    "DTypeError",
    "DataError",
    "DeviceError",
    "DeviceFaultError",
    "DeviceMemoryError",
    "GradientError",
    "IndexingError",
    "InvocationError",
    "ShapeError",
    "TraceError",
    "UnsupportedOperatorError",
    "UntrustedPathError",
    "UntrustedPathWarning",
    "ValueRangeError",
    "VkmlError",
]


class VkmlError(Exception):
    """Base class of every error vkml raises on purpose."""


class ShapeError(VkmlError, ValueError):
    """Shapes that cannot be combined: broadcasting, matmul, reshape, concatenate."""


class AxisError(VkmlError, ValueError, IndexError):
    """An axis outside ``[-ndim, ndim)`` or named twice."""


class IndexingError(VkmlError, IndexError):
    """An index or slice a tensor of this shape cannot take."""


class DTypeError(VkmlError, TypeError):
    """A dtype an operation does not accept, or one vkml does not know."""


class ValueRangeError(DTypeError, OverflowError):
    """A number that the integer dtype it is given as cannot hold: an integer out of range,
    or a NaN or infinity (NumPy and PyTorch raise ``OverflowError``)."""


class DataError(VkmlError, TypeError):
    """Data that cannot become a tensor (strings, ragged lists, objects)."""


class ConfigError(VkmlError, ValueError):
    """An environment variable vkml reads (``VKML_EAGER``, ``VKML_COVERAGE``) holds a value
    vkml cannot use; the message names the variable, its value and the values it takes."""


class DeviceError(VkmlError, ValueError):
    """Operands on different devices, or a device that does not exist."""


class UnsupportedOperatorError(VkmlError, TypeError):
    """A device cannot evaluate an operator for a dtype. vkml never falls back on its own."""

    def __init__(self, op: str, dtype: str, device: str, remedy_device: str = "cpu") -> None:
        self.op, self.dtype, self.device = op, dtype, device
        super().__init__(
            f"'{op}' is not supported for {dtype} on device {device}; vkml does not fall back "
            f"to another device on its own. Move the data explicitly, e.g. "
            f"vkml.tensor(t.numpy(), device=vkml.{remedy_device})"
        )


class GradientError(VkmlError, RuntimeError):
    """A gradient that cannot be formed: no differentiable path, or an op without a rule."""


class TraceError(VkmlError, RuntimeError):
    """A captured function did what capturing cannot record: observed a value while being
    captured, returned something that is not tensors, or a graph needs an input placeholder
    that only a call of the captured function supplies."""


class BuilderError(VkmlError, ValueError):
    """A construct of a graph builder function (``vkml.Graph.builder``) that cannot be
    recorded as written, naming the line and the remedy."""


class ArtifactError(VkmlError, ValueError):
    """An exported module (``vkml.aot``) that cannot be loaded as it is: missing, damaged,
    not a vkml artefact, built by another IREE release or for another target, or with a
    parameter archive that does not fit it."""


class UntrustedPathError(VkmlError, PermissionError):
    """A file vkml would run code from (a compile-cache entry, an exported module), or a
    directory above it, that someone other than you could have written; ``path`` is the one
    at fault. Nothing was loaded from it."""

    def __init__(self, message: str, path: object = None) -> None:
        super().__init__(message)
        self.path = path


class UntrustedPathWarning(UserWarning):
    """A file vkml runs code from belongs to another user (an exported module loaded from a
    shared location): loaded, since you named it, but said."""


class CacheWarning(UserWarning):
    """The compile cache cannot keep what it compiles on disk (a read-only directory, a full
    disk): vkml goes on, compiling into memory only, and says so once per directory."""


class CompileError(VkmlError, RuntimeError):
    """IREE could not compile the module vkml emitted; every node stays unrealized."""


class CompileMemoryError(CompileError):
    """IREE's compiler needed more memory than it may use (``VKML_COMPILE_MEMORY``) for one
    module: a realize splits such a graph into parts and goes on; this error reaches the
    user only where nothing is left to split."""


class InvocationError(VkmlError, RuntimeError):
    """The compiled function failed while running; every node stays unrealized."""


class BindingLimitError(InvocationError):
    """IREE could not load or run a module vkml compiled: one of its dispatches reads or writes
    more buffers than the device binds at once (32 on Vulkan, refused at the load; 64 on cpu,
    refused at the call). Nothing ran; realize computes such a graph in parts instead."""


class DeviceFaultError(InvocationError):
    """A device failed under vkml's work: it was lost, or it faulted mid-invocation.

    Every node of the failed realize stays unrealized. ``device`` is the device's vkml name
    (``"vulkan:0"``), ``status`` the IREE status code that reported the fault (``"INTERNAL"``,
    ``"UNAVAILABLE"``, ``"ABORTED"``, ``"DATA_LOSS"``, ``"RESOURCE_EXHAUSTED"``, ...).
    """

    def __init__(self, message: str, device: str = "", status: str = "") -> None:
        super().__init__(message)
        self.device, self.status = device, status


class DeviceMemoryError(DeviceFaultError, MemoryError):
    """A device could not allocate what an upload or an invocation asked for.

    ``nbytes`` is the size asked for, where vkml knows it. Nothing was computed; a smaller
    request on the same device still works.
    """

    def __init__(
        self, message: str, device: str = "", status: str = "", nbytes: int | None = None
    ) -> None:
        super().__init__(message, device, status)
        self.nbytes = nbytes
