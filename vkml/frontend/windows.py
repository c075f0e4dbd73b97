"""The arguments of windowed ops (convolution, pooling): one int per spatial axis, given as
one int for all or a sequence, each checked with a message naming the op and the value."""

from __future__ import annotations

import operator
from typing import Any


def per_axis(
    op: str, name: str, value: Any, count: int, least: int, each: str = "one per spatial axis"
) -> tuple[int, ...]:
    """``value`` as ``count`` ints, each at least ``least``: one int repeated, or a sequence
    of ``count`` ints (never bools); ValueError naming ``op`` and ``name`` otherwise."""
    items = value if isinstance(value, (tuple, list)) else [value] * count
    try:
        out = tuple(operator.index(v) for v in items if not isinstance(v, bool))
    except TypeError:
        out = ()
    if len(out) != count or any(v < least for v in out):
        raise ValueError(
            f"'{op}': {name}={value!r} must be an int >= {least} or {count} of them ({each})"
        )
    return out


def out_size(size: int, kernel: int, stride: int, low: int, high: int, dilation: int = 1) -> int:
    """Positions a window of ``kernel`` taps ``dilation`` apart takes, ``stride`` apart, over
    ``size`` elements padded by ``low`` and ``high`` (0 when it does not fit)."""
    span, reach = size + low + high, (kernel - 1) * dilation + 1
    return (span - reach) // stride + 1 if span >= reach else 0
