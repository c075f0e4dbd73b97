"""Everyday composites over the recorded ops: ``var`` and ``std`` (the pairwise sum of squared
deviations), ``any`` and ``all`` (an extreme of ``x != 0``), and the elementwise tests
``isnan``, ``isinf`` and ``isfinite``. Each records the ops it is made of, so its bits and
gradient follow from theirs; each returns a node.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import bool_
from vkml.frontend.host import full_node
from vkml.frontend.record import Operand, record, tensor_node
from vkml.frontend.reductions import float_reduction, mean
from vkml.graph.node import Node
from vkml.ops.shapes import normalize_axes, reduced_shape


def var(
    x: Operand, axis: Any = None, keepdims: bool = False, correction: float = 0,
    ddof: float | None = None,
) -> Node:  # fmt: skip
    """The variance over ``axis``: the sum of squared deviations from the mean divided by
    N - ``correction`` (NumPy's and the Array API's default 0; PyTorch's ``x.var()`` is
    ``correction=1``). ``ddof`` is NumPy's name for ``correction``."""
    if ddof is not None:
        if correction != 0:
            raise TypeError("'var' takes correction or ddof (NumPy's name for it), not both")
        correction = ddof
    node, axes, count = float_reduction("var", x, axis)
    centred = record("sub", node, mean(node, axes, keepdims=True))
    total = record("sum", record("mul", centred, centred), axis=axes, keepdims=keepdims)
    return record("div", total, float(max(count - correction, 0)))


def std(
    x: Operand, axis: Any = None, keepdims: bool = False, correction: float = 0,
    ddof: float | None = None,
) -> Node:  # fmt: skip
    """The standard deviation over ``axis``: ``sqrt(var(x, axis, keepdims, correction))``."""
    return record("sqrt", var(x, axis, keepdims, correction, ddof))


def any(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Whether some element over ``axis`` is true (non-zero); false over no elements."""
    return _logical("any", x, axis, keepdims)


def all(x: Operand, axis: Any = None, keepdims: bool = False) -> Node:
    """Whether every element over ``axis`` is true (non-zero); true over no elements."""
    return _logical("all", x, axis, keepdims)


def _logical(op: str, x: Operand, axis: Any, keepdims: bool) -> Node:
    node = tensor_node(op, x)
    truth = node if node.dtype is bool_ else record("ne", node, 0)
    if 0 in node.shape:  # an extreme of no elements has no identity; these have one
        axes = normalize_axes(op, axis, node.shape)
        return full_node(reduced_shape(node.shape, axes, keepdims), op == "all", bool_, node.device)
    return record("amax" if op == "any" else "amin", truth, axis=axis, keepdims=keepdims)


def isnan(x: Operand) -> Node:
    """True where ``x`` is NaN (never for an integer or bool)."""
    node = tensor_node("isnan", x)
    return record("ne", node, node) if node.dtype.is_float else _filled(node, False)


def isinf(x: Operand) -> Node:
    """True where ``x`` is +inf or -inf (never for an integer or bool)."""
    node = tensor_node("isinf", x)
    if not node.dtype.is_float:
        return _filled(node, False)
    return record("eq", record("abs", node), math.inf)


def isfinite(x: Operand) -> Node:
    """True where ``x`` is neither infinite nor NaN (always for an integer or bool)."""
    node = tensor_node("isfinite", x)
    if not node.dtype.is_float:
        return _filled(node, True)
    return record("lt", record("abs", node), math.inf)


def _filled(node: Node, value: bool) -> Node:
    return full_node(node.shape, value, bool_, node.device)
