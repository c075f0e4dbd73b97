"""The host-memory guard: a request larger than this machine's memory is refused before
anything is compiled or allocated.

Asking IREE or NumPy for 4 TiB fails cleanly only where the kernel refuses it; where memory
is overcommitted the allocation succeeds and filling it brings in the OOM killer. vkml knows
the size of every tensor it must allocate before it asks, so it checks that first.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

from vkml.dtypes import DType
from vkml.errors import DeviceMemoryError
from vkml.runtime.faults import byte_size, tensor_bytes


@functools.cache
def host_memory_bytes() -> int | None:
    """This machine's physical memory in bytes, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def check_fits_memory(
    doing: str, tensors: Sequence[tuple[Sequence[int], DType]], device: str
) -> None:
    """Raise DeviceMemoryError when ``tensors`` (shape, dtype pairs) take more bytes than the
    machine has, on any device: a GPU's own memory is checked by the driver when IREE
    allocates, but a result larger than the host's memory is refused first (a GPU with more
    memory than its host is the one case this refuses what might fit)."""
    limit = host_memory_bytes()
    if limit is None or not tensors:
        return
    nbytes = sum(tensor_bytes(shape, dtype) for shape, dtype in tensors)
    if nbytes <= limit:
        return
    shown = ", ".join(f"{dtype.name} {tuple(shape)}" for shape, dtype in tensors[:3])
    more = f" and {len(tensors) - 3} more" if len(tensors) > 3 else ""
    raise DeviceMemoryError(
        f"{doing} on {device} needs {byte_size(nbytes)} for {shown}{more}, more than this "
        f"machine's memory ({byte_size(limit)}); nothing was compiled or allocated. Use a "
        f"smaller shape, or reduce the data first (e.g. with .sum())",
        device,
        "RESOURCE_EXHAUSTED",
        nbytes,
    )
