"""The gradient rule of every differentiable op: one function per op, in ``GRADIENTS``.

A rule takes the op's node and the gradient ``g`` of the loss with respect to the node's
value, and returns one gradient per source (``None`` where no gradient flows, e.g. the
condition of ``where``). Each gradient has its source's exact shape and dtype: rules of
broadcasting ops call ``to_source``, which sums the broadcast axes away and casts back.
Rules build ordinary lazy ops, so a backward pass is more graph, realized with the forward.

View rules read ``node.src[0]``, the immediate base, never ``node.view_src`` (the collapsed
storage owner): for ``W.transpose().broadcast_to(...)`` the base of the broadcast is the
transposed (in, out) view, and only that shape gives W's gradient back in W's (out, in).

Where PyTorch's rule is a choice rather than calculus (ties, kinks, NaN), vkml follows
PyTorch 2.13: maximum/minimum split a tie evenly and pass ``g`` to both operands where
either is NaN; relu passes ``g`` where the output is NaN and blocks it at 0; abs has
gradient sign(x), 0 at 0 and at NaN; amax/amin share ``g`` evenly among tied extremes, and
a NaN anywhere in a reduced slice makes that slice's gradient NaN.

Ops without a rule have no gradient: comparisons and argmax/argmin (their outputs are not
floats) and full/arange (they have no sources).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from vkml.frontend import ops, views
from vkml.frontend.creation import full
from vkml.graph.node import Node
from vkml.frontend.tensor import Tensor

Grads = Sequence[Tensor | None]
Rule = Callable[[Node, Tensor], Grads]


def _src(node: Node, i: int) -> Tensor:
    return Tensor(node.src[i])


def _out(node: Node) -> Tensor:
    return Tensor(node)


def to_source(g: Tensor, src: Node) -> Tensor:
    """``g`` summed over the axes along which ``src`` was broadcast, cast to ``src``'s dtype."""
    shape = src.shape
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1
    )
    if axes:
        g = views.reshape(ops.sum(g, axes, keepdims=True), shape)
    elif g.shape != shape:
        g = views.reshape(g, shape)
    return ops.astype(g, src.dtype)


def _where(cond: Tensor, a: Tensor | float, b: Tensor | float) -> Tensor:
    return ops.where(cond, a, b)


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return full(shape, 0, like.dtype, like.device)


# -- binary arithmetic -----------------------------------------------------------------------
def grad_add(node: Node, g: Tensor) -> Grads:
    return to_source(g, node.src[0]), to_source(g, node.src[1])


def grad_sub(node: Node, g: Tensor) -> Grads:
    return to_source(g, node.src[0]), to_source(-g, node.src[1])


def grad_mul(node: Node, g: Tensor) -> Grads:
    a, b = _src(node, 0), _src(node, 1)
    return to_source(g * b, node.src[0]), to_source(g * a, node.src[1])


def grad_div(node: Node, g: Tensor) -> Grads:
    b = _src(node, 1)
    # d(a/b)/db = -(a/b)/b, with a/b the output itself (PyTorch divides twice the same way)
    return to_source(g / b, node.src[0]), to_source(-(g * (_out(node) / b)), node.src[1])


def grad_pow(node: Node, g: Tensor) -> Grads:
    a, b, out = _src(node, 0), _src(node, 1), _out(node)
    # PyTorch: no gradient to the base where the exponent is 0, none to the exponent where
    # the base is 0 and the exponent non-negative (0**b is flat there)
    base = _where(b == 0, 0.0, g * (b * a ** (b - 1)))
    flat = _where(a == 0, _where(b >= 0, 0.0, out * a.log()), out * a.log())
    return to_source(base, node.src[0]), to_source(g * flat, node.src[1])


def _extreme_pair(node: Node, g: Tensor, loses: Callable[[Tensor, Tensor], Tensor]) -> Grads:
    a, b = _src(node, 0), _src(node, 1)
    # a tie splits g evenly; NaN compares false everywhere, so both operands then get g
    tie = _where(a == b, g * 0.5, g)
    ga = _where(loses(a, b), 0.0, tie)
    gb = _where(loses(b, a), 0.0, tie)
    return to_source(ga, node.src[0]), to_source(gb, node.src[1])


