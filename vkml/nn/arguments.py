"""The checks of layers' constructor and call arguments, each error naming the layer, the
argument and the remedy."""

from __future__ import annotations

from typing import Any

import numpy as np

from vkml.dtypes import DType, to_dtype
from vkml.errors import DTypeError, ShapeError
from vkml.frontend.record import tensor_node
from vkml.frontend.tensor import Tensor


def float_dtype(layer: str, dtype: Any) -> DType:
    """``dtype`` as a floating-point DType; DTypeError naming ``layer`` otherwise."""
    target = to_dtype(dtype)
    if not target.is_float:
        raise DTypeError(f"{layer}: parameters must be floating-point, got {target}")
    return target


def size(layer: str, name: str, value: Any, positive: bool = False) -> int:
    """A layer's size argument: a non-negative (or positive) integer; ShapeError naming it
    otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ShapeError(f"{layer}: {name}={value!r:.40} is not an integer")
    if value < int(positive):
        need = "positive" if positive else "non-negative"
        raise ShapeError(f"{layer}: {name}={value} must be a {need} integer")
    return int(value)


def check_last_axis(layer: str, x: Tensor, length: int) -> None:
    """``x`` ends with an axis of ``length``; ShapeError naming ``layer`` otherwise."""
    if not tensor_node(layer, x).shape or x.shape[-1] != length:
        raise ShapeError(
            f"{layer}: expected an input whose last axis has {length} elements, got shape {x.shape}"
        )


def check_channels(layer: str, x: Tensor, channels: int, spatial: int) -> None:
    """``x`` is (N, ``channels``, *spatial) with ``spatial`` axes (or, for 1-D layers that
    take it, (N, ``channels``)); ShapeError naming ``layer`` otherwise."""
    shape = tensor_node(layer, x).shape
    if len(shape) != spatial + 2 or shape[1] != channels:
        want = ", ".join(["N", str(channels)] + [f"L{i}" for i in range(spatial)])
        raise ShapeError(f"{layer}: expected an input ({want}), got shape {shape}")
