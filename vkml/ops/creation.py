"""Creation: ops with no sources, hence no gradient. Their values are exact on every device."""

from __future__ import annotations

from vkml.dialect import emitters as emit
from vkml.ops import reference as ref
from vkml.ops.spec import OpDef, table

CREATION: dict[str, OpDef] = table(
    OpDef("full", "creation", emit.emit_full, ref.full, True),
    OpDef("arange", "creation", emit.emit_arange, ref.arange, True),
)
