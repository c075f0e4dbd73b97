"""The ``vkml`` functions whose calls have a convention of their own (``where``'s two Python
numbers, the casts' dtype, a view's shape or index expression, the gathers' broadcast
indices, ``sort``) and of the composites: each returns the ``Tensor`` of the node its
``vkml.frontend`` function records (through ``record``, from the op's rule), with its
signature and docstring. The functions of the ops with a ``Spelling`` are generated
(``vkml.frontend.op_functions``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec

from vkml.frontend import (
    convolution,
    einsum as einsum_module,
    elementwise,
    extremes,
    indexing,
    pooling,
    reductions,
    sorting,
    statistics,
    updates,
    views,
)
from vkml.frontend.tensor import Tensor, wrap
from vkml.graph.node import Node

P = ParamSpec("P")


def _public(record: Callable[P, Node]) -> Callable[P, Tensor]:
    """``record`` returning a tensor: the operand itself where the op changed nothing."""

    @functools.wraps(record)
    def function(*args: P.args, **kwargs: P.kwargs) -> Tensor:
        return wrap(record(*args, **kwargs), *args)

    return function


where = _public(elementwise.where)
astype = _public(elementwise.astype)
bitcast = _public(elementwise.bitcast)
clip = _public(elementwise.clip)
cumsum = _public(reductions.cumsum)
take = _public(indexing.take)
take_along_axis = _public(indexing.take_along_axis)
scatter_add = _public(indexing.scatter_add)  # take_along_axis's transpose (its gradient)
place_at = _public(indexing.place_at)  # x[i]'s transpose (its gradient)
sort = _public(sorting.sort)
conv = _public(convolution.conv)
conv_transpose = _public(convolution.conv_transpose)
max_pool = _public(pooling.max_pool)
avg_pool = _public(pooling.avg_pool)
adaptive_avg_pool = _public(pooling.adaptive_avg_pool)
index_add = _public(updates.index_add)
argsort = _public(sorting.argsort)
mean = _public(reductions.mean)
var = _public(statistics.var)
std = _public(statistics.std)
any = _public(statistics.any)
all = _public(statistics.all)
isnan = _public(statistics.isnan)
isinf = _public(statistics.isinf)
isfinite = _public(statistics.isfinite)
flatten = _public(views.flatten)
softmax = _public(reductions.softmax)
log_softmax = _public(reductions.log_softmax)
matmul = _public(reductions.matmul)
reshape = _public(views.reshape)
permute = _public(views.permute)
transpose = _public(views.transpose)
broadcast_to = _public(views.broadcast_to)
expand = _public(views.expand)
squeeze = _public(views.squeeze)
unsqueeze = _public(views.unsqueeze)
concatenate = _public(views.concatenate)
stack = _public(views.stack)


def max(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
        keepdim: bool | None = None) -> Any:  # fmt: skip
    """NumPy's ``vkml.max(x, axis)`` (the maximum; NaN propagates), or PyTorch's
    ``vkml.max(x, dim=1)``: ``(values, indices)`` of the first maximum along ``dim``."""
    return _selected(extremes.extreme("max", x, axis, keepdims, dim, keepdim), x)


def min(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
        keepdim: bool | None = None) -> Any:  # fmt: skip
    """NumPy's ``vkml.min(x, axis)``, or PyTorch's ``vkml.min(x, dim=1)``: ``(values,
    indices)`` of the first minimum along ``dim``."""
    return _selected(extremes.extreme("min", x, axis, keepdims, dim, keepdim), x)


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``, in
    order; equal elements in their order along the axis, NaN the largest."""
    return _selected(extremes.topk(x, k, dim, largest, sorted), x)


def nonzero(x: Tensor, as_tuple: bool = False) -> Any:
    """The positions of the non-zero elements, PyTorch's (count, ndim) int64 tensor or, with
    ``as_tuple``, one tensor per axis (NumPy's form); realizes ``x`` first."""
    found = extremes.nonzero(x, as_tuple)
    return tuple(Tensor(n) for n in found) if isinstance(found, tuple) else Tensor(found)


def cat(tensors: Any, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """PyTorch's name for ``concatenate``: ``tensors`` joined along ``dim`` (or ``axis``)."""
    return wrap(views.concatenate(tensors, dim if axis is None else axis), tensors)


def _selected(found: Node | tuple[Node, Node], x: Tensor) -> Any:
    if isinstance(found, tuple):
        return extremes.ValuesIndices(Tensor(found[0]), Tensor(found[1]))
    return wrap(found, x)


def einsum(subscripts: str, *operands: Tensor) -> Tensor:
    """NumPy's ``einsum``: the Einstein summation ``subscripts`` (``"ij,jk->ik"``, ``...``,
    implicit outputs, diagonals) of ``operands``; contractions are batched matmuls (ADR
    0005's contract), sums the pairwise tree."""
    return wrap(einsum_module.einsum(subscripts, *operands), *operands)
