"""Views and data movement: reshape, permute/transpose, broadcast, squeeze, indexing, concat.

Like ``vkml.frontend.elementwise``: each function validates its operands, records the node and
returns it (the operand's own node when nothing changes). A view node keeps two edges:
``src[0]``, its immediate base, and ``view_src``, the root owner of the storage (see
``vkml.graph.node``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vkml.dtypes import int32, int64
from vkml.errors import AxisError, DTypeError, IndexingError, ShapeError
from vkml.frontend.base import TensorBase
from vkml.frontend.host import scalar_node
from vkml.frontend.record import Operand, record, tensor_node
from vkml.graph.node import Node
from vkml.ops import shapes


def _shape_arg(op: str, shape: Sequence[Any]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise ShapeError(f"'{op}': shape entries must be integers, got {s!r} in {tuple(shape)}")
        out.append(int(s))
    return tuple(out)


def reshape(x: Operand, *shape: Any) -> Node:
    """The same elements in row-major order with a new shape (one entry may be -1)."""
    node = tensor_node("reshape", x)
    new = _shape_arg("reshape", shape)
    size = math.prod(node.shape)
    if new.count(-1) > 1 or any(s < -1 for s in new):
        raise ShapeError(
            f"'reshape': invalid target shape {new} (at most one -1, no other negatives)"
        )
    if -1 in new:
        known = math.prod(s for s in new if s != -1)
        if known == 0 or size % known:
            raise ShapeError(
                f"'reshape': cannot reshape a tensor of shape {node.shape} ({size} elements) "
                f"into {new}"
            )
        new = tuple(size // known if s == -1 else s for s in new)
    out = record("reshape", node, shape=new)  # the rule checks the element count
    return node if new == node.shape else out


def permute(x: Operand, *dims: Any) -> Node:
    """Reorder the axes: output axis i is input axis ``dims[i]``."""
    node = tensor_node("permute", x)
    perm = _shape_arg("permute", dims)
    ndim = len(node.shape)
    in_range = all(-ndim <= p < ndim for p in perm)
    if len(perm) != ndim or not in_range or sorted(p % ndim for p in perm) != list(range(ndim)):
        raise AxisError(
            f"'permute': {perm} is not a permutation of the {ndim} axes of shape {node.shape}; "
            f"name each axis once, each in [{-ndim}, {ndim})"
        )
    perm = tuple(p % ndim for p in perm)
    if perm == tuple(range(ndim)):
        return node
    return record("permute", node, perm=perm)


def transpose(x: Operand, *axes: Any) -> Node:
    """Reverse the axes (no arguments, as NumPy's ``.T``), swap two axes (``transpose(0, 1)``,
    as PyTorch), or apply a permutation given as one tuple (``transpose((1, 0, 2))``, as NumPy).
    """
    node = tensor_node("transpose", x)
    ndim = len(node.shape)
    if not axes or (len(axes) == 1 and axes[0] is None):
        return permute(x, *reversed(range(ndim)))
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        return permute(x, *axes[0])
    if len(axes) != 2:
        raise AxisError(
            f"'transpose' takes two axes to swap or one permutation tuple, got {axes!r}"
        )
    first = shapes.normalize_axes("transpose", axes[0], node.shape)[0]
    second = shapes.normalize_axes("transpose", axes[1], node.shape)[0]
    perm = list(range(ndim))
    perm[first], perm[second] = perm[second], perm[first]
    return permute(x, *perm)


def broadcast_to(x: Operand, *shape: Any) -> Node:
    """``x`` repeated along new leading axes and axes of length 1 (NumPy rules)."""
    node = tensor_node("broadcast_to", x)
    new = _shape_arg("broadcast_to", shape)
    if new == node.shape:
        return node
    return record("broadcast_to", node, shape=new)


def expand(x: Operand, *sizes: Any) -> Node:
    """PyTorch's ``expand``: like ``broadcast_to``, where -1 keeps that axis' size."""
    node = tensor_node("expand", x)
    new = _shape_arg("expand", sizes)
    offset = len(new) - len(node.shape)
    resolved = tuple(
        node.shape[i - offset] if s == -1 and i >= offset else s for i, s in enumerate(new)
    )
    return broadcast_to(x, resolved)


def squeeze(x: Operand, axis: Any = None) -> Node:
    """Remove axes of length 1 (all of them, or the named ones, which must have length 1)."""
    node = tensor_node("squeeze", x)
    if axis is None:
        axes = tuple(i for i, s in enumerate(node.shape) if s == 1)
    else:
        axes = shapes.normalize_axes("squeeze", axis, node.shape)
        for a in axes:
            if node.shape[a] != 1:
                raise ShapeError(
                    f"'squeeze': axis {a} of shape {node.shape} has length {node.shape[a]}, not 1"
                )
    return reshape(x, tuple(s for i, s in enumerate(node.shape) if i not in axes))


def identity(x: Operand) -> Node:
    """A new node of ``x``'s value (a reshape to its own shape): a handle that is not ``x``'s,
    which gradients flow through (``Tensor.clone``)."""
    node = tensor_node("clone", x)
    return record("reshape", node, shape=node.shape)


def flatten(x: Operand, start_dim: int = 0, end_dim: int = -1) -> Node:
    """Axes ``start_dim`` to ``end_dim`` of ``x`` merged into one (PyTorch's ``flatten``; a
    0-d tensor becomes one element)."""
    node = tensor_node("flatten", x)
    if not node.shape:
        return reshape(node, 1)
    first, last = (shapes.normalize_axes("flatten", d, node.shape)[0] for d in (start_dim, end_dim))
    if first > last:
        raise AxisError(
            f"'flatten': start_dim {start_dim} comes after end_dim {end_dim} in shape {node.shape}"
        )
    merged = math.prod(node.shape[first : last + 1])
    return reshape(node, (*node.shape[:first], merged, *node.shape[last + 1 :]))


def unsqueeze(x: Operand, axis: int) -> Node:
    """Insert an axis of length 1 at position ``axis`` (of the result)."""
    node = tensor_node("unsqueeze", x)
    ndim = len(node.shape) + 1
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise AxisError(f"'unsqueeze': axis {axis!r:.40} is not an integer")
    if not -ndim <= int(axis) < ndim:
        raise AxisError(
            f"'unsqueeze': axis {axis!r} is out of range for a result of rank {ndim}; use an "
            f"axis in [{-ndim}, {ndim})"
        )
    a = int(axis) % ndim
    return reshape(x, (*node.shape[:a], 1, *node.shape[a:]))


def _slice_indices(it: slice, n: int, dim: int) -> tuple[int, int, int]:
    try:
        return it.indices(n)
    except (TypeError, ValueError) as exc:  # a zero step, a bound that is not an integer
        raise IndexingError(f"invalid slice {it!r} for axis {dim}: {exc}") from exc


def getitem(x: Operand, index: Any) -> Node:
    """Basic indexing: integers, slices (any step), ``...`` and ``None``."""
    node = tensor_node("getitem", x)
    items = index if isinstance(index, tuple) else (index,)
    for it in items:
        if isinstance(it, (TensorBase, Node, list)) or (
            hasattr(it, "shape") and getattr(it, "ndim", 0) > 0
        ):
            raise IndexingError(
                f"advanced indexing takes integer tensors, got a {type(it).__name__}; index "
                f"with vkml.tensor(...) of integers, or with ints, slices, ... and None"
            )
        if not (
            it is None
            or it is Ellipsis
            or isinstance(it, slice)
            or (hasattr(it, "__index__") and not isinstance(it, bool))
        ):
            raise IndexingError(f"invalid index {it!r} of type {type(it).__name__}")
    if sum(it is Ellipsis for it in items) > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
    consuming = [it for it in items if it is not None and it is not Ellipsis]
    ndim = len(node.shape)
    if len(consuming) > ndim:
        raise IndexingError(
            f"too many indices for a tensor of shape {node.shape}: {len(consuming)} given"
        )
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (ndim - len(consuming)) + items[at + 1 :]
    else:
        items = items + (slice(None),) * (ndim - len(consuming))
    start, limit, stride, reverse, out_shape = [], [], [], [], []
    positions: list[tuple[int, int]] = []  # (axis, index) of each integer index
    dim = 0
    for it in items:
        if it is None:
            out_shape.append(1)
            continue
        n = node.shape[dim]
        if isinstance(it, slice):
            lo, hi, st = _slice_indices(it, n, dim)
            count = len(range(lo, hi, st))
            if st < 0:
                reverse.append(dim)
                lo = n - 1 - lo
                st = -st
            hi = lo + (count - 1) * st + 1 if count else lo
            start.append(lo)
            limit.append(hi)
            stride.append(st)
            out_shape.append(count)
        else:
            i = int(it)
            if not -n <= i < n:
                raise IndexingError(
                    f"index {i} is out of bounds for axis {dim} with size {n} (shape {node.shape})"
                )
            positions.append((dim, i % n))
            start.append(0)
            limit.append(n)
            stride.append(1)
        dim += 1
    sliced = node
    full = tuple(start) == (0,) * ndim and tuple(limit) == node.shape and set(stride) <= {1}
    if not full or reverse:
        sliced = record(
            "slice", node, start=tuple(start), limit=tuple(limit), stride=tuple(stride),
            reverse=tuple(reverse),
        )  # fmt: skip
    for axis, i in positions:
        sliced = _at_position(sliced, axis, i)
    return reshape(sliced, tuple(out_shape))


def _at_position(node: Node, axis: int, i: int) -> Node:
    """``node`` at index ``i`` (in range: ``getitem`` checked it) of ``axis``, kept as an
    axis of length 1, where ``i`` is a run-time input of the compiled module (a ``scalar``):
    ``x[i]`` for every ``i`` is one module, so a loop over rows compiles once."""
    dtype = int32 if node.shape[axis] <= 2**31 - 1 else int64
    return index_at(node, scalar_node(i, dtype, node.device, "getitem"), axis)


def index_at(x: Operand, pos: Operand, axis: int) -> Node:
    """Position ``pos`` (a 0-d integer tensor, in range) of ``axis`` of ``x``, kept as an axis
    of length 1 (``index_at``; its transpose is ``vkml.frontend.indexing.place_at``)."""
    return record("index_at", x, pos, axis=axis)


def _check_sequence(op: str, tensors: Any) -> None:
    """``tensors`` must be a sequence of tensors: one tensor there is a forgotten list."""
    if isinstance(tensors, (TensorBase, Node)):
        raise DTypeError(
            f"'{op}' takes a sequence of tensors, got one tensor; pass them as a list: "
            f"vkml.{op}([a, b], axis=0)"
        )
    if not hasattr(tensors, "__iter__"):
        raise DTypeError(f"'{op}' takes a sequence of tensors, got {type(tensors).__name__}")


def concatenate(tensors: Sequence[Operand], axis: int = 0) -> Node:
    """Join tensors along an existing axis; dtypes promote, other axes must match."""
    _check_sequence("concatenate", tensors)
    nodes = [tensor_node("concatenate", t) for t in tensors]
    if not nodes:
        raise ShapeError("'concatenate' needs at least one tensor")
    out = record("concatenate", *nodes, axis=axis)  # the rule checks the shapes and devices
    return nodes[0] if len(nodes) == 1 else out


def stack(tensors: Sequence[Operand], axis: int = 0) -> Node:
    """Join same-shaped tensors along a new axis."""
    _check_sequence("stack", tensors)
    if not tensors:
        raise ShapeError("'stack' needs at least one tensor")
    shapes = {tensor_node("stack", t).shape for t in tensors}
    if len(shapes) != 1:
        raise ShapeError(f"'stack' needs tensors of one shape, got {sorted(shapes)}")
    return concatenate([unsqueeze(t, axis) for t in tensors], axis=axis)


__all__ = [
    "broadcast_to",
    "concatenate",
    "expand",
    "getitem",
    "index_at",
    "permute",
    "reshape",
    "squeeze",
    "stack",
    "transpose",
    "unsqueeze",
]
