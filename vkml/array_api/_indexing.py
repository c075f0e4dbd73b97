"""The Array API's indexing functions: ``take`` and ``take_along_axis`` (vkml's gathers,
with out-of-range indices clamped as docs/contracts.md says)."""

from __future__ import annotations

from vkml.errors import AxisError
from vkml.frontend import functions
from vkml.frontend.tensor import Tensor


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    """The elements of ``x`` at the 1-d ``indices`` along ``axis`` (optional for a 1-d ``x``)."""
    if axis is None and x.ndim != 1:
        raise AxisError(
            f"'take' of a {x.ndim}-d array needs axis=; pass one, or x.reshape(-1) to take "
            f"from the flattened array"
        )
    return functions.take(x, indices, axis=axis)


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """``x`` gathered along ``axis`` at ``indices`` (of ``x``'s rank; other axes broadcast)."""
    return functions.take_along_axis(x, indices, axis)
