"""Pooling over the last spatial axes of a tensor (N, C, *spatial), as PyTorch's
``max_pool``/``avg_pool``/``adaptive_avg_pool`` of 1, 2 or 3 axes: composites of recorded ops
(slices of the padded input, one per window tap, side by side on a new last axis, then an
argmax gather or the pairwise sum), so their bits are those ops' bits on every device and
their gradients follow: a max routes each output's gradient to the first maximum of its
window (PyTorch's rule, NaN counting as the maximum), an average spreads it evenly. Each
returns a node."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.dtypes import DType, default_float
from vkml.errors import DTypeError, ShapeError
from vkml.frontend import indexing, views
from vkml.frontend.host import data_node, full_node
from vkml.frontend.record import Operand, record, tensor_node
from vkml.frontend.windows import out_size, per_axis
from vkml.graph.node import Node


def max_pool(
    x: Operand, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1
) -> Node:
    """The maximum of each window of ``kernel_size`` over the last spatial axes of ``x``
    (as many as ``kernel_size`` has entries; an int: every axis after the first two, or
    the last of a tensor of rank 2),
    ``stride`` apart (default: the kernel size), over ``x`` padded by ``padding`` on both
    sides of each axis (at most half the kernel); NaN propagates."""
    node = tensor_node("max_pool", x)
    if node.dtype.kind == "bool":
        raise DTypeError("'max_pool' needs a tensor of numbers, got bool; use x.astype(...)")
    spatial, kernel, strides, pads = _window("max_pool", node, kernel_size, stride, padding)
    dilations = per_axis("max_pool", "dilation", dilation, spatial, 1)
    lowest = -math.inf if node.dtype.is_float else _lowest(node.dtype)
    taps = _taps(node, kernel, strides, pads, dilations, lowest)
    first = record("argmax", taps, axis=-1, keepdims=True)
    return views.reshape(indexing.take_along_axis(taps, first, -1), taps.shape[:-1])


def avg_pool(
    x: Operand, kernel_size: Any, stride: Any = None, padding: Any = 0,
    count_include_pad: bool = True,
) -> Node:  # fmt: skip
    """The mean of each window of ``kernel_size`` (see ``max_pool``; integers average as
    float32), the padding's zeros counted in the divisor unless ``count_include_pad`` is
    False (PyTorch's default and flag)."""
    node = tensor_node("avg_pool", x)
    if node.dtype.kind == "bool":
        raise DTypeError("'avg_pool' needs a tensor of numbers, got bool; use x.astype(...)")
    if not isinstance(count_include_pad, bool):
        raise DTypeError(f"'avg_pool': count_include_pad={count_include_pad!r} is not a bool")
    if not node.dtype.is_float:
        node = record("astype", node, dtype=default_float)
    spatial, kernel, strides, pads = _window("avg_pool", node, kernel_size, stride, padding)
    taps = _taps(node, kernel, strides, pads, (1,) * spatial, 0.0)
    total = record("sum", taps, axis=-1, keepdims=False)
    if count_include_pad or not any(lo for lo, _ in pads):
        return record("div", total, float(math.prod(kernel)))
    counts = _real_counts(node.shape[-spatial:], kernel, strides, pads)
    return record("div", total, data_node(counts, node.dtype, node.device))


def adaptive_avg_pool(x: Operand, output_size: Any) -> Node:
    """The mean over ``output_size`` windows per spatial axis (an int for every axis after
    the first two, or one per last axis, None keeping an axis): window i of an axis of n
    covers [floor(i n / o), ceil((i + 1) n / o)), as PyTorch's (an int on a tensor of rank 2
    pools its last axis)."""
    node = tensor_node("adaptive_avg_pool", x)
    if node.dtype.kind == "bool":
        raise DTypeError(
            "'adaptive_avg_pool' needs a tensor of numbers, got bool; use x.astype(...)"
        )
    if not node.dtype.is_float:
        node = record("astype", node, dtype=default_float)
    sizes = output_size if isinstance(output_size, (tuple, list)) else None
    spatial = len(sizes) if sizes is not None else max(len(node.shape) - 2, 1)
    _check_rank("adaptive_avg_pool", node, spatial)
    rank = len(node.shape)
    wanted = [
        node.shape[rank - spatial + i] if s is None else s
        for i, s in enumerate(sizes if sizes is not None else [output_size] * spatial)
    ]
    outs = per_axis(
        "adaptive_avg_pool", "output_size", output_size if sizes is None else wanted, spatial, 1
    )
    for axis, o in zip(range(rank - spatial, rank), outs):
        node = _adaptive_axis(node, axis, o)
    return node


def _adaptive_axis(node: Node, axis: int, o: int) -> Node:
    n = node.shape[axis]
    if n % o == 0:  # equal windows side by side: a reshape and a mean
        split = node.shape[:axis] + (o, n // o) + node.shape[axis + 1 :]
        mean = record("sum", views.reshape(node, *split), axis=(axis + 1,), keepdims=False)
        return record("div", mean, float(n // o))
    parts = []
    for i in range(o):
        lo, hi = (i * n) // o, -((-(i + 1) * n) // o)
        index = (slice(None),) * axis + (slice(lo, hi),)
        piece = record("sum", views.getitem(node, index), axis=(axis,), keepdims=True)
        parts.append(record("div", piece, float(hi - lo)))
    return views.concatenate(parts, axis)


def _window(
    op: str, node: Node, kernel_size: Any, stride: Any, padding: Any
) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    spatial = (
        len(kernel_size) if isinstance(kernel_size, (tuple, list)) else max(len(node.shape) - 2, 1)
    )
    _check_rank(op, node, spatial)
    kernel = per_axis(op, "kernel_size", kernel_size, spatial, 1)
    strides = kernel if stride is None else per_axis(op, "stride", stride, spatial, 1)
    pads = per_axis(op, "padding", padding, spatial, 0)
    if any(2 * p > k for p, k in zip(pads, kernel)):
        raise ValueError(
            f"'{op}': padding={padding!r} must be at most half the kernel_size={kernel_size!r} "
            f"(a window of padding only has no value)"
        )
    for size, k, s, p in zip(node.shape[-spatial:], kernel, strides, pads):
        if out_size(size, k, s, p, p) < 1:
            raise ShapeError(
                f"'{op}': a window of {kernel} does not fit the input {node.shape} with "
                f"padding {padding!r}"
            )
    return spatial, kernel, strides, tuple((p, p) for p in pads)


def _check_rank(op: str, node: Node, spatial: int) -> None:
    if not 1 <= spatial <= 3 or len(node.shape) < spatial + 1:
        raise ShapeError(
            f"'{op}' pools 1, 2 or 3 spatial axes after at least one leading axis: got "
            f"{spatial} spatial axes of a tensor of shape {node.shape}"
        )


def _lowest(dtype: DType) -> int:
    return int(np.iinfo(dtype.numpy).min)


def _taps(
    node: Node, kernel: Sequence[int], strides: Sequence[int], pads: Sequence[tuple[int, int]],
    dilations: Sequence[int], fill: float,
) -> Node:  # fmt: skip
    """``node``'s windows, each tap's values for every output position side by side on a
    new last axis: (*leading, *out, taps)."""
    spatial = len(kernel)
    lead = len(node.shape) - spatial
    padded = _pad(node, pads, fill, lead)
    outs = [
        out_size(n, k, s, lo, hi, d)
        for n, k, s, (lo, hi), d in zip(node.shape[lead:], kernel, strides, pads, dilations)
    ]
    if (
        all(s == k for s, k in zip(strides, kernel))
        and set(dilations) == {1}
        and not any(lo or hi for lo, hi in pads)
    ):  # windows side by side: the taps are a reshape of the input
        return _tiled(node, kernel, outs, lead)
    taps = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        begin = [t * d for t, d in zip(tap, dilations)]
        start = (0,) * lead + tuple(begin)
        limit = padded.shape[:lead] + tuple(
            b + (m - 1) * s + 1 for b, m, s in zip(begin, outs, strides)
        )
        window = record(
            "slice",
            padded,
            start=start,
            limit=limit,
            stride=(1,) * lead + tuple(strides),
            reverse=(),
        )
        taps.append(views.reshape(window, *window.shape, 1))
    return views.concatenate(taps, -1)


def _tiled(node: Node, kernel: Sequence[int], outs: Sequence[int], lead: int) -> Node:
    spatial = len(kernel)
    used = tuple(m * k for m, k in zip(outs, kernel))
    if used != node.shape[lead:]:
        node = views.getitem(node, (Ellipsis, *(slice(0, u) for u in used)))
    split = node.shape[:lead] + tuple(x for m, k in zip(outs, kernel) for x in (m, k))
    order = tuple(range(lead)) + tuple(lead + 2 * i for i in range(spatial))
    order += tuple(lead + 2 * i + 1 for i in range(spatial))
    grouped = views.permute(views.reshape(node, *split), *order)
    return views.reshape(grouped, *node.shape[:lead], *outs, math.prod(kernel))


def _pad(node: Node, pads: Sequence[tuple[int, int]], fill: float, lead: int) -> Node:
    for i, (lo, hi) in enumerate(pads):
        axis = lead + i
        if lo or hi:
            edges = [
                full_node(node.shape[:axis] + (n,) + node.shape[axis + 1 :], fill, node.dtype,
                          node.device)
                for n in (lo, hi)
            ]  # fmt: skip
            parts = ([edges[0]] if lo else []) + [node] + ([edges[1]] if hi else [])
            node = views.concatenate(parts, axis)
    return node


def _real_counts(
    sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
    pads: Sequence[tuple[int, int]],
) -> np.ndarray:  # fmt: skip
    """How many elements of the unpadded input each window covers (the divisor when the
    padding's zeros are not counted), one per output position."""
    per_axis_counts = []
    for n, k, s, (lo, hi) in zip(sizes, kernel, strides, pads):
        m = out_size(n, k, s, lo, hi)
        starts = np.arange(m) * s - lo
        per_axis_counts.append(np.minimum(starts + k, n) - np.maximum(starts, 0))
    counts = per_axis_counts[0]
    for c in per_axis_counts[1:]:
        counts = np.multiply.outer(counts, c)
    return np.asarray(counts, np.float64)
