"""The shape rules of the ops that move elements along axes: views, ``concatenate``, the
gathers, ``cumsum`` and ``argsort`` (``vkml.ops.rules`` has the others, and says what a
rule is). A view's rule takes what its public function resolved from the user's spelling (a
shape without -1, a normalized permutation, a slice's start, limit and stride on every axis)
and checks it against its operand.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import DType, int64, promote_types
from vkml.errors import AxisError, DTypeError, ShapeError
from vkml.graph.node import Node
from vkml.ops.shapes import normalize_axes, one_axis
from vkml.ops.spec import OpDef, Out, ShapeRule


def _scan(op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]) -> Out:
    (x,) = nodes
    if not x.shape:
        raise ShapeError(f"'{op.name}' of a 0-d tensor: there is no axis to run along")
    a = one_axis(op.name, params["axis"], x.shape)
    return Out(x.dtype if x.dtype.is_float else int64, x.shape, (("axis", a),))


def _sort(op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]) -> Out:
    (x,) = nodes
    descending = params["descending"]
    if not isinstance(descending, bool):
        raise DTypeError(
            f"'{op.name}': descending={descending!r} is not a bool; pass True or False"
        )
    if not x.shape:
        raise ShapeError(f"'{op.name}' of a 0-d tensor: there is no axis to order")
    a = one_axis(op.name, params["axis"], x.shape)
    return Out(int64, x.shape, (("axis", a), ("descending", descending)))


def integer_indices(op: str, node: Node) -> Node:
    """``node``, which must hold integers (positions)."""
    if node.dtype.kind not in ("int", "uint"):
        raise DTypeError(
            f"'{op}' takes integer indices, got {node.dtype}; use indices.astype(vkml.int64)"
        )
    return node


def _take_along_axis(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    x, idx = nodes
    integer_indices(op.name, idx)
    a = one_axis(op.name, params["axis"], x.shape) if x.shape else 0
    others = [d for d in range(len(x.shape)) if d != a]
    if (
        len(idx.shape) != len(x.shape)
        or not x.shape
        or any(x.shape[d] != idx.shape[d] for d in others)
    ):
        raise ShapeError(
            f"'{op.name}': indices of shape {idx.shape} need the rank of x {x.shape} (at "
            f"least 1) and its length on every axis but {a}; reshape or broadcast them"
        )
    if x.shape[a] == 0 and idx.shape[a] > 0:
        raise ShapeError(f"'{op.name}': axis {a} of x {x.shape} is empty: no index names it")
    return Out(x.dtype, idx.shape, (("axis", a),))


def _scatter(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    g, idx = nodes
    integer_indices(op.name, idx)
    if idx.shape != g.shape:
        raise ShapeError(f"'{op.name}': indices {idx.shape} and values {g.shape} differ")
    size = params["size"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ShapeError(f"'{op.name}': size must be a non-negative int, got {size!r}")
    a = one_axis(op.name, params["axis"], g.shape)
    return Out(g.dtype, g.shape[:a] + (size,) + g.shape[a + 1 :], (("axis", a),))


def _index_at(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    x, _ = nodes
    a = params["axis"]
    return Out(x.dtype, x.shape[:a] + (1,) + x.shape[a + 1 :], (("axis", a),))


def _place_at(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    g, _ = nodes
    a = params["axis"]
    return Out(g.dtype, g.shape[:a] + (params["size"],) + g.shape[a + 1 :], (("axis", a),))


def _reshape(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    (x,) = nodes
    shape = params["shape"]
    if math.prod(shape) != math.prod(x.shape) or min(shape, default=0) < 0:
        raise ShapeError(
            f"'{op.name}': cannot reshape a tensor of shape {x.shape} ({math.prod(x.shape)} "
            f"elements) into {shape} ({math.prod(shape)} elements)"
        )
    return Out(x.dtype, shape)


def _permute(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    (x,) = nodes
    perm = params["perm"]
    if sorted(perm) != list(range(len(x.shape))):
        raise AxisError(f"'{op.name}': {perm} is not a permutation of the axes of {x.shape}")
    return Out(x.dtype, tuple(x.shape[p] for p in perm), (("perm", perm),))


def _broadcast_to(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    (x,) = nodes
    shape = params["shape"]
    offset = len(shape) - len(x.shape)
    if (
        offset < 0
        or any(s != shape[offset + i] and s != 1 for i, s in enumerate(x.shape))
        or any(d < 0 for d in shape)
    ):
        raise ShapeError(f"'{op.name}': cannot broadcast shape {x.shape} to {shape}")
    return Out(x.dtype, shape)


def _slice(op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]) -> Out:
    (x,) = nodes
    start, limit, stride = params["start"], params["limit"], params["stride"]
    if not len(start) == len(limit) == len(stride) == len(x.shape) or any(
        not 0 <= lo <= hi <= n or st < 1 for lo, hi, st, n in zip(start, limit, stride, x.shape)
    ):
        raise ShapeError(f"'{op.name}': {start}:{limit}:{stride} is not a slice of {x.shape}")
    shape = tuple(-(-(hi - lo) // st) for lo, hi, st in zip(start, limit, stride))
    attrs = (("start", start), ("limit", limit), ("stride", stride), ("reverse", params["reverse"]))
    return Out(x.dtype, shape, attrs)


def _concatenate(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    first = nodes[0].shape
    if not first:
        raise ShapeError(f"'{op.name}' cannot join 0-d tensors; use stack")
    (ax,) = normalize_axes(op.name, params["axis"], first)
    dtype = nodes[0].dtype
    for n in nodes[1:]:
        if len(n.shape) != len(first) or any(
            a != b for i, (a, b) in enumerate(zip(n.shape, first)) if i != ax
        ):
            raise ShapeError(f"'{op.name}': shapes {first} and {n.shape} differ outside axis {ax}")
        dtype = promote_types(dtype, n.dtype)
    shape = tuple(sum(n.shape[ax] for n in nodes) if i == ax else s for i, s in enumerate(first))
    return Out(dtype, shape, (("axis", ax),))


reshape = ShapeRule(
    "view", "one operand; a shape of its element count (no -1); its dtype", "tensor", _reshape
)
permute = ShapeRule(
    "view", "one operand; its axes in the order ``perm``; its dtype", "tensor", _permute
)
broadcast_to = ShapeRule(
    "view",
    "one operand; a shape it broadcasts to (NumPy's rule); its dtype",
    "tensor",
    _broadcast_to,
)
strided_slice = ShapeRule(
    "view",
    "one operand; ``start:limit:stride`` on every axis (then ``reverse``d axes); its dtype",
    "tensor",
    _slice,
)
structural = ShapeRule(
    "structural",
    "operands joined along one axis, equal elsewhere; the promoted dtype",
    "tensor",
    _concatenate,
)
scan = ShapeRule(
    "scan",
    "one operand accumulated along one axis; its shape; its dtype (int64 for integers)",
    "tensor",
    _scan,
)
gather = ShapeRule(
    "gather",
    "an operand and integer indices of its rank, equal off the axis; the operand's dtype",
    "tensor",
    _take_along_axis,
)
scatter = ShapeRule(
    "gather",
    "values and integer indices of one shape, summed into ``size`` positions along the axis",
    "tensor",
    _scatter,
)
index_at = ShapeRule(
    "gather", "an operand and a 0-d position: length 1 along the axis", "tensor", _index_at
)
place_at = ShapeRule(
    "gather", "an operand and a 0-d position: ``size`` long along the axis", "tensor", _place_at
)
sort = ShapeRule(
    "sort", "one operand ordered along one axis; its shape; int64 positions", "tensor", _sort
)
