"""Functional updates, JAX's spelling: ``x.at[index].set(v)``, ``.add(v)``, ``.max(v)``,
``.min(v)`` and ``.get()`` give a new tensor (``x`` never changes), and PyTorch's
``index_add``. ``index`` is any index ``x[index]`` takes; ``v`` broadcasts to ``x[index]``'s
shape and is converted to ``x``'s dtype.

An element several index entries name gets them all, in a fixed order, the same on every
device (no atomics): ``add`` adds their pairwise sum (``scatter_add``'s order, index order)
to it, ``max``/``min`` their extreme, and ``set`` takes the last one in index order.

Where the index is known on the host (ints, slices, lists, NumPy arrays, a boolean mask),
the positions it names are computed there and the update is a gather and a select over
``x``'s elements. Where it holds a tensor (its values known only on the device), each of
``x``'s n elements is compared with each of the m positions: n x m memory, as for
``scatter_add``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vkml.errors import DTypeError, IndexingError
from vkml.frontend import elementwise, indexing, views
from vkml.frontend.base import TensorBase
from vkml.frontend.host import data_node, full_node, iota_node, is_scalar
from vkml.frontend.record import Operand, record, tensor_node
from vkml.graph.node import Node
from vkml.ops.shapes import normalize_axes

OPS = ("set", "add", "max", "min")


class At:
    """``x.at``: ``x.at[index]`` is the ``IndexUpdate`` of those elements."""

    __slots__ = ("_x",)

    def __init__(self, x: Any) -> None:
        self._x = x

    def __getitem__(self, index: Any) -> IndexUpdate:
        return IndexUpdate(self._x, index)


class IndexUpdate:
    """The elements ``x[index]`` of a tensor, to be replaced or combined with values ``v``;
    each method returns a new tensor of ``x``'s shape and dtype."""

    __slots__ = ("_index", "_x")

    def __init__(self, x: Any, index: Any) -> None:
        self._x, self._index = x, index

    def get(self) -> Any:
        """``x[index]``."""
        return self._x[self._index]

    def set(self, v: Any) -> Any:
        """``x`` with ``x[index]`` replaced by ``v`` (the last of repeated positions wins)."""
        return self._x._of(update("set", self._x, self._index, v))

    def add(self, v: Any) -> Any:
        """``x`` with ``v`` added at ``index`` (repeated positions: every value, summed)."""
        return self._x._of(update("add", self._x, self._index, v))

    def max(self, v: Any) -> Any:
        """``x`` with ``maximum(x[index], v)`` at ``index`` (NaN propagates)."""
        return self._x._of(update("max", self._x, self._index, v))

    def min(self, v: Any) -> Any:
        """``x`` with ``minimum(x[index], v)`` at ``index`` (NaN propagates)."""
        return self._x._of(update("min", self._x, self._index, v))


def update(op: str, x: Operand, index: Any, v: Any) -> Node:
    """The node of ``x`` updated by ``op`` ("set", "add", "max", "min") at ``index``."""
    node = tensor_node(f"at[].{op}", x)
    if op != "set" and node.dtype.kind == "bool":
        raise DTypeError(f"'at[].{op}' needs a tensor of numbers, got bool; use .set(...)")
    n = math.prod(node.shape)
    flat_x = views.reshape(node, n)
    mask = indexing.realized_mask(index)  # realized by x[mask] too: its positions are known
    host = _host_positions(node.shape, index if mask is None else mask)
    if host is not None:
        shape = host.shape
        values = _values(op, v, node, shape)
        if host.size == 0:
            return node
        return views.reshape(_update_known(op, flat_x, host.ravel(), values), *node.shape)
    positions = indexing.getitem(views.reshape(iota_node(n, node.device), *node.shape), index)
    values = _values(op, v, node, positions.shape)
    m = math.prod(positions.shape)
    if m == 0:
        return node
    out = _update_on_device(op, flat_x, views.reshape(positions, m), values)
    return views.reshape(out, *node.shape)


def index_add(x: Operand, dim: int, index: Any, source: Any, alpha: float = 1) -> Node:
    """PyTorch's ``index_add``: ``x`` with ``alpha * source[..., i, ...]`` added to
    ``x[..., index[i], ...]`` along ``dim`` for each i of the 1-D ``index`` (``source`` has
    ``x``'s shape with ``len(index)`` along ``dim``; repeated positions: every slice, summed
    in a fixed order)."""
    node = tensor_node("index_add", x)
    (axis,) = normalize_axes("index_add", dim, node.shape)
    src = tensor_node("index_add", source)
    picks = _index_list(index)
    count = (
        picks.shape[0]
        if isinstance(picks, np.ndarray)
        else tensor_node("index_add", picks).shape[0]
    )
    want = node.shape[:axis] + (count,) + node.shape[axis + 1 :]
    if src.shape != want:
        raise IndexingError(
            f"'index_add': source of shape {src.shape} must be {want}: x's shape with the "
            f"{count} indexed positions along dim {axis}"
        )
    if alpha != 1:
        src = record("mul", src, alpha)
    order = (axis, *(a for a in range(len(node.shape)) if a != axis))
    back = tuple(order.index(a) for a in range(len(node.shape)))
    moved = update("add", views.permute(node, *order), picks, views.permute(src, *order))
    return views.permute(moved, *back)


