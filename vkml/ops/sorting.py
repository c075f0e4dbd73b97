"""Sorting: ``argsort``, the positions that order an axis, as a bitonic network over
(key, position) pairs (vkml.ops.emitters.sort), so the order is the one stable order and the
same on every device. ``sort`` is ``take_along_axis(x, argsort(x))``, whose gradient is the
gather's; argsort itself has none (an integer output)."""

from __future__ import annotations

from vkml.ops import layout_rules
from vkml.ops.emitters import sort as emit
from vkml.ops.references import axes as ref
from vkml.ops.spec import OpDef, table

SORTING: dict[str, OpDef] = table(
    OpDef("argsort", layout_rules.sort, emit.emit_argsort, ref.argsort, True),
)
