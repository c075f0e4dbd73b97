"""Gathers along an axis: ``take_along_axis`` (NumPy's, the Array API's), ``take`` (one list of
indices along an axis), and ``scatter_add``, take_along_axis's transpose, which its gradient
uses. An index ``i`` of an axis of length n is ``i`` or, where negative, ``i + n``; one
outside [-n, n) is clamped to the nearest end (a lazy graph cannot raise on a value it has
not computed; docs/contracts.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vkml.devices.realize import realize_nodes
from vkml.dtypes import bool_, int64
from vkml.errors import IndexingError, ShapeError
from vkml.frontend import elementwise, views
from vkml.frontend.base import TensorBase
from vkml.frontend.host import data_node
from vkml.frontend.record import Operand, check_same_device, record, tensor_node
from vkml.graph.node import Node
from vkml.ops import shapes
from vkml.ops.layout_rules import integer_indices


def _indices(op: str, indices: Operand) -> Node:
    node = tensor_node(op, indices)
    if op == "getitem" and node.dtype.kind == "bool":
        raise IndexingError(
            f"a boolean mask of shape {node.shape} selects a data-dependent number of "
            f"elements: it must be the sole index (x[mask], which realizes the mask), or use "
            f"vkml.where(mask, x, fill) to stay lazy"
        )
    return integer_indices(op, node)


def _axis(op: str, axis: int, ndim: int) -> int:
    (a,) = shapes.normalize_axes(op, axis, (0,) * ndim)
    return a


def take_along_axis(x: Operand, indices: Operand, axis: int = -1) -> Node:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``; ``indices``
    has ``x``'s rank, and its other axes broadcast against ``x``'s."""
    node, idx = tensor_node("take_along_axis", x), _indices("take_along_axis", indices)
    check_same_device("take_along_axis", [node, idx])
    if len(idx.shape) != len(node.shape) or not node.shape:
        raise ShapeError(
            f"'take_along_axis': indices of shape {idx.shape} need the rank of x "
            f"{node.shape} (at least 1); reshape them, or use vkml.take for one list"
        )
    a = _axis("take_along_axis", axis, len(node.shape))
    rest = shapes.broadcast_shapes(
        "take_along_axis",
        node.shape[:a] + (1,) + node.shape[a + 1 :],
        idx.shape[:a] + (1,) + idx.shape[a + 1 :],
    )
    x_shape = rest[:a] + (node.shape[a],) + rest[a + 1 :]
    i_shape = rest[:a] + (idx.shape[a],) + rest[a + 1 :]
    node = views.broadcast_to(node, *x_shape) if x_shape != node.shape else node
    idx = views.broadcast_to(idx, *i_shape) if i_shape != idx.shape else idx
    return record("take_along_axis", node, idx, axis=a)


def take(x: Operand, indices: Operand, axis: int | None = None) -> Node:
    """The elements of ``x`` at the 1-d ``indices`` along ``axis`` (``x`` flattened where
    None): NumPy's and the Array API's ``take``."""
    node, idx = tensor_node("take", x), _indices("take", indices)
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


def place_at(g: Operand, pos: Operand, axis: int, size: int) -> Node:
    """The transpose of ``index_at``: zeros ``size`` long on ``axis`` (``g``'s shape
    elsewhere, where ``g`` has length 1), holding ``g`` at position ``pos`` (a 0-d integer
    tensor, in range)."""
    return record("place_at", g, pos, axis=axis, size=size)


def scatter_add(g: Operand, indices: Operand, axis: int, size: int) -> Node:
    """The transpose of ``take_along_axis``: a tensor of ``g``'s shape with ``size`` along
    ``axis``, holding at each position the sum of the elements of ``g`` whose index names it
    (in vkml's pairwise order)."""
    return record("scatter_add", g, indices, axis=axis, size=size)


def host_indices(index: Any, device: Any) -> Any:
    """``index`` with each list or NumPy array in it read as NumPy reads it: integers become
    an int64 index node on ``device`` (``x[[0, 2]]`` is ``x[vkml.tensor([0, 2])]``); a boolean
    one stays a NumPy array (a mask)."""

    def read(item: Any) -> Any:
        if not isinstance(item, list) and not (isinstance(item, np.ndarray) and item.ndim > 0):
            return item
        array = np.asarray(item)
        if array.dtype == np.bool_:
            return array
        if array.size == 0:
            array = array.astype(np.int64)
        if array.dtype.kind not in "iu":
            raise IndexingError(
                f"an index list or array must hold integers or bools, got {array.dtype}: "
                f"{item!r:.60}"
            )
        return data_node(array.astype(np.int64), int64, device)

    return tuple(read(it) for it in index) if isinstance(index, tuple) else read(index)


