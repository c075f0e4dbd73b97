"""Contraction: matmul, accumulated in float32 for 16-bit floats. Its summation order is the
device's own, so its contract is a relative bound, not bits (ADR 0005); integer matmul is
exact."""

from __future__ import annotations

from vkml.graph.node import Node
from vkml.ops import rules
from vkml.ops.emitters import common as emit
from vkml.ops.references import axes as ref
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, table, to_source


def grad_matmul(node: Node, g: Handle, f: Algebra) -> Grads:
    # sources are at least 2-D (matmul reshapes 1-D operands before recording the node)
    a, b = f.tensor(node.src[0]), f.tensor(node.src[1])
    ga = g @ b.transpose(-1, -2)
    gb = a.transpose(-1, -2) @ g
    return to_source(ga, node.src[0]), to_source(gb, node.src[1])


CONTRACTION: dict[str, OpDef] = table(
    OpDef("matmul", rules.contraction, emit.emit_matmul, ref.matmul, False, bound="relative (ADR 0005)", inputs="number",
          gradient=grad_matmul),
)  # fmt: skip
