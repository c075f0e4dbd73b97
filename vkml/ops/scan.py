"""Scans: ``cumsum``, the inclusive running sum along one axis in a published order (the
Hillis-Steele steps of ``vkml.ops.emitters.scan``), so it is bit-exact on every device. Its
gradient is the running sum of ``g`` taken from the other end."""

from __future__ import annotations

from vkml.graph.node import Node
from vkml.ops import layout_rules
from vkml.ops.emitters import scan as emit
from vkml.ops.references import axes as ref
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, table


def grad_cumsum(node: Node, g: Handle, f: Algebra) -> Grads:
    axis = node.attr("axis")
    flip = (slice(None),) * axis + (slice(None, None, -1),)
    return (g[flip].cumsum(axis)[flip].astype(node.src[0].dtype),)


SCAN: dict[str, OpDef] = table(
    OpDef("cumsum", layout_rules.scan, emit.emit_cumsum, ref.cumsum, True, gradient=grad_cumsum),
)
