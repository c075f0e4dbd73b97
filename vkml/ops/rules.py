"""The shape rules: how an op's output follows from its operands (an ``OpDef``'s ``rule``).

A rule that infers is all the frontend needs to record its ops: ``vkml.frontend.record``
turns a call's arguments into nodes, the rule checks them and infers the output's dtype,
shape and attributes, and the ``vkml`` function and ``Tensor`` methods of an op with a
``Spelling`` are generated from the rule's parameters (scripts/generate_ops.py). Every rule
infers but ``creation`` and ``control``, whose ops take data or regions traced from Python
functions: those are recorded by their own functions in ``vkml.frontend``. Where a public
function does more than record (a view's spelling: ``-1`` in a shape, an index expression;
NumPy's 1-D ``matmul`` operands, ``cumsum`` of a flattened tensor, broadcast indices), that
calling convention stays in the frontend and the rule checks what reaches it. The rules of
the ops that move elements along axes are ``vkml.ops.layout_rules``.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import DType, bool_, default_float, int64, promote_types
from vkml.errors import DTypeError, ShapeError
from vkml.graph.node import Node
from vkml.ops.shapes import broadcast_shapes, normalize_axes, one_axis, reduced_shape
from vkml.ops.spec import OpDef, Out, ShapeRule


def check_inputs(op: OpDef, dtype: DType, nodes: tuple[Node, ...] = ()) -> None:
    """Refuse what ``op.inputs`` excludes: bool for an op of numbers, anything but integers
    for an op of integers; the error names the op, the dtypes and the remedy."""
    if op.inputs == "number" and dtype is bool_:
        raise DTypeError(
            f"'{op.name}' does not accept bool tensors; convert first, e.g. x.astype(vkml.int32)"
        )
    if op.inputs == "integer" and (not dtype.is_integer or any(n.dtype is bool_ for n in nodes)):
        got = " and ".join(str(n.dtype) for n in nodes) or str(dtype)
        raise DTypeError(
            f"'{op.name}' needs integer operands, got {got}; use "
            f"vkml.bitcast(x, vkml.uint32) to reach the bits of a float32"
        )


def _unary(op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]) -> Out:
    (x,) = nodes
    check_inputs(op, x.dtype)
    dtype = default_float if op.inputs == "float" and not x.dtype.is_float else x.dtype
    return Out(dtype, x.shape)


def _binary(to_float: bool) -> Any:
    def infer(
        op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
    ) -> Out:
        a, b = nodes
        assert common is not None
        check_inputs(op, common, nodes if op.inputs == "integer" else ())
        dtype = (
            default_float if (to_float or op.inputs == "float") and not common.is_float else common
        )
        if a.shape == b.shape or not b.shape:
            return Out(dtype, a.shape)
        return Out(dtype, broadcast_shapes(op.name, a.shape, b.shape))

    return infer


def _compare(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    a, b = nodes
    assert common is not None
    check_inputs(op, common)
    return Out(bool_, broadcast_shapes(op.name, a.shape, b.shape))


def _nonempty(op: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    if any(shape[a] == 0 for a in axes) or (not axes and shape and 0 in shape):
        raise ShapeError(f"'{op}' of an empty axis has no identity: shape {shape}, axis {axes}")


def _reduction(accumulate: bool) -> Any:
    def infer(
        op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
    ) -> Out:
        (x,) = nodes
        axes = normalize_axes(op.name, params["axis"], x.shape)
        if accumulate:
            dtype = x.dtype if x.dtype.is_float else int64
        else:
            _nonempty(op.name, x.shape, axes)
            dtype = x.dtype
        return Out(dtype, reduced_shape(x.shape, axes, params["keepdims"]), (("axes", axes),))

    return infer


def _index_reduction(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    (x,) = nodes
    axis, keepdims = params["axis"], params["keepdims"]
    if axis is None:
        if math.prod(x.shape) == 0:
            raise ShapeError(f"'{op.name}' of an empty tensor (shape {x.shape}) has no answer")
        return Out(int64, (1,) * len(x.shape) if keepdims else (), (("axis", None),))
    a = one_axis(op.name, axis, x.shape)
    _nonempty(op.name, x.shape, (a,))
    return Out(int64, reduced_shape(x.shape, (a,), keepdims), (("axis", a),))


def _where(op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]) -> Out:
    cond, a, b = nodes
    shape = broadcast_shapes(op.name, broadcast_shapes(op.name, cond.shape, a.shape), b.shape)
    return Out(promote_types(a.dtype, b.dtype), shape)


def _astype(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    (x,) = nodes
    return Out(params["dtype"], x.shape)


def _bitcast(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    (x,) = nodes
    target: DType = params["dtype"]
    if bool_ in (x.dtype, target) or x.dtype.bits != target.bits:
        raise DTypeError(
            f"'bitcast' needs two non-bool dtypes of one width, got {x.dtype} "
            f"({x.dtype.bits} bits) to {target} ({target.bits} bits); use astype to convert values"
        )
    return Out(target, x.shape)


def _contraction(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    a, b = nodes
    dtype = promote_types(a.dtype, b.dtype)
    check_inputs(op, dtype)
    if len(a.shape) < 2 or len(b.shape) < 2 or a.shape[-1] != b.shape[-2]:
        raise ShapeError(
            f"'{op.name}' contracts the last axis of a with the second to last of b, both of "
            f"rank >= 2: got {a.shape} @ {b.shape}"
        )
    batch = broadcast_shapes(op.name, a.shape[:-2], b.shape[:-2])
    return Out(dtype, (*batch, a.shape[-2], b.shape[-1]))


def _convolution(
    op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]
) -> Out:
    x, w = nodes
    dtype = promote_types(x.dtype, w.dtype)
    if not dtype.is_float:
        raise DTypeError(
            f"'{op.name}' needs floating-point tensors, got {x.dtype} and {w.dtype}; convert "
            f"first, e.g. x.astype(vkml.float32)"
        )
    groups, stride = params["groups"], params["stride"]
    spatial = len(stride)
    if len(x.shape) != spatial + 2 or len(w.shape) != spatial + 2:
        raise ShapeError(
            f"'{op.name}' of {spatial} spatial axes needs an input (N, C, *spatial) and a kernel "
            f"(O, C / groups, *kernel) of rank {spatial + 2}: got {x.shape} and {w.shape}"
        )
    if x.shape[1] % groups:
        raise ShapeError(
            f"'{op.name}': groups={groups} must divide the input's {x.shape[1]} channels "
            f"(input {x.shape})"
        )
    if x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise ShapeError(
            f"'{op.name}': an input of {x.shape[1]} channels in groups={groups} needs a kernel "
            f"(O, {x.shape[1] // groups}, *kernel) with O a multiple of {groups}: got input "
            f"{x.shape} and kernel {w.shape}"
        )
    out = []
    window = zip(
        x.shape[2:], w.shape[2:], stride, params["padding"], params["lhs_dilation"],
        params["rhs_dilation"],
    )  # fmt: skip
    for size, k, s, (lo, hi), a, d in window:
        span = (size - 1) * a + 1 + lo + hi if size else 0
        reach = (k - 1) * d + 1
        if span < reach or k == 0:
            raise ShapeError(
                f"'{op.name}': the kernel {w.shape} (dilated to {reach}) does not fit the input "
                f"{x.shape} with padding {params['padding']}; pad the input or use a smaller kernel"
            )
        out.append((span - reach) // s + 1)
    attrs = tuple((k, params[k]) for k in ("stride", "padding", "lhs_dilation", "rhs_dilation"))
    return Out(dtype, (x.shape[0], w.shape[0], *out), attrs + (("groups", groups),))


def _same(op: OpDef, nodes: tuple[Node, ...], common: DType | None, params: dict[str, Any]) -> Out:
    (x,) = nodes
    return Out(x.dtype, x.shape)


_REDUCE_PARAMS = "axis: Any = None, keepdims: bool = False"

unary = ShapeRule(
    "unary",
    "one operand; its shape; its dtype (float32 for an integer where inputs is 'float')",
    "tensor",
    _unary,
)
binary = ShapeRule(
    "binary", "two operands broadcast together; the promoted dtype", "promoted", _binary(False)
)
division = ShapeRule(
    "binary",
    "two operands broadcast together; the promoted dtype, float32 for integers",
    "promoted",
    _binary(True),
)
compare = ShapeRule("compare", "two operands broadcast together; bool", "promoted", _compare)
accumulation = ShapeRule(
    "reduction",
    "one operand reduced over an axis set; its dtype, int64 for integers and bool",
    "tensor",
    _reduction(True),
    _REDUCE_PARAMS,
    ("dtype", "out"),
)
extreme = ShapeRule(
    "reduction",
    "one operand reduced over a non-empty axis set; its dtype",
    "tensor",
    _reduction(False),
    _REDUCE_PARAMS,
    ("out",),
)
index_reduction = ShapeRule(
    "reduction",
    "one operand reduced along one axis (or all); int64 positions",
    "tensor",
    _index_reduction,
    "axis: int | None = None, keepdims: bool = False",
    ("out",),
)
where = ShapeRule(
    "where",
    "a condition and two operands broadcast together; the operands' promoted dtype",
    "tensor",
    _where,
)
cast = ShapeRule("cast", "one operand; its shape; the dtype asked for", "tensor", _astype)
bitcast = ShapeRule(
    "cast", "one operand; its shape; a dtype of the same width, its bits reread", "tensor", _bitcast
)
creation = ShapeRule("creation", "no operands; the shape and dtype asked for")
contraction = ShapeRule(
    "contraction",
    "two operands of rank >= 2 contracted over one axis, batch axes broadcast; the promoted dtype",
    "tensor",
    _contraction,
)
convolution = ShapeRule(
    "convolution",
    "an input (N, C, *spatial) and a kernel (O, C / groups, *kernel) slid over it; (N, O, "
    "*spatial'), the promoted float dtype",
    "tensor",
    _convolution,
)
control = ShapeRule(
    "control", "a bool condition and operands, with regions over the operands; the regions' result"
)
fusion_stop = ShapeRule(
    "fusion_stop",
    "one operand, passed on unchanged: its shape and dtype (a boundary of fusion)",
    "tensor",
    _same,
)
