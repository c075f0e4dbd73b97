"""Reading a tensor's value on the host: ``numpy()``, ``item()``, ``tolist()``, NumPy's
``__array__`` and Python's number protocols (``bool``, ``float``, ``int``, ``operator.index``,
``round`` and ``format`` of a one-element tensor). Each realizes the tensor first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vkml.devices.realize import realize_nodes
from vkml.errors import ShapeError
from vkml.frontend.base import TensorBase


class HostValues(TensorBase):
    """The methods of ``Tensor`` that hand its value to the host."""

    __slots__ = ()

    def numpy(self, copy: bool = True) -> np.ndarray:
        """The value as a NumPy array, realizing first if needed.

        Args:
            copy: True (default) gives a new, writable array. False gives a read-only array
                over the device's memory where the device allows it (cpu, reference): no
                copy, which saves time and memory on large results.
        """
        node = self._node
        realize_nodes([node])
        return node.device.download(node.storage, node.dtype, copy)

    def item(self) -> bool | int | float:
        """The value of a one-element tensor as a Python scalar."""
        if self.size != 1:
            raise ShapeError(
                f"item() needs a tensor with exactly one element, got shape {self.shape} "
                f"({self.size} elements); index or reduce it first"
            )
        return self.numpy().reshape(()).item()

    def tolist(self) -> Any:
        """The value as (nested) Python lists of Python scalars."""
        return self.numpy().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.numpy(copy=copy is not False)
        return out if dtype is None else out.astype(dtype, copy=copy is not False)

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ShapeError(
                f"the truth value of a tensor with {self.size} elements is ambiguous; reduce "
                f"it first: x.any() is true where any element is, x.all() where all are"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_float or self.dtype.kind == "bool":
            raise TypeError(
                f"a {self.dtype} tensor is not an integer index: indexing a NumPy array with "
                f"a vkml tensor (a mask, or assigning through one) is not supported; index "
                f"it with t.numpy() instead"
            )
        return int(self.item())

    def __round__(self, ndigits: int | None = None) -> int | float:
        """``round`` of a one-element tensor's value, as Python rounds it (``x.round()``
        rounds every element and stays a tensor)."""
        return round(self._one("round()").item(), ndigits)  # type: ignore[call-overload]

    def __format__(self, spec: str) -> str:
        """``format(t, ".2f")`` and f-strings of a one-element tensor's value; the empty
        spec gives ``str(t)``."""
        if not spec:
            return str(self)
        return format(self._one(f"format(..., {spec!r})").item(), spec)

    def _one(self, what: str) -> HostValues:
        if self.size != 1:
            raise TypeError(
                f"{what} takes a one-element tensor, got shape {self.shape}; reduce or index "
                f"it first (x.round() rounds every element)"
            )
        return self
