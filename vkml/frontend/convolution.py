"""Convolutions, PyTorch's layout (NCHW): ``conv`` slides a kernel (O, C / groups, *kernel)
over the spatial axes of an input (N, C, *spatial), for 1, 2 or 3 spatial axes as the
input's rank says; ``conv_transpose`` is its transpose (the gradient of ``conv`` with
respect to its input), with PyTorch's kernel layout (C, O / groups, *kernel). Both record
the one ``conv`` op (vkml.ops.convolution) and return a node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkml.errors import ShapeError
from vkml.frontend.record import Operand, record, tensor_node
from vkml.frontend.windows import per_axis
from vkml.graph.node import Node


def conv(
    x: Operand, w: Operand, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
    groups: int = 1, *, bias: Operand | None = None,
) -> Node:  # fmt: skip
    """The convolution of ``x`` (N, C, *spatial) with the kernel ``w`` (O, C / groups,
    *kernel), as PyTorch's ``conv1d``/``conv2d``/``conv3d`` (a cross-correlation: the kernel
    is not flipped) -> (N, O, *spatial').

    ``stride`` and ``dilation`` are an int or one int per spatial axis; ``padding`` an int,
    one int per axis (zeros on both sides), one (low, high) pair per axis, ``"valid"`` (none)
    or ``"same"`` (the output as long as the input, stride 1; an odd total puts the extra
    zero on the high side, as PyTorch). ``bias`` (O,) is added to each output channel.
    Accumulates as matmul does (ADR 0020)."""
    xn, wn = tensor_node("conv", x), tensor_node("conv", w)
    spatial = _spatial("conv", xn.shape, wn.shape)
    strides, pads, dilations = conv_window("conv", wn.shape[2:], stride, padding, dilation)
    groups = _groups("conv", groups)
    out = record("conv", xn, wn, stride=strides, padding=pads, lhs_dilation=(1,) * spatial,
                 rhs_dilation=dilations, groups=groups)  # fmt: skip
    return _add_bias("conv", out, bias, spatial)


def conv_transpose(
    x: Operand, w: Operand, stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
    groups: int = 1, dilation: Any = 1, *, bias: Operand | None = None,
) -> Node:  # fmt: skip
    """The transposed convolution of ``x`` (N, C, *spatial) with ``w`` (C, O / groups,
    *kernel), as PyTorch's ``conv_transpose1d/2d/3d`` (and in its argument order): the
    gradient of ``conv(y, w, stride, padding, dilation, groups)`` with respect to ``y``, so
    each spatial axis grows to ``(n - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1``. ``output_padding`` (less than the stride or the dilation) adds to
    the high side of each axis; ``bias`` (O,) is added to each output channel."""
    xn, wn = tensor_node("conv_transpose", x), tensor_node("conv_transpose", w)
    spatial = _spatial("conv_transpose", xn.shape, wn.shape)
    strides = per_axis("conv_transpose", "stride", stride, spatial, 1)
    dilations = per_axis("conv_transpose", "dilation", dilation, spatial, 1)
    pads = per_axis("conv_transpose", "padding", padding, spatial, 0)
    extra = per_axis("conv_transpose", "output_padding", output_padding, spatial, 0)
    groups = _groups("conv_transpose", groups)
    for e, s, d in zip(extra, strides, dilations):
        if e >= max(s, d):
            raise ValueError(
                f"'conv_transpose': output_padding={output_padding} must be smaller than the "
                f"stride ({stride}) or the dilation ({dilation})"
            )
    c, og, kernel = wn.shape[0], wn.shape[1], wn.shape[2:]
    if c % groups or xn.shape[1] != c:
        raise ShapeError(
            f"'conv_transpose' needs a kernel (C, O / groups, *kernel) with C = the input's "
            f"{xn.shape[1]} channels, a multiple of groups={groups}: got {wn.shape}"
        )
    # the forward convolution's kernel: (O, C / groups, *kernel), flipped
    k = record("reshape", wn, shape=(groups, c // groups, og, *kernel))
    k = record("permute", k, perm=(0, 2, 1, *range(3, 3 + spatial)))
    k = record("reshape", k, shape=(groups * og, c // groups, *kernel))
    k = _flip(k, spatial)
    reach = [(n - 1) * d for n, d in zip(kernel, dilations)]
    edges = tuple((r - p, r - p + e) for r, p, e in zip(reach, pads, extra))
    out = record("conv", xn, k, stride=(1,) * spatial, padding=edges, lhs_dilation=strides,
                 rhs_dilation=dilations, groups=groups)  # fmt: skip
    return _add_bias("conv_transpose", out, bias, spatial)


def conv_window(
    op: str, kernel: tuple[int, ...], stride: Any, padding: Any, dilation: Any
) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], tuple[int, ...]]:
    """A convolution's stride, padding (as (low, high) pairs) and dilation for a kernel of
    spatial shape ``kernel``, each checked (errors name ``op``): ``conv``'s and a
    convolution layer's (which checks them when it is made)."""
    spatial = len(kernel)
    strides = per_axis(op, "stride", stride, spatial, 1)
    dilations = per_axis(op, "dilation", dilation, spatial, 1)
    reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
    return strides, _padding(op, padding, spatial, reach, strides), dilations


def _flip(k: Node, spatial: int) -> Node:
    rank = 2 + spatial
    return record(
        "slice", k, start=(0,) * rank, limit=k.shape, stride=(1,) * rank,
        reverse=tuple(range(2, rank)),
    )  # fmt: skip


def _spatial(op: str, x: tuple[int, ...], w: tuple[int, ...]) -> int:
    if len(x) not in (3, 4, 5) or len(w) != len(x):
        raise ShapeError(
            f"'{op}' takes an input (N, C, *spatial) and a kernel of the same rank, with 1, 2 or "
            f"3 spatial axes: got {x} and {w}; add a batch axis with x[None] for one sample"
        )
    return len(x) - 2


def _groups(op: str, groups: Any) -> int:
    if isinstance(groups, (tuple, list)):
        raise TypeError(f"'{op}': groups={groups!r} must be one int >= 1")
    return per_axis(op, "groups", groups, 1, 1, "the channels' groups")[0]


def _padding(
    op: str, padding: Any, spatial: int, reach: Sequence[int], strides: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    if padding == "valid":
        return ((0, 0),) * spatial
    if padding == "same":
        if any(s != 1 for s in strides):
            raise ValueError(
                f"'{op}': padding='same' needs stride 1, got {tuple(strides)}; give the "
                f"padding as numbers"
            )
        return tuple((r // 2, r - r // 2) for r in reach)
    if isinstance(padding, str):
        raise TypeError(f"'{op}': padding={padding!r} is not 'valid', 'same' or numbers")
    if not isinstance(padding, (tuple, list)):
        return tuple((p, p) for p in per_axis(op, "padding", padding, spatial, 0))
    if len(padding) != spatial:
        raise ValueError(
            f"'{op}': padding={padding!r} must give one int or (low, high) pair per spatial "
            f"axis ({spatial})"
        )
    pairs = [per_axis(op, "padding", p, 2, 0, "a (low, high) pair") for p in padding]
    return tuple((lo, hi) for lo, hi in pairs)


def _add_bias(op: str, out: Node, bias: Operand | None, spatial: int) -> Node:
    if bias is None:
        return out
    b = tensor_node(op, bias)
    if b.shape != (out.shape[1],):
        raise ShapeError(
            f"'{op}': bias of shape {b.shape} must be ({out.shape[1]},), one per output channel"
        )
    return record("add", out, record("reshape", b, shape=(out.shape[1],) + (1,) * spatial))
