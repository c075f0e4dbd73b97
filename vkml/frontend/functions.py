"""The ``vkml`` functions whose calls have a convention of their own (``where``'s two Python
numbers, the casts' dtype, a view's shape or index expression, the gathers' broadcast
indices, ``sort``) and of the composites: each returns the ``Tensor`` of the node its
``vkml.frontend`` function records (through ``record``, from the op's rule), with its
signature and docstring. The functions of the ops with a ``Spelling`` are generated
(``vkml.frontend.op_functions``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

from vkml.frontend import (
    convolution,
    elementwise,
    indexing,
    pooling,
    reductions,
    sorting,
    statistics,
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
