"""Gathers: ``take_along_axis`` and its transpose ``scatter_add`` (vkml.ops.emitters.gather), each
the other's gradient. Both move values without arithmetic, except scatter_add's sums, which
follow the pairwise tree; so both are bit-exact on every device. Indices carry no gradient.

``index_at`` (``x[i]``: one position of an axis, at a run-time position) and its transpose
``place_at`` (that position of zeros) move values only: bit-exact too."""

from __future__ import annotations

from vkml.graph.node import Node
from vkml.ops import layout_rules
from vkml.ops.emitters import gather as emit
from vkml.ops.references import axes as ref
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, table


def grad_take_along_axis(node: Node, g: Handle, f: Algebra) -> Grads:
    x, idx = node.src
    return (f.scatter_add(g, f.tensor(idx), node.attr("axis"), x.shape[node.attr("axis")]), None)


def grad_scatter_add(node: Node, g: Handle, f: Algebra) -> Grads:
    return (f.take_along_axis(g, f.tensor(node.src[1]), node.attr("axis")), None)


def grad_index_at(node: Node, g: Handle, f: Algebra) -> Grads:
    x, pos = node.src
    axis = node.attr("axis")
    return (f.place_at(g, f.tensor(pos), axis, x.shape[axis]), None)


def grad_place_at(node: Node, g: Handle, f: Algebra) -> Grads:
    return (f.index_at(g, f.tensor(node.src[1]), node.attr("axis")), None)


INDEXING: dict[str, OpDef] = table(
    OpDef("take_along_axis", layout_rules.gather, emit.emit_take_along_axis, ref.take_along_axis, True,
          gradient=grad_take_along_axis),
    OpDef("scatter_add", layout_rules.scatter, emit.emit_scatter_add, ref.scatter_add, True,
          inputs="number", gradient=grad_scatter_add),
    OpDef("index_at", layout_rules.index_at, emit.emit_index_at, ref.index_at, True, gradient=grad_index_at),
    OpDef("place_at", layout_rules.place_at, emit.emit_place_at, ref.place_at, True, gradient=grad_place_at),
)  # fmt: skip
