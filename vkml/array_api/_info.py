"""``__array_namespace_info__``: what vkml's namespace offers, device by device."""

from __future__ import annotations

from typing import Any

from vkml.array_api._dtypes import isdtype
from vkml.devices.registry import cpu, device as resolve_device, reference, vulkan_reports
from vkml.dtypes import (
    DType,
    bool_,
    default_float,
    default_int,
    float32,
    float64,
    int32,
    int64,
    uint32,
)

_STANDARD = {d.name: d for d in (bool_, int32, int64, uint32, float32, float64)}


class Info:
    """The inspection object ``__array_namespace_info__()`` returns."""

    def capabilities(self) -> dict[str, Any]:
        # boolean masks and nonzero have shapes that depend on data: vkml's graphs do not
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": None}

    def default_device(self) -> Any:
        return cpu

    def devices(self) -> list[Any]:
        """cpu, reference and every Vulkan device the loader reports (vulkan:0, ...)."""
        vulkan = [resolve_device(f"vulkan:{i}") for i in range(len(vulkan_reports()))]
        return [cpu, reference, *vulkan]

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType]:
        return {"real floating": default_float, "integral": default_int, "indexing": default_int}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, DType]:
        has = resolve_device(device).dtypes if device is not None else None
        return {
            name: d
            for name, d in _STANDARD.items()
            if (has is None or d in has) and (kind is None or isdtype(d, kind))
        }


def __array_namespace_info__() -> Info:
    """An object describing the namespace: capabilities, devices and dtypes."""
    return Info()
