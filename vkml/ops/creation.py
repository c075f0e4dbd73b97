"""Creation: ops with no sources, hence no gradient. Their values are exact on every device.

``scalar`` is a Python number given to an op (``x * 0.1``): a run-time input of a module vkml
compiles for ``realize`` (read from a table argument, ``vkml.compiler.lower``), so a new
value needs no new compile; a constant where it cannot be an input (an exported module, the
body of a device loop), which is what its emitter writes."""

from __future__ import annotations

from vkml.ops import rules
from vkml.ops.emitters import common as emit
from vkml.ops.references import common as ref
from vkml.ops.spec import OpDef, table

CREATION: dict[str, OpDef] = table(
    OpDef("full", rules.creation, emit.emit_full, ref.full, True),
    OpDef("arange", rules.creation, emit.emit_arange, ref.arange, True),
    OpDef("scalar", rules.creation, emit.emit_full, ref.full, True),
)
