"""The Array API's sorting functions: ``sort`` and ``argsort`` (vkml's bitonic argsort,
docs/contracts.md). Every vkml sort is stable, so ``stable=False`` gets a stable sort too,
which the standard allows."""

from __future__ import annotations

from vkml.errors import DTypeError
from vkml.frontend import functions
from vkml.frontend.tensor import Tensor


def _stable(op: str, stable: object) -> None:
    if not isinstance(stable, bool):
        raise DTypeError(f"'{op}': stable={stable!r} is not a bool; pass True or False")


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """``x`` sorted along ``axis``; NaN after +inf (first when ``descending``)."""
    _stable("sort", stable)
    return functions.sort(x, axis, descending)


def argsort(
    x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> Tensor:
    """The int64 positions along ``axis`` that sort ``x`` (equal elements keep their order)."""
    _stable("argsort", stable)
    return functions.argsort(x, axis, descending)
