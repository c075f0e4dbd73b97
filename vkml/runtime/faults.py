"""IREE's runtime failures as vkml errors that name the device, what was asked and the remedy.

IREE raises a ``RuntimeError`` whose text carries a status code, e.g. ``could not allocate
buffer: c/runtime/src/iree/base/allocator_libc.c:57: RESOURCE_EXHAUSTED; libc allocator failed
the request``. The code decides the class:

- ``RESOURCE_EXHAUSTED``: the device is out of memory (or refuses an allocation that large):
  ``DeviceMemoryError``.
- a lost device (Vulkan's ``VK_ERROR_DEVICE_LOST``, which IREE reports as ``INTERNAL``), and
  the codes of a device or driver that failed under the work (``INTERNAL``, ``UNAVAILABLE``,
  ``ABORTED``, ``DATA_LOSS``, ``DEADLINE_EXCEEDED``): ``DeviceFaultError``.
- a dispatch that binds more buffers than the HAL allows, refused before anything ran
  (cpu refuses the call: "dispatch requiring 70 bindings exceeds limit of 64", with the code
  ``RESOURCE_EXHAUSTED``): ``BindingLimitError``, which realize answers by computing the graph
  in parts.
- anything else (``INVALID_ARGUMENT``, ...) is a module vkml built wrongly: ``InvocationError``.

The original IREE text stays in the message, and the IREE exception is the ``__cause__``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vkml.dtypes import DType
from vkml.errors import BindingLimitError, DeviceFaultError, DeviceMemoryError, InvocationError

# IREE's status codes as iree_status_code_string() spells them, each followed by "; ".
_STATUS = re.compile(
    r"\b(CANCELLED|UNKNOWN|INVALID_ARGUMENT|DEADLINE_EXCEEDED|NOT_FOUND|ALREADY_EXISTS|"
    r"PERMISSION_DENIED|RESOURCE_EXHAUSTED|FAILED_PRECONDITION|ABORTED|OUT_OF_RANGE|"
    r"UNIMPLEMENTED|INTERNAL|UNAVAILABLE|DATA_LOSS|UNAUTHENTICATED|DEFERRED|INCOMPATIBLE);"
)
_LOST = re.compile(r"DEVICE_LOST|device (?:was |is |has been )?lost", re.IGNORECASE)
# IREE 3.13's refusals of a dispatch that binds too many buffers: "binding count 48 > 32" and
# "declares 42 storage buffers, exceeding device limit 32" when a module loads (cpu, Vulkan),
# "dispatch requiring 70 bindings exceeds limit of 64" when cpu's local-task records a call.
BINDING_LIMIT = re.compile(
    r"binding count \d+ > \d+|storage buffers, exceeding device limit"
    r"|requiring \d+ bindings exceeds limit"
)
FAULT_STATUSES = frozenset({"INTERNAL", "UNAVAILABLE", "ABORTED", "DATA_LOSS", "DEADLINE_EXCEEDED"})

_MEMORY_REMEDY = (
    "Use a smaller batch or shape, drop references to tensors you no longer need, or run on a "
    "device with more memory (`vkml devices` lists them)."
)
_LOST_REMEDY = (
    "IREE does not bring a lost device back within a process, and the contents of tensors "
    "already on {device} are undefined: read out what you need from other devices, then "
    "restart the process or move the work to another device (`vkml devices` lists them)."
)
_FAULT_REMEDY = (
    "Realize again to retry; if it fails again, move the work to another device, e.g. "
    "vkml.tensor(t.numpy(), device=vkml.cpu)."
)


def iree_status(exc: BaseException) -> str | None:
    """The IREE status code in an IREE exception's text (``"RESOURCE_EXHAUSTED"``), if any."""
    found = _STATUS.search(str(exc))
    return found.group(1) if found else None


def iree_text(exc: BaseException) -> str:
    """IREE's message on one line (its VM stack trace comes after a newline)."""
    return " ".join(str(exc).split()).rstrip(" -")


def device_label(device: str, physical: str = "") -> str:
    """How messages name a device: ``vulkan:0 (llvmpipe (LLVM 15.0.7, 256 bits))``."""
    return f"{device} ({physical})" if physical else device


