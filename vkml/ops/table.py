"""The op table: one entry per primitive op.

An entry names the op's kind (which shape and dtype rule ``vkml.frontend.ops`` applies), its
MLIR emitter, its reference implementation and its cross-device numerical contract: either
bit-exact against the reference device, or within ``ulp`` units in the last place. Gradient
rules are ``vkml.frontend.gradients.GRADIENTS``.
Support per device lives with the devices (``vkml.frontend.devices``) and is checked against
this table by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from vkml.dialect.emitters import EMITTERS, Emitter
from vkml.ops.reference import REFERENCE, Reference


@dataclass(frozen=True)
class OpDef:
    name: str
    kind: str
    bit_exact: bool
    ulp: int = 0
    inputs: str = "any"  # "any", "number" (no bool), "float" (floats only), "integer"

    @property
    def emit(self) -> Emitter:
        return EMITTERS[self.name]

    @property
    def reference(self) -> Reference:
        return REFERENCE[self.name]


def _table(*defs: OpDef) -> dict[str, OpDef]:
    return {d.name: d for d in defs}


OPS: dict[str, OpDef] = _table(
    # elementwise arithmetic: IEEE-exact operations, identical everywhere
    OpDef("add", "binary", True, inputs="number"),
    OpDef("sub", "binary", True, inputs="number"),
    OpDef("mul", "binary", True, inputs="number"),
    OpDef("div", "binary", True, inputs="number"),
    OpDef("maximum", "binary", True, inputs="number"),
    OpDef("minimum", "binary", True, inputs="number"),
    OpDef("pow", "binary", False, ulp=4, inputs="number"),
    OpDef("eq", "compare", True),
    OpDef("ne", "compare", True),
    OpDef("lt", "compare", True),
    OpDef("le", "compare", True),
    OpDef("gt", "compare", True),
    OpDef("ge", "compare", True),
    OpDef("where", "where", True),
    OpDef("neg", "unary", True, inputs="number"),
    OpDef("abs", "unary", True, inputs="number"),
    OpDef("relu", "unary", True, inputs="number"),
    OpDef("astype", "cast", True),
    OpDef("bitcast", "cast", True),
    # bitwise, integers only: the random-number generator (vkml.frontend.random) is built from
    # these, add and bitcast, so its bits are the same on every device
    OpDef("bitwise_and", "binary", True, inputs="integer"),
    OpDef("bitwise_or", "binary", True, inputs="integer"),
    OpDef("bitwise_xor", "binary", True, inputs="integer"),
    OpDef("left_shift", "binary", True, inputs="integer"),
    OpDef("right_shift", "binary", True, inputs="integer"),
    # transcendental: each device's own approximation, bounded against the reference
    OpDef("exp", "unary", False, ulp=4, inputs="float"),
    OpDef("log", "unary", False, ulp=4, inputs="float"),
    OpDef("sqrt", "unary", False, ulp=2, inputs="float"),
    OpDef("rsqrt", "unary", False, ulp=4, inputs="float"),
    OpDef("tanh", "unary", False, ulp=8, inputs="float"),
    OpDef("sin", "unary", False, ulp=16, inputs="float"),
    OpDef("cos", "unary", False, ulp=16, inputs="float"),
    OpDef("sigmoid", "unary", False, ulp=8, inputs="float"),
    OpDef("erf", "unary", False, ulp=8, inputs="float"),
    OpDef("gelu", "unary", False, ulp=16, inputs="float"),
    # creation
    OpDef("full", "creation", True),
    OpDef("arange", "creation", True),
    # views and data movement: values are moved, never recomputed
    OpDef("reshape", "view", True),
    OpDef("permute", "view", True),
    OpDef("broadcast_to", "view", True),
    OpDef("slice", "view", True),
    OpDef("concatenate", "structural", True),
    # contraction: f32 accumulation; summation order is the device's own (ADR 0005)
    OpDef("matmul", "contraction", False, ulp=0, inputs="number"),
    # reductions: sums and amax/amin are pairwise trees (select-based max/min), so every
    # reduction has one published order; argmax/argmin take the first index of that extreme
    OpDef("sum", "reduction", True),
    OpDef("amax", "reduction", True),
    OpDef("amin", "reduction", True),
    OpDef("argmax", "reduction", True),
    OpDef("argmin", "reduction", True),
)