def getitem(x: Operand, index: Any) -> Node:
    """``x[index]`` in every form vkml takes: ints, slices, None and ``...`` (a view), integer
    tensors, lists and NumPy arrays (a gather) and a boolean mask (realized: how many
    elements it selects shapes the result)."""
    node = tensor_node("getitem", x)
    index = host_indices(index, node.device)
    if isinstance(index, np.ndarray):  # a boolean mask given as a list or NumPy array
        return mask_getitem(node, index)
    mask = realized_mask(index)
    if mask is not None:
        return mask_getitem(node, mask)
    if has_array_index(index):  # integer tensors: a gather
        return array_getitem(node, index)
    return views.getitem(node, index)


def realized_mask(index: Any) -> np.ndarray | None:
    """A boolean tensor given as the whole index, realized and read to the host (the count of
    True shapes what it selects); None for any other index."""
    if (
        not isinstance(index, (TensorBase, Node))
        or tensor_node("getitem", index).dtype is not bool_
    ):
        return None
    mask = tensor_node("getitem", index)
    realize_nodes([mask])
    return mask.device.download(mask.storage, mask.dtype, True)


def has_array_index(index: Any) -> bool:
    """Whether ``x[index]`` is integer-array indexing (a tensor among the index's items)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(it, (TensorBase, Node)) for it in items)


def array_getitem(x: Operand, index: Any) -> Node:
    """``x[index]`` with integer tensors: one tensor ``i`` takes whole rows, ``x[i]`` of shape
    ``i.shape + x.shape[1:]`` (NumPy's); a tuple of one int or integer tensor per axis (the
    Array API's) broadcasts them together and gathers one element per coordinate. Negative
    indices wrap once and the rest clamp per axis, as ``take``'s."""
    node = tensor_node("getitem", x)
    items = index if isinstance(index, tuple) else (index,)
    if len(items) == 1:
        idx = _indices("getitem", items[0])
        rows = take(node, views.reshape(idx, math.prod(idx.shape)), 0)
        return views.reshape(rows, *idx.shape, *node.shape[1:])
    if len(items) != len(node.shape) or not all(
        isinstance(it, (TensorBase, Node))
        or (hasattr(it, "__index__") and not isinstance(it, bool))
        for it in items
    ):
        raise IndexingError(
            f"integer-array indexing takes one int or integer tensor per axis of x "
            f"{node.shape}, got {len(items)} items ({', '.join(type(it).__name__ for it in items)}); "
            f"index the slices first, then the arrays: x[1:, :][i, j]"
        )
    terms, offset, stride = [], 0, 1
    for n, it in reversed(list(zip(node.shape, items))):
        if isinstance(it, (TensorBase, Node)):
            u = elementwise.astype(_indices("getitem", it), int64)
            u = elementwise.clip(
                elementwise.where(record("lt", u, 0), record("add", u, n), u),
                0,
                n - 1,
            )
            terms.append(record("mul", u, stride) if stride != 1 else u)
        elif -n <= int(it) < n:
            offset += (int(it) % n) * stride
        else:
            raise IndexingError(f"index {int(it)} is out of bounds for an axis of size {n}")
        stride *= n
    linear = terms[0]
    for term in terms[1:]:
        linear = record("add", linear, term)
    linear = record("add", linear, offset) if offset else linear
    flat = take(views.reshape(node, math.prod(node.shape)), views.reshape(linear, -1), 0)
    return views.reshape(flat, *linear.shape)


def mask_getitem(x: Operand, mask: np.ndarray) -> Node:
    """``x[mask]`` for a boolean ``mask``, already realized (how many elements it selects
    shapes the result), of ``x``'s leading shape: the rows of those axes where it is true, in
    row-major order, gathered lazily."""
    node = tensor_node("getitem", x)
    lead = node.shape[: mask.ndim]
    if mask.ndim > len(node.shape) or mask.shape != lead:
        raise IndexingError(
            f"a boolean mask of shape {mask.shape} must have the leading shape of x "
            f"{node.shape}; index with a mask of shape {lead or '()'}"
        )
    rows = views.reshape(node, math.prod(lead), *node.shape[mask.ndim :])
    picks = data_node(np.flatnonzero(mask).astype(np.int64), None, node.device)
    return take(rows, picks, 0)
