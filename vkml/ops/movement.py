"""Views and data movement: values are moved, never recomputed, so every op is bit-exact.

View rules read ``node.src[0]``, the immediate base, never ``node.view_src`` (the collapsed
storage owner): for ``W.transpose().broadcast_to(...)`` the base of the broadcast is the
transposed (in, out) view, and only that shape gives W's gradient back in W's (out, in).
"""

from __future__ import annotations

from vkml.graph.node import Node
from vkml.ops import layout_rules
from vkml.ops.emitters import common as emit
from vkml.ops.references import common as ref
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, table, to_source


def grad_reshape(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g.reshape(node.src[0].shape),)


def grad_permute(node: Node, g: Handle, f: Algebra) -> Grads:
    perm = node.attr("perm")
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (g.permute(*inverse),)


def grad_broadcast_to(node: Node, g: Handle, f: Algebra) -> Grads:
    return (to_source(g, node.src[0]),)


def grad_slice(node: Node, g: Handle, f: Algebra) -> Grads:
    """Scatter ``g`` back: interleave zeros for strides, pad both ends, undo the reversal."""
    base = node.src[0]
    if 0 in g.shape:
        return (f.full(base.shape, 0, g.dtype, g.device),)
    start, stride = node.attr("start"), node.attr("stride")
    for d, (lo, st, n) in enumerate(zip(start, stride, base.shape)):
        count = g.shape[d]
        if st > 1 and count > 1:
            g = _interleave_zeros(g, f, d, st)
        span = (count - 1) * st + 1
        pieces = [g]
        if lo:
            pieces.insert(0, f.full(_with(g.shape, d, lo), 0, g.dtype, g.device))
        if n - lo - span:
            pieces.append(f.full(_with(g.shape, d, n - lo - span), 0, g.dtype, g.device))
        if len(pieces) > 1:
            g = f.concatenate(pieces, d)
    for d in node.attr("reverse"):
        g = g[(slice(None),) * d + (slice(None, None, -1),)]
    return (g,)


def _with(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    return shape[:axis] + (size,) + shape[axis + 1 :]


def _interleave_zeros(g: Handle, f: Algebra, axis: int, stride: int) -> Handle:
    """Along ``axis``, each element followed by ``stride - 1`` zeros, the last one's dropped."""
    count = g.shape[axis]
    column = g.unsqueeze(axis + 1)
    gaps = f.full(_with(column.shape, axis + 1, stride - 1), 0, g.dtype, g.device)
    spread = f.concatenate([column, gaps], axis + 1).reshape(_with(g.shape, axis, count * stride))
    keep = (count - 1) * stride + 1
    return spread[(slice(None),) * axis + (slice(0, keep),)]


def grad_concatenate(node: Node, g: Handle, f: Algebra) -> Grads:
    axis = node.attr("axis")
    out: list[Handle | None] = []
    offset = 0
    for src in node.src:
        size = src.shape[axis]
        piece = g[(slice(None),) * axis + (slice(offset, offset + size),)]
        out.append(piece.astype(src.dtype))
        offset += size
    return out


MOVEMENT: dict[str, OpDef] = table(
    OpDef("reshape", layout_rules.reshape, emit.emit_reshape, ref.reshape, True, gradient=grad_reshape),
    OpDef("permute", layout_rules.permute, emit.emit_permute, ref.permute, True, gradient=grad_permute),
    OpDef("broadcast_to", layout_rules.broadcast_to, emit.emit_broadcast_to, ref.broadcast_to, True, gradient=grad_broadcast_to),
    OpDef("slice", layout_rules.strided_slice, emit.emit_slice, ref.strided_slice, True, gradient=grad_slice),
    OpDef("concatenate", layout_rules.structural, emit.emit_concatenate, ref.concatenate, True, gradient=grad_concatenate),
)  # fmt: skip
