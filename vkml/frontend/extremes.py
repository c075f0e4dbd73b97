"""Selections by value, as PyTorch spells them: ``max``/``min`` along ``dim`` with the
positions of the extremes (values and indices), ``topk`` and ``nonzero``; and the
``Tensor`` methods of the same names (``Selections``, a mixin). ``max``/``min`` without
``dim=`` are NumPy's: the values only (``amax``/``amin``)."""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import numpy as np

from vkml.devices.realize import realize_nodes
from vkml.errors import DTypeError, ShapeError
from vkml.frontend import indexing, sorting, views
from vkml.frontend.host import data_node
from vkml.frontend.numpy_calls import numpy_operand
from vkml.frontend.record import Operand, record, tensor_node
from vkml.graph.node import Node
from vkml.ops import shapes


class ValuesIndices(NamedTuple):
    """What ``max``/``min`` along a ``dim`` and ``topk`` return, as PyTorch's: the values
    and their int64 positions along the axis."""

    values: Any
    indices: Any


def extreme(
    op: str, x: Operand, axis: Any = None, keepdims: bool = False, dim: Any = None,
    keepdim: bool | None = None,
) -> Node | tuple[Node, Node]:  # fmt: skip
    """``op`` ("max" or "min") of ``x``: over ``axis`` (NumPy's, the values), or along the
    one axis ``dim`` (PyTorch's: the values and the positions of the first extreme, NaN
    counting as the extreme; the values' gradient goes to those positions, as PyTorch's).
    ``keepdim`` is PyTorch's name for ``keepdims``."""
    node = tensor_node(op, x)
    if keepdim is not None:
        if not isinstance(keepdim, bool):
            raise DTypeError(f"'{op}': keepdim={keepdim!r} is not a bool")
        keepdims = keepdim
    if dim is None:
        return record("amax" if op == "max" else "amin", node, axis=axis, keepdims=keepdims)
    if axis is not None:
        raise TypeError(f"'{op}' takes axis (NumPy's) or dim (PyTorch's), not both")
    a = shapes.one_axis(op, dim, node.shape or (1,))
    flat = views.reshape(node, 1) if not node.shape else node
    at = record("argmax" if op == "max" else "argmin", flat, axis=a, keepdims=True)
    values = indexing.take_along_axis(flat, at, a)
    if not keepdims:
        values, at = views.squeeze(values, a), views.squeeze(at, a)
    if not node.shape:
        values, at = views.reshape(values), views.reshape(at)
    return values, at


def topk(
    x: Operand, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[Node, Node]:
    """The ``k`` largest (or smallest) elements along ``dim`` and their int64 positions,
    in order (``sorted`` is accepted for PyTorch's signature; the result is always sorted):
    equal elements in their order along the axis, NaN the largest (as ``sort``)."""
    node = tensor_node("topk", x)
    a = shapes.one_axis("topk", dim, node.shape or (1,))
    flat = views.reshape(node, 1) if not node.shape else node
    n = flat.shape[a]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ShapeError(f"'topk': k={k!r} must be an integer in [0, {n}], the length of axis {a}")
    if not isinstance(largest, bool):
        raise DTypeError(f"'topk': largest={largest!r} is not a bool")
    order = sorting.argsort(flat, a, descending=largest)
    first = views.getitem(order, (slice(None),) * a + (slice(0, int(k)),))
    return indexing.take_along_axis(flat, first, a), first


def nonzero(x: Operand, as_tuple: bool = False) -> Node | tuple[Node, ...]:
    """The positions of the non-zero (true) elements in row-major order, as PyTorch's: an
    int64 tensor (count, ndim), or with ``as_tuple`` one (count,) tensor per axis (NumPy's
    form). How many there are depends on the values, so this realizes ``x`` first (as
    indexing with a boolean mask does)."""
    node = tensor_node("nonzero", x)
    if not node.shape:
        raise ShapeError("'nonzero' of a 0-d tensor is not defined; reshape it to (1,) first")
    realize_nodes([node])
    found = np.nonzero(node.device.download(node.storage, node.dtype, False))
    if as_tuple:
        return tuple(data_node(i.astype(np.int64), None, node.device) for i in found)
    return data_node(np.stack(found, axis=1).astype(np.int64), None, node.device)


class Selections:
    """The ``Tensor`` methods of this module, mixed into ``Tensor`` (which defines ``_of``,
    a node as a tensor)."""

    __slots__ = ()

    def _of(self, node: Node) -> Any:
        raise NotImplementedError

    def max(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
            keepdim: bool | None = None, out: None = None) -> Any:  # fmt: skip
        """NumPy's ``x.max(axis)`` (the maximum; NaN propagates), or PyTorch's
        ``x.max(dim=1)``: ``(values, indices)`` of the first maximum along ``dim``."""
        return self._pick(
            "max", numpy_operand("max", self, None, out), axis, keepdims, dim, keepdim
        )

    def min(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
            keepdim: bool | None = None, out: None = None) -> Any:  # fmt: skip
        """NumPy's ``x.min(axis)``, or PyTorch's ``x.min(dim=1)``: ``(values, indices)``."""
        return self._pick(
            "min", numpy_operand("min", self, None, out), axis, keepdims, dim, keepdim
        )

    def _pick(self, op: str, x: Any, axis: Any, keepdims: bool, dim: Any, keepdim: Any) -> Any:
        found = extreme(op, x, axis, keepdims, dim, keepdim)
        if isinstance(found, tuple):
            return ValuesIndices(self._of(found[0]), self._of(found[1]))
        return self._of(found)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """``(values, indices)`` of the ``k`` largest (or smallest) along ``dim``."""
        values, indices = topk(cast(Operand, self), k, dim, largest, sorted)
        return ValuesIndices(self._of(values), self._of(indices))

    def nonzero(self, as_tuple: bool = False) -> Any:
        """The positions of the non-zero elements (realizes this tensor); see ``nonzero``."""
        found = nonzero(cast(Operand, self), as_tuple)
        return tuple(self._of(n) for n in found) if isinstance(found, tuple) else self._of(found)
