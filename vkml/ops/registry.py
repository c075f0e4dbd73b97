"""``OPS``: every primitive op vkml has, by name, gathered from the families. Every other
table of ops (device support, the contract table in docs/contracts.md, the completeness
test) is derived from this one."""

from __future__ import annotations

from vkml.ops.contraction import CONTRACTION
from vkml.ops.control import CONTROL
from vkml.ops.convolution import CONVOLUTION
from vkml.ops.creation import CREATION
from vkml.ops.elementwise import ELEMENTWISE
from vkml.ops.indexing import INDEXING
from vkml.ops.movement import MOVEMENT
from vkml.ops.reduce import REDUCE
from vkml.ops.scan import SCAN
from vkml.ops.sorting import SORTING
from vkml.ops.spec import OpDef

FAMILIES: dict[str, dict[str, OpDef]] = {
    "elementwise": ELEMENTWISE,
    "creation": CREATION,
    "movement": MOVEMENT,
    "contraction": CONTRACTION,
    "convolution": CONVOLUTION,
    "reduce": REDUCE,
    "scan": SCAN,
    "indexing": INDEXING,
    "sorting": SORTING,
    "control": CONTROL,
}


def _gather() -> dict[str, OpDef]:
    ops: dict[str, OpDef] = {}
    for family, defs in FAMILIES.items():
        for name, d in defs.items():
            if name in ops:
                raise ValueError(f"op {name!r} of family {family!r} is defined in two families")
            ops[name] = d
    return ops


OPS: dict[str, OpDef] = _gather()
