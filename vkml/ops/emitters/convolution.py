"""``conv``: a kernel slid over the spatial axes of an input, as a matrix product of the
kernel with the input's windows ("im2col"), so the contraction is matmul's (ADR 0005): 16-bit
floats are read into a float32 accumulator and rounded once, at the highest precision.

IREE's own convolution pipeline (``stablehlo.convolution``) gave its SPIR-V code a race:
for a grouped or strided 1-D convolution two invocations of a workgroup accumulated into one
cell of workgroup memory (ADR 0020); the windows and one ``dot_general`` per group go through
the code every matmul takes, on every device.

The input (N, C, *spatial) is spread (``lhs_dilation``) and padded by one ``stablehlo.pad``,
its channels moved first; each kernel tap is a strided slice of it (C, N, *out), and the taps
side by side are the columns (groups, C / groups * taps, N * out) that the kernel (groups,
O / groups, C / groups * taps) multiplies. Where the kernel has more taps than the output
has positions (a kernel's gradient, whose kernel is the output gradient's whole extent) the
same columns are built from one slice per output position instead: the count of slices,
which IREE's compile time grows with, is the smaller of the two."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.numerics import compute_dtype
from vkml.dialect.types import TensorType, Value


def emit_conv(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x, w = xs
    if 0 in out.shape or 0 in x.shape or 0 in w.shape:
        # an empty sum is 0, as matmul's; IREE's compiler dies on a zero extent
        return b.broadcast(b.constant(0, out.dtype), out.shape)
    groups = attrs["groups"]
    stride, dilation = attrs["stride"], attrs["rhs_dilation"]
    n, c, o = x.shape[0], x.shape[1], out.shape[1]
    kernel, positions = w.shape[2:], out.shape[2:]
    spatial = len(kernel)
    x = b.convert(x, out.dtype)
    w = b.convert(w, out.dtype)
    x = b.transpose(x, (1, 0, *range(2, 2 + spatial)))
    x = b.pad(
        x, b.constant(0, out.dtype), [0, 0, *(lo for lo, _ in attrs["padding"])],
        [0, 0, *(hi for _, hi in attrs["padding"])],
        [0, 0, *(a - 1 for a in attrs["lhs_dilation"])],
    )  # fmt: skip
    taps, places = math.prod(kernel), math.prod(positions)
    if taps <= places:
        cols = _columns_by_tap(b, x, kernel, positions, stride, dilation)
    else:  # a kernel larger than the output (a kernel's gradient): one slice per position
        cols = _columns_by_position(b, x, kernel, positions, stride, dilation)
    depth = c // groups * taps
    count = n * places
    cols = b.reshape(cols, (groups, depth, count))
    w = b.reshape(w, (groups, o // groups, depth))
    acc = compute_dtype(out.dtype)
    y = b.dot_general(w, cols, 1, TensorType((groups, o // groups, count), acc))
    y = b.reshape(b.convert(y, out.dtype), (o, n, *positions))
    return b.transpose(y, (1, 0, *range(2, 2 + spatial)))


def _columns_by_tap(
    b: FunctionBuilder, x: Value, kernel: Sequence[int], positions: Sequence[int],
    stride: Sequence[int], dilation: Sequence[int],
) -> Value:  # fmt: skip
    """The columns (C, taps, N * positions) of the padded input ``x`` (C, N, *spatial), one
    strided slice per kernel tap (every output position's element under that tap)."""
    c, n = x.shape[:2]
    count = n * math.prod(positions)
    pieces = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        start = [0, 0, *(t * d for t, d in zip(tap, dilation))]
        limit = [c, n, *(s0 + (m - 1) * s + 1 for s0, m, s in zip(start[2:], positions, stride))]
        window = b.slice(x, start, limit, [1, 1, *stride])
        pieces.append(b.reshape(window, (c, 1, count)))
    return b.concatenate(pieces, 1, (c, len(pieces), count))


def _columns_by_position(
    b: FunctionBuilder, x: Value, kernel: Sequence[int], positions: Sequence[int],
    stride: Sequence[int], dilation: Sequence[int],
) -> Value:  # fmt: skip
    """The same columns, one slice per output position (the window it reads, every tap):
    fewer slices where the kernel has more taps than the output positions, as the kernel's
    gradient does (its "kernel" is the output gradient's whole spatial extent)."""
    c, n = x.shape[:2]
    taps = math.prod(kernel)
    pieces = []
    for place in itertools.product(*(range(m) for m in positions)):
        start = [0, 0, *(q * s for q, s in zip(place, stride))]
        limit = [c, n, *(s0 + (k - 1) * d + 1 for s0, k, d in zip(start[2:], kernel, dilation))]
        pieces.append(b.reshape(b.slice(x, start, limit, [1, 1, *dilation]), (c, n, taps, 1)))
    cols = b.transpose(b.concatenate(pieces, 3, (c, n, taps, len(pieces))), (0, 2, 1, 3))
    return b.reshape(cols, (c, taps, n * len(pieces)))
