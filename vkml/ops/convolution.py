"""Convolution: ``conv``, a kernel slid over the spatial axes of an input (N, C, *spatial),
with a stride, padding on each side, the input spread apart (``lhs_dilation``: a transposed
convolution), the kernel spread apart (``rhs_dilation``) and channel groups. Its contract is
matmul's (ADR 0005, ADR 0020): float32 accumulation, bits run to run, a relative bound
across devices.

Both gradients are convolutions of the same op: the input's is the output gradient slid
over by the flipped kernel with stride and input spread swapped, the kernel's is the input
slid over by the output gradient. Groups become feature groups of the transposed operands,
so a grouped convolution's gradients are one convolution each too."""

from __future__ import annotations

from vkml.graph.node import Node
from vkml.ops import rules
from vkml.ops.emitters.convolution import emit_conv
from vkml.ops.references.convolution import conv as reference_conv
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, table


def grad_conv(node: Node, g: Handle, f: Algebra) -> Grads:
    x, w = node.src
    groups = node.attr("groups")
    stride, padding = node.attr("stride"), node.attr("padding")
    spread, dilation = node.attr("lhs_dilation"), node.attr("rhs_dilation")
    g = g.astype(node.dtype)
    spatial = len(stride)
    sizes, kernel, out = x.shape[2:], w.shape[2:], node.shape[2:]
    reach = [(k - 1) * d for k, d in zip(kernel, dilation)]

    # input: (N, O, *out) slid over by the flipped kernel (C, O / groups, *kernel)
    o, cg = w.shape[0], w.shape[1]
    kw = f.tensor(w).astype(node.dtype)
    kw = kw.reshape(groups, o // groups, cg, *kernel).transpose(1, 2)
    kw = kw.reshape(groups * cg, o // groups, *kernel)
    kw = kw[(slice(None), slice(None)) + (slice(None, None, -1),) * spatial]
    back = tuple(
        (r - lo, (n - 1) * a + lo - (m - 1) * s)
        for r, (lo, _), n, a, m, s in zip(reach, padding, sizes, spread, out, stride)
    )
    gx = f.conv(g, kw, stride=spread, padding=back, lhs_dilation=stride,
                rhs_dilation=dilation, groups=groups)  # fmt: skip

    # kernel: the input, channels as the batch, slid over by g (batch as the features)
    n = x.shape[0]
    xs = f.tensor(x).astype(node.dtype).reshape(n, groups, cg, *sizes)
    xs = xs.permute(2, 1, 0, *range(3, 3 + spatial)).reshape(cg, groups * n, *sizes)
    gs = g.transpose(0, 1)
    edges = tuple(
        (lo, hi - ((m_in - 1) * a + 1 + lo + hi - (m - 1) * s - 1 - r))
        for (lo, hi), m_in, a, m, s, r in zip(padding, sizes, spread, out, stride, reach)
    )
    gw = f.conv(xs, gs, stride=dilation, padding=edges, lhs_dilation=spread,
                rhs_dilation=stride, groups=groups)  # fmt: skip
    gw = gw.transpose(0, 1)
    return gx.astype(x.dtype), gw.astype(w.dtype)


CONVOLUTION: dict[str, OpDef] = table(
    OpDef("conv", rules.convolution, emit_conv, reference_conv, False, bound="relative (ADR 0020)",
          inputs="float", gradient=grad_conv),
)  # fmt: skip
