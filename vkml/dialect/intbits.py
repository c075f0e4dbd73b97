"""Integer helpers for the recipes that compute on float bits (``soft_narrow``,
``exact_divide``): a constant splat like a value, and masks and shifts by constants."""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import Value


def const_like(b: FunctionBuilder, like: Value, value: float) -> Value:
    """``value`` as a splat of ``like``'s dtype and shape."""
    return b.constant(value, like.dtype, like.shape)


def and_mask(b: FunctionBuilder, v: Value, mask: int) -> Value:
    return b.binary("and", v, const_like(b, v, mask))


def or_mask(b: FunctionBuilder, v: Value, mask: int) -> Value:
    return b.binary("or", v, const_like(b, v, mask))


def shr(b: FunctionBuilder, v: Value, amount: int) -> Value:
    """``v`` shifted right by ``amount`` bits, filling with zeros."""
    return b.binary("shift_right_logical", v, const_like(b, v, amount))
