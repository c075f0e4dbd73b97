"""``Destination``: what an exported module is compiled for, a device here or another
machine's GPU named by its IREE Vulkan target (``"vulkan:ampere+f64"``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vkml.compiler.target import TARGET_LOOP_CAPS, Target, vulkan_target
from vkml.devices.iree import IreeDevice
from vkml.devices.registry import cpu
from vkml.dtypes import ALL, DType, float64
from vkml.errors import DeviceError
from vkml.frontend.host import resolve_device
from vkml.ops.registry import OPS

# ``vulkan:<IREE target>`` or ``vulkan:<IREE target>+f64``: a GPU that is not here
_REMOTE = re.compile(r"vulkan:([A-Za-z][\w.-]*?)(\+f64)?")


@dataclass(frozen=True)
class Destination:
    """The IREE ``target``, the ``kind`` of device that runs the module, whether its float
    ops are fenced (Vulkan, ADR 0009) and which ops and dtypes it runs (``supports``)."""

    target: Target
    kind: str
    fences_float_ops: bool
    supports: Callable[[str, DType], bool]
    label: str


def destination(device: Any) -> tuple[IreeDevice, Destination]:
    """The device a module for ``device`` is built on (where its weights live) and what it is
    compiled for: ``vkml.cpu`` (default) or ``vulkan:N`` here, or ``"vulkan:<target>[+f64]"``
    for another machine's GPU (built on cpu; ``+f64`` for a GPU with ``shaderFloat64``).

    Raises:
        DeviceError: ``device`` is the reference device, names no device, or names a Vulkan
            target IREE does not have.
    """
    if isinstance(device, str) and (match := _REMOTE.fullmatch(device)) and not match[1].isdigit():
        target = vulkan_target(
            match[1], float64=bool(match[2]), loop_cap=TARGET_LOOP_CAPS.get(match[1])
        )
        dtypes = frozenset(d for d in ALL if d is not float64 or match[2])

        def runs(op: str, dtype: DType) -> bool:
            found = OPS.get(op)
            return found is not None and found.runs_on("vulkan", dtype) and dtype in dtypes

        return cpu, Destination(target, "vulkan", True, runs, f"the Vulkan target {device[7:]}")
    here = resolve_device(device)
    if not isinstance(here, IreeDevice):
        raise DeviceError(
            f"export: {here} is not a device IREE compiles for (the reference device "
            f"interprets graphs with NumPy); export for vkml.cpu, a vkml.device('vulkan:N') or "
            f"another machine's GPU as 'vulkan:<IREE target>' (e.g. 'vulkan:ampere+f64')"
        )
    return here, Destination(
        here.target, here.kind, here.fences_float_ops, here.supports, str(here)
    )
