"""Gathers along an axis: ``take_along_axis`` (NumPy's, the Array API's), ``take`` (one list of
indices along an axis), and ``scatter_add``, take_along_axis's transpose, which its gradient
uses. An index ``i`` of an axis of length n is ``i`` or, where negative, ``i + n``; one
outside [-n, n) is clamped to the nearest end (a lazy graph cannot raise on a value it has
not computed; docs/contracts.md)."""

from __future__ import annotations

from vkml.errors import DTypeError, ShapeError
from vkml.frontend import ops, views
from vkml.frontend.ops import Operand
from vkml.graph.node import Node


def _indices(op: str, indices: Operand) -> Node:
    node = ops.tensor_node(op, indices)
    if node.dtype.kind not in ("int", "uint"):
        raise DTypeError(
            f"'{op}' takes integer indices, got {node.dtype}; use indices.astype(vkml.int64)"
        )
    return node


def _axis(op: str, axis: int, ndim: int) -> int:
    (a,) = ops.normalize_axes(op, axis, (0,) * ndim)
    return a


def take_along_axis(x: Operand, indices: Operand, axis: int = -1) -> Node:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``; ``indices``
    has ``x``'s rank, and its other axes broadcast against ``x``'s."""
    node, idx = ops.tensor_node("take_along_axis", x), _indices("take_along_axis", indices)
    ops.check_same_device("take_along_axis", [node, idx])
    if len(idx.shape) != len(node.shape) or not node.shape:
        raise ShapeError(
            f"'take_along_axis': indices of shape {idx.shape} need the rank of x "
            f"{node.shape} (at least 1); reshape them, or use vkml.take for one list"
        )
    a = _axis("take_along_axis", axis, len(node.shape))
    rest = ops.broadcast_shapes(
        "take_along_axis",
        node.shape[:a] + (1,) + node.shape[a + 1 :],
        idx.shape[:a] + (1,) + idx.shape[a + 1 :],
    )
    x_shape = rest[:a] + (node.shape[a],) + rest[a + 1 :]
    i_shape = rest[:a] + (idx.shape[a],) + rest[a + 1 :]
    node = views.broadcast_to(node, *x_shape) if x_shape != node.shape else node
    idx = views.broadcast_to(idx, *i_shape) if i_shape != idx.shape else idx
    if node.shape[a] == 0 and idx.shape[a] > 0:
        raise ShapeError(
            f"'take_along_axis': axis {a} of x {node.shape} is empty: no index names it"
        )
    return Node("take_along_axis", node.dtype, i_shape, (node, idx), (("axis", a),), node.device)


def take(x: Operand, indices: Operand, axis: int | None = None) -> Node:
    """The elements of ``x`` at the 1-d ``indices`` along ``axis`` (``x`` flattened where
    None): NumPy's and the Array API's ``take``."""
    node, idx = ops.tensor_node("take", x), _indices("take", indices)
    if len(idx.shape) != 1:
        raise ShapeError(f"'take' takes 1-d indices, got shape {idx.shape}; use take_along_axis")
    if axis is None:
        node = views.reshape(node, -1) if len(node.shape) != 1 else node
        axis = 0
    if not node.shape:
        raise ShapeError("'take' of a 0-d tensor: there is no axis to take along")
    a = _axis("take", axis, len(node.shape))
    lifted = (1,) * a + idx.shape + (1,) * (len(node.shape) - a - 1)
    wide = node.shape[:a] + idx.shape + node.shape[a + 1 :]
    spread = views.broadcast_to(views.reshape(idx, *lifted), *wide)
    return take_along_axis(node, spread, a)


def scatter_add(g: Operand, indices: Operand, axis: int, size: int) -> Node:
    """The transpose of ``take_along_axis``: a tensor of ``g``'s shape with ``size`` along
    ``axis``, holding at each position the sum of the elements of ``g`` whose index names it
    (in vkml's pairwise order)."""
    node, idx = ops.tensor_node("scatter_add", g), _indices("scatter_add", indices)
    if idx.shape != node.shape:
        raise ShapeError(f"'scatter_add': indices {idx.shape} and values {node.shape} differ")
    ops.check_same_device("scatter_add", [node, idx])
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ShapeError(f"'scatter_add': size must be a non-negative int, got {size!r}")
    a = _axis("scatter_add", axis, len(node.shape))
    shape = node.shape[:a] + (size,) + node.shape[a + 1 :]
    attrs = (("axis", a),)
    return Node("scatter_add", node.dtype, shape, (node, idx), attrs, node.device)
