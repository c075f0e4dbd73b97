"""Sorting: ``argsort``, the positions that order an axis, as a bitonic network over
(key, position) pairs (vkml.dialect.sort), so the order is the one stable order and the
same on every device. ``sort`` is ``take_along_axis(x, argsort(x))``, whose gradient is the
gather's; argsort itself has none (an integer output)."""

from __future__ import annotations

from vkml.dialect import sort as emit
from vkml.ops import reference_axes as ref, rules
from vkml.ops.spec import OpDef, table

SORTING: dict[str, OpDef] = table(
    OpDef("argsort", rules.sort, emit.emit_argsort, ref.argsort, True),
)