def _index_list(index: Any) -> Any:
    if isinstance(index, (TensorBase, Node)):
        if len(tensor_node("index_add", index).shape) != 1:
            raise IndexingError("'index_add': index must be 1-D, one position per source slice")
        return index
    array = np.asarray(index)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise IndexingError(f"'index_add': index {index!r:.60} must be 1-D integers")
    return array


def _host_positions(shape: tuple[int, ...], index: Any) -> np.ndarray | None:
    """The flat positions ``index`` names, as ``x[index]`` would arrange them, when the
    index holds no tensor; None when it does."""
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(it, (TensorBase, Node)) for it in items):
        return None
    try:
        return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)[index]
    except (IndexError, TypeError, ValueError) as exc:
        raise IndexingError(f"index {index!r:.80} of a tensor of shape {shape}: {exc}") from exc


def _values(op: str, v: Any, x: Node, shape: tuple[int, ...]) -> Node:
    """``v`` in ``x``'s dtype, on its device, broadcast to ``shape`` and flattened."""
    if is_scalar(v):
        value = full_node(shape, v, x.dtype, x.device, f"at[].{op}")
    else:
        if isinstance(v, (list, np.ndarray)):
            v = data_node(np.asarray(v), None, x.device)
        value = elementwise.astype(tensor_node(f"at[].{op}", v), x.dtype)
        value = views.broadcast_to(value, *shape)
    return views.reshape(value, math.prod(shape))


def _update_known(op: str, flat_x: Node, flat: np.ndarray, values: Node) -> Node:
    """The update at positions known on the host: the values per distinct position
    combined (or, without repeats, put in position order), then gathered onto ``x``'s
    elements and selected where a position names them."""
    device, n, m = flat_x.device, flat_x.shape[0], flat.size
    targets, inverse = np.unique(flat, return_inverse=True)
    k = targets.size
    order = np.full(k, -1, np.int64)
    np.maximum.at(order, inverse, np.arange(m, dtype=np.int64))  # the last entry per target
    if op == "set" or k == m:
        combined = indexing.take(values, data_node(order, None, device), 0)
    elif op == "add":
        combined = indexing.scatter_add(
            values, data_node(inverse.astype(np.int64), None, device), 0, k
        )
    else:
        hits = data_node(inverse[None, :] == np.arange(k)[:, None], None, device)
        combined = _extreme(op, hits, values)
    current = indexing.take(flat_x, data_node(targets, None, device), 0)
    new = _combine(op, current, combined)
    source = np.zeros(n, np.int64)
    source[targets] = np.arange(k)
    touched = np.zeros(n, bool)
    touched[targets] = True
    spread = indexing.take(new, data_node(source, None, device), 0)
    return elementwise.where(data_node(touched, None, device), spread, flat_x)


def _update_on_device(op: str, flat_x: Node, positions: Node, values: Node) -> Node:
    """The update at positions computed on the device: each element of ``x`` against each
    position (n x m), in the order of the index."""
    device, n, m = flat_x.device, flat_x.shape[0], positions.shape[0]
    elements = views.reshape(iota_node(n, device), n, 1)
    hits = record("eq", views.reshape(positions, 1, m), elements)
    touched = record("amax", hits, axis=1, keepdims=False)
    if op == "set":
        entries = views.broadcast_to(views.reshape(iota_node(m, device), 1, m), n, m)
        last = record("amax", elementwise.where(hits, entries, -1), axis=1, keepdims=False)
        combined = indexing.take(values, elementwise.clip(last, 0, m - 1), 0)
    elif op == "add":
        combined = indexing.scatter_add(values, positions, 0, n)
    else:
        combined = _extreme(op, hits, values)
    return elementwise.where(touched, _combine(op, flat_x, combined), flat_x)


def _extreme(op: str, hits: Node, values: Node) -> Node:
    """Per row of ``hits`` (k x m), the extreme of the values it selects."""
    dtype = values.dtype
    if dtype.is_float:
        fill: float = -math.inf if op == "max" else math.inf
    else:
        info = np.iinfo(dtype.numpy)
        fill = int(info.min if op == "max" else info.max)
    row = views.reshape(values, 1, values.shape[0])
    picked = elementwise.where(hits, row, full_node((), fill, dtype, values.device))
    return record("amax" if op == "max" else "amin", picked, axis=1, keepdims=False)


def _combine(op: str, current: Node, combined: Node) -> Node:
    if op == "set":
        return combined
    if op == "add":
        return record("add", current, combined)
    return record("maximum" if op == "max" else "minimum", current, combined)