def byte_size(nbytes: int) -> str:
    """``nbytes`` for a person: ``1.00 TiB (1099511627776 bytes)``, ``60 bytes``."""
    size, unit = float(nbytes), "bytes"
    for name in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024:
            break
        size, unit = size / 1024, name
    return f"{nbytes} bytes" if unit == "bytes" else f"{size:.2f} {unit} ({nbytes} bytes)"


def tensor_bytes(shape: Sequence[int], dtype: DType) -> int:
    """The bytes a dense tensor of ``shape`` and ``dtype`` takes (Python ints: no overflow)."""
    count = 1
    for dim in shape:
        count *= int(dim)
    return count * dtype.itemsize


def allocation_error(
    exc: Exception, device: str, physical: str, shape: Sequence[int], dtype: DType
) -> InvocationError:
    """The vkml error for IREE refusing a buffer of ``shape`` and ``dtype`` on ``device``."""
    nbytes = tensor_bytes(shape, dtype)
    asked = f"{byte_size(nbytes)} for a {dtype.name} tensor of shape {tuple(shape)}"
    label = device_label(device, physical)
    return _device_error(
        exc, device, label, f"allocating {asked}", "Nothing was computed or bound.",
        out_of_memory=(f"{label} could not allocate {asked}", nbytes),
    )  # fmt: skip


def invocation_error(
    exc: Exception,
    device: str,
    physical: str,
    entry: str,
    results: Sequence[tuple[Sequence[int], DType]],
    queued: bool = False,
) -> InvocationError:
    """The vkml error for IREE failing an invocation of ``entry`` on ``device``.

    ``results`` (each result's shape and dtype) lets an out-of-memory message say what the
    invocation had to allocate. ``queued``: the call failed on the device after realize had
    returned (a queued call), so its results are lost rather than left unrealized.
    """
    label = device_label(device, physical)
    if BINDING_LIMIT.search(str(exc)):
        return BindingLimitError(
            f"IREE refused to run a module vkml compiled on {label}: {exc}. Nothing ran"
        )
    nbytes: int | None = None
    head = f"{label} ran out of memory while running '{entry}'"
    if results:
        nbytes = sum(tensor_bytes(shape, dtype) for shape, dtype in results)
        shown = ", ".join(f"{dtype.name} {tuple(shape)}" for shape, dtype in results[:3])
        more = f" and {len(results) - 3} more" if len(results) > 3 else ""
        head += f", whose results take {byte_size(nbytes)}: {shown}{more}"
    return _device_error(
        exc, device, label, f"running '{entry}'", _LOST_RESULTS if queued else _UNREALIZED,
        out_of_memory=(head, nbytes),
    )  # fmt: skip


_UNREALIZED = "Every tensor of this realize stays unrealized."
_LOST_RESULTS = (
    "The call had been queued by an earlier realize, whose results it was computing: they "
    "have no value, and reading them raises this error again."
)


def mapping_error(exc: Exception, device: str, physical: str, doing: str) -> InvocationError:
    """The vkml error for IREE failing to map a buffer while ``doing`` (``"reading ..."``)."""
    label = device_label(device, physical)
    return _device_error(
        exc, device, label, doing, "Nothing was read or written.",
        out_of_memory=(f"{label} ran out of memory while {doing}", None),
    )  # fmt: skip


def _device_error(
    exc: Exception,
    device: str,
    label: str,
    doing: str,
    state: str,
    out_of_memory: tuple[str, int | None],
) -> InvocationError:
    status = iree_status(exc) or "UNKNOWN"
    said = f"(IREE: {iree_text(exc)})"
    if status == "RESOURCE_EXHAUSTED":
        head, nbytes = out_of_memory
        return DeviceMemoryError(f"{head}. {state} {_MEMORY_REMEDY} {said}", device, status, nbytes)
    if _LOST.search(str(exc)):
        return DeviceFaultError(
            f"{label} was lost while {doing}. {state} {_LOST_REMEDY.format(device=device)} {said}",
            device, status,
        )  # fmt: skip
    if status in FAULT_STATUSES:
        return DeviceFaultError(
            f"{label} failed while {doing} (IREE status {status}). {state} {_FAULT_REMEDY} {said}",
            device, status,
        )  # fmt: skip
    # any other status is a module or an argument vkml got wrong: not the device's fault
    return InvocationError(f"{label} failed while {doing}. {state} {said}")