def grad_maximum(node: Node, g: Tensor) -> Grads:
    return _extreme_pair(node, g, lambda x, y: x < y)


def grad_minimum(node: Node, g: Tensor) -> Grads:
    return _extreme_pair(node, g, lambda x, y: x > y)


def grad_where(node: Node, g: Tensor) -> Grads:
    cond = _src(node, 0)
    return (
        None,
        to_source(_where(cond, g, 0.0), node.src[1]),
        to_source(_where(cond, 0.0, g), node.src[2]),
    )


# -- unary -----------------------------------------------------------------------------------
def grad_neg(node: Node, g: Tensor) -> Grads:
    return (-g,)


def grad_abs(node: Node, g: Tensor) -> Grads:
    x = _src(node, 0)
    # sign(x) from comparisons: 0 at 0 and at NaN, as PyTorch's sgn. Selects, not casts of
    # bools: IREE's cpu code folds (float)mask * y into a select, losing 0 * inf = NaN.
    sign = _where(x > 0, 1.0, _where(x < 0, -1.0, 0.0))
    return (g * ops.astype(sign, g.dtype),)


def grad_relu(node: Node, g: Tensor) -> Grads:
    # PyTorch's threshold_backward on the output: blocked where out <= 0, so NaN passes g
    return (_where(_out(node) <= 0, 0.0, g),)


def grad_exp(node: Node, g: Tensor) -> Grads:
    return (g * _out(node),)


def grad_log(node: Node, g: Tensor) -> Grads:
    return (g / _src(node, 0),)


def grad_sqrt(node: Node, g: Tensor) -> Grads:
    return (g / (_out(node) * 2.0),)


def grad_rsqrt(node: Node, g: Tensor) -> Grads:
    out = _out(node)
    return (g * (out * out * out) * -0.5,)


def grad_tanh(node: Node, g: Tensor) -> Grads:
    out = _out(node)
    return (g * (1.0 - out * out),)


def grad_sin(node: Node, g: Tensor) -> Grads:
    return (g * _src(node, 0).cos(),)


def grad_cos(node: Node, g: Tensor) -> Grads:
    return (-(g * _src(node, 0).sin()),)


def grad_sigmoid(node: Node, g: Tensor) -> Grads:
    out = _out(node)
    return (g * ((1.0 - out) * out),)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def grad_erf(node: Node, g: Tensor) -> Grads:
    x = _src(node, 0)
    return (g * ((-(x * x)).exp() * _TWO_OVER_SQRT_PI),)


def grad_gelu(node: Node, g: Tensor) -> Grads:
    x = _src(node, 0)
    # exact GELU: d/dx x*Phi(x) = Phi(x) + x*phi(x)
    cdf = (ops.unary("erf", x * _INV_SQRT_2) + 1.0) * 0.5
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


def grad_astype(node: Node, g: Tensor) -> Grads:
    # only float -> float casts are on a gradient path (integers carry no gradient)
    return (ops.astype(g, node.src[0].dtype),)


# -- views and data movement -----------------------------------------------------------------
def grad_reshape(node: Node, g: Tensor) -> Grads:
    return (views.reshape(g, node.src[0].shape),)


def grad_permute(node: Node, g: Tensor) -> Grads:
    perm = node.attr("perm")
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (views.permute(g, *inverse),)


def grad_broadcast_to(node: Node, g: Tensor) -> Grads:
    return (to_source(g, node.src[0]),)


def grad_slice(node: Node, g: Tensor) -> Grads:
    """Scatter ``g`` back: interleave zeros for strides, pad both ends, undo the reversal."""
    base = node.src[0]
    if 0 in g.shape:
        return (_zeros(base.shape, g),)
    start, stride = node.attr("start"), node.attr("stride")
    for d, (lo, st, n) in enumerate(zip(start, stride, base.shape)):
        count = g.shape[d]
        if st > 1 and count > 1:
            g = _interleave_zeros(g, d, st)
        span = (count - 1) * st + 1
        pieces = [g]
        if lo:
            pieces.insert(0, _zeros(_with(g.shape, d, lo), g))
        if n - lo - span:
            pieces.append(_zeros(_with(g.shape, d, n - lo - span), g))
        if len(pieces) > 1:
            g = views.concatenate(pieces, d)
    for d in node.attr("reverse"):
        g = views.getitem(g, (slice(None),) * d + (slice(None, None, -1),))
    return (g,)


