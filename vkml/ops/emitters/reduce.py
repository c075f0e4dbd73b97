"""The reduction emitters (``sum``, ``amax``/``amin``, ``argmax``/``argmin``), in the shape
of ``vkml.ops.emitters.common``: each reduces in the accumulator dtype and is rewritten by
vkml's pairwise-reduction pass into a fixed tree."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.numerics import compute_dtype, select_max, select_min, sum_accumulator
from vkml.dialect.pairwise import pairwise_reduce
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import DType, int64
from vkml.ops.emitters.common import Emitter


def _keep(b: FunctionBuilder, v: Value, out: TensorType) -> Value:
    return b.reshape(v, out.shape)


def emit_sum(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    acc = sum_accumulator(xs[0].dtype) if not out.dtype.is_float else compute_dtype(out.dtype)
    x = b.convert(xs[0], acc)
    # -0.0 is the exact additive identity; vkml-pairwise-reductions rewrites this reduce.
    # A sum of no elements is +0.0, as in NumPy and PyTorch.
    empty = math.prod(x.shape[a] for a in attrs["axes"]) == 0
    init = b.constant(-0.0 if acc.is_float and not empty else 0, acc)
    total = b.reduce(x, attrs["axes"], "add", init)
    if attrs.get("divisor") is not None:  # mean
        total = b.binary(
            "divide", total, b.broadcast(b.constant(attrs["divisor"], acc), total.shape)
        )
    return b.convert(_keep(b, total, out.with_dtype(acc)), out.dtype)


def emit_prod(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """The product as a pairwise tree of multiplies (padded with 1, the exact identity), in
    the sum's accumulator dtype. Emitted as the tree itself, never a ``stablehlo.reduce``: a
    native integer reduce loops over the axis in one thread (lavapipe stops such a loop at
    65,535 turns; docs/devices.md) and llvm-cpu folded one wrongly. Integers wrap modulo
    2**64, the same value in any order."""
    acc = sum_accumulator(xs[0].dtype) if not out.dtype.is_float else compute_dtype(out.dtype)
    x = b.convert(xs[0], acc)

    def multiply(b: FunctionBuilder, p: Value, q: Value) -> Value:
        return b.binary("multiply", p, q)

    total = pairwise_reduce(b, x, attrs["axes"], multiply, 1.0 if acc.is_float else 1)
    return b.convert(_keep(b, total, out.with_dtype(acc)), out.dtype)


def _extreme(dtype: DType, largest: bool) -> float | int | bool:
    if dtype.kind == "bool":
        return largest
    if dtype.is_float:
        return math.inf if largest else -math.inf
    info = {
        "int32": (-(2**31), 2**31 - 1),
        "int64": (-(2**63), 2**63 - 1),
        "uint32": (0, 2**32 - 1),
    }
    lo, hi = info[dtype.name]
    return hi if largest else lo


def _extreme_of(b: FunctionBuilder, x: Value, axes: Sequence[int], largest: bool) -> Value:
    """The maximum (minimum) of ``x`` over ``axes`` as a pairwise tree of ``select_max``
    (``select_min``): a fixed order, so the result (NaN and signed zeros included) is the same
    on every device. A float one is emitted as a ``stablehlo.reduce`` from the identity, which
    vkml-pairwise-extremes rewrites into that tree (or keeps, where only compared)."""
    pad = _extreme(x.dtype, not largest)
    if x.dtype.is_float:
        return b.reduce(x, axes, "maximum" if largest else "minimum", b.constant(pad, x.dtype))
    return pairwise_reduce(b, x, axes, select_max if largest else select_min, pad)


def minmax(largest: bool) -> Emitter:
    """amax/amin (``_extreme_of``)."""

    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        return _keep(b, _extreme_of(b, xs[0], attrs["axes"], largest), out)

    return emit


def argextreme(largest: bool) -> Emitter:
    """Index of the first maximum (minimum) along one axis; NaN counts as the extreme."""

    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        x = xs[0]
        axis = attrs["axis"]
        if axis is None:
            x = b.reshape(x, (math.prod(x.shape),))
            axis = 0
        best = _expand(b, _extreme_of(b, x, (axis,), largest), x.shape, axis)
        hit = b.compare("EQ", x, best)
        if x.dtype.is_float:
            both_nan = b.binary("and", b.compare("NE", x, x), b.compare("NE", best, best))
            hit = b.binary("or", hit, both_nan)
        index = b.iota(x.shape, axis, int64)
        n = b.broadcast(b.constant(x.shape[axis], int64), x.shape)
        candidates = b.select(hit, index, n)
        first = b.reduce(candidates, (axis,), "minimum", b.constant(x.shape[axis], int64))
        return _keep(b, first, out)

    return emit


def _expand(b: FunctionBuilder, v: Value, shape: tuple[int, ...], axis: int) -> Value:
    """Broadcast a reduced value back along ``axis`` to ``shape``."""
    dims = ", ".join(str(i) for i in range(len(shape)) if i != axis)
    out = v.type.with_shape(shape)
    return b.emit(
        f"stablehlo.broadcast_in_dim {v.name}, dims = [{dims}] : ({v.type}) -> {out}", out
    )
