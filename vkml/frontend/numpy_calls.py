"""The keywords NumPy passes when it calls a tensor's method: ``np.sum(t)`` calls
``t.sum(axis=.., dtype=.., out=..)``. A result is a new tensor, so ``out`` must be None."""

from __future__ import annotations

from typing import Any

from vkml.frontend.elementwise import astype
from vkml.frontend.record import Operand


def numpy_operand(op: str, x: Any, dtype: Any = None, out: Any = None) -> Operand:
    """``x`` for a method NumPy called: in ``dtype`` if given; ``out`` is refused, as a vkml
    tensor never changes."""
    if out is not None:
        raise TypeError(
            f"'{op}': out= is not supported (a vkml tensor never changes); use the tensor "
            f"it returns"
        )
    return x if dtype is None else astype(x, dtype)