def _with(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    return shape[:axis] + (size,) + shape[axis + 1 :]


def _interleave_zeros(g: Tensor, axis: int, stride: int) -> Tensor:
    """Along ``axis``, each element followed by ``stride - 1`` zeros, the last one's dropped."""
    count = g.shape[axis]
    column = views.unsqueeze(g, axis + 1)
    gaps = _zeros(_with(column.shape, axis + 1, stride - 1), g)
    spread = views.reshape(
        views.concatenate([column, gaps], axis + 1), _with(g.shape, axis, count * stride)
    )
    keep = (count - 1) * stride + 1
    return views.getitem(spread, (slice(None),) * axis + (slice(0, keep),))


def grad_concatenate(node: Node, g: Tensor) -> Grads:
    axis = node.attr("axis")
    out: list[Tensor | None] = []
    offset = 0
    for src in node.src:
        size = src.shape[axis]
        piece = views.getitem(g, (slice(None),) * axis + (slice(offset, offset + size),))
        out.append(ops.astype(piece, src.dtype))
        offset += size
    return out


# -- contraction and reductions --------------------------------------------------------------
def grad_matmul(node: Node, g: Tensor) -> Grads:
    # sources are at least 2-D (matmul reshapes 1-D operands before recording the node)
    a, b = _src(node, 0), _src(node, 1)
    ga = ops.matmul(g, views.transpose(b, -1, -2))
    gb = ops.matmul(views.transpose(a, -1, -2), g)
    return to_source(ga, node.src[0]), to_source(gb, node.src[1])


def _keepdims(t: Tensor, node: Node) -> Tensor:
    """A reduction's output (or its gradient) with the reduced axes back as length 1."""
    axes = node.attr("axes")
    shape = tuple(1 if i in axes else s for i, s in enumerate(node.src[0].shape))
    return views.reshape(t, shape)


def grad_sum(node: Node, g: Tensor) -> Grads:
    divisor = node.attr("divisor")
    if divisor is not None:  # mean is a sum with a divisor
        g = g / float(divisor)
    return (views.broadcast_to(_keepdims(g, node), node.src[0].shape),)


def _grad_extreme(node: Node, g: Tensor) -> Grads:
    x = _src(node, 0)
    # PyTorch's amax/amin rule: g shared evenly among the elements equal to the extreme; a
    # NaN slice matches nothing, so its gradient is g / 0 * 0 = NaN
    mask = ops.astype(_where(x == _keepdims(_out(node), node), 1.0, 0.0), g.dtype)
    count = ops.sum(mask, node.attr("axes"), keepdims=True)
    return (mask * (_keepdims(g, node) / count),)


GRADIENTS: dict[str, Rule] = {
    "add": grad_add,
    "sub": grad_sub,
    "mul": grad_mul,
    "div": grad_div,
    "pow": grad_pow,
    "maximum": grad_maximum,
    "minimum": grad_minimum,
    "where": grad_where,
    "neg": grad_neg,
    "abs": grad_abs,
    "relu": grad_relu,
    "exp": grad_exp,
    "log": grad_log,
    "sqrt": grad_sqrt,
    "rsqrt": grad_rsqrt,
    "tanh": grad_tanh,
    "sin": grad_sin,
    "cos": grad_cos,
    "sigmoid": grad_sigmoid,
    "erf": grad_erf,
    "gelu": grad_gelu,
    "astype": grad_astype,
    "reshape": grad_reshape,
    "permute": grad_permute,
    "broadcast_to": grad_broadcast_to,
    "slice": grad_slice,
    "concatenate": grad_concatenate,
    "matmul": grad_matmul,
    "sum": grad_sum,
    "amax": _grad_extreme,
    "amin": _grad_extreme,
}
