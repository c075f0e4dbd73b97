"""``Spec``: the shape, dtype and device of a captured function's input, without data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vkml.devices.device import Device
from vkml.dtypes import DType, default_float, from_numpy, to_dtype
from vkml.errors import DataError, UnsupportedOperatorError
from vkml.frontend.host import resolve_device, shape_arg
from vkml.frontend.tensor import Tensor


@dataclass(frozen=True, slots=True)
class Spec:
    """What an input of a captured function is: its shape, dtype and device."""

    shape: tuple[int, ...]
    dtype: DType
    device: Device

    def __str__(self) -> str:
        return f"{self.dtype.name}{list(self.shape)} on {self.device}"


def spec(shape: Any, dtype: Any = None, device: Any = None) -> Spec:
    """An input of ``shape`` and ``dtype`` (default float32) on ``device`` (default
    ``vkml.cpu``), for ``vkml.trace.capture`` where no example data is at hand.

    Raises:
        ShapeError: ``shape`` is not a sequence of non-negative integers.
        DTypeError: ``dtype`` is not a vkml dtype.
        UnsupportedOperatorError: the device cannot hold that dtype.
    """
    dims = shape_arg("spec", shape)
    target = default_float if dtype is None else to_dtype(dtype)
    dev = resolve_device(device)
    if not dev.supports("astype", target):
        raise UnsupportedOperatorError("spec", target.name, dev.name)
    return Spec(dims, target, dev)


def spec_of(name: str, value: Any) -> Spec:
    """The ``Spec`` of an example argument: a ``Spec``, a tensor or a NumPy array or scalar (on cpu).

    Raises:
        DataError: ``value`` is none of those; the message names the parameter.
    """
    if isinstance(value, Spec):
        return value
    if isinstance(value, Tensor):
        return Spec(value.shape, value.dtype, value.device)
    if isinstance(value, (np.ndarray, np.generic)):
        return spec(value.shape, from_numpy(value.dtype))
    raise DataError(
        f"capture: argument {name!r} must be a vkml Tensor, a NumPy array or a vkml.spec "
        f"(shape, dtype), got {type(value).__name__}"
    )
