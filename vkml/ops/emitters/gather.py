"""``take_along_axis`` and its transpose ``scatter_add``, as StableHLO.

An index ``i`` along an axis of length n means ``i`` for 0 <= i < n and ``i + n`` for
-n <= i < 0 (NumPy's negative indices); one outside [-n, n) is clamped to the nearest end, as
StableHLO's gather clamps (NumPy would raise; a lazy graph cannot).

``scatter_add`` sums, for each position along the axis, the elements of ``g`` whose index
names it, in the pairwise order of ``vkml.dialect.pairwise`` over a select of ``g`` (the
others read as -0.0, the exact additive identity), never a ``stablehlo.scatter``, whose
additions of repeated indices come in whatever order the device runs them. It costs
``n * m`` selects per row (m indices): the price of one published order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.numerics import compute_dtype, sum_accumulator
from vkml.dialect.pairwise import add, pairwise_reduce
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import int32


def normalized(b: FunctionBuilder, idx: Value, n: int) -> Value:
    """``idx`` as in-bounds int32 positions along an axis of length ``n`` (see above)."""
    dtype = idx.dtype
    if dtype.kind == "int":
        zero = b.constant(0, dtype, idx.shape)
        wrapped = b.binary("add", idx, b.constant(n, dtype, idx.shape))
        idx = b.select(b.compare("LT", idx, zero), wrapped, idx)
        idx = b.select(b.compare("LT", idx, zero), zero, idx)
    last = b.constant(max(n - 1, 0), dtype, idx.shape)
    idx = b.select(b.compare("GT", idx, last), last, idx)
    return b.convert(idx, int32)


def take_along_axis(b: FunctionBuilder, x: Value, idx: Value, axis: int) -> Value:
    """``x`` gathered along ``axis`` at ``idx`` (x's rank; the other axes as x's)."""
    shape = idx.shape
    if 0 in shape or 0 in x.shape:  # nothing to gather (a gather of an empty x is malformed)
        return b.constant(0, x.dtype, shape)
    if x.shape[axis] == 1:
        # every index names the one element: a broadcast (IREE 3.13's llvm-cpu failed to
        # compile this gather of a strided slice: tests/py/fuzz/test_fuzz_regressions.py)
        return b.broadcast(x, shape)
    position = normalized(b, idx, x.shape[axis])
    columns = [
        b.reshape(position if d == axis else b.iota(shape, d, int32), (*shape, 1))
        for d in range(len(shape))
    ]
    full = (
        columns[0]
        if len(columns) == 1
        else b.concatenate(columns, len(shape), (*shape, len(shape)))
    )
    return b.gather(x, full)


def emit_take_along_axis(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    return take_along_axis(b, xs[0], xs[1], attrs["axis"])


def emit_scatter_add(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    g, idx = xs
    axis, n = attrs["axis"], out.shape[attrs["axis"]]
    acc = compute_dtype(out.dtype) if out.dtype.is_float else sum_accumulator(g.dtype)
    g = b.convert(g, acc)
    position = normalized(b, idx, n)
    # (..., n, m, ...): position i of the output against index j of g
    wide = (*g.shape[:axis], n, *g.shape[axis:])
    lifted = (*g.shape[:axis], 1, *g.shape[axis:])
    spread = b.broadcast(b.reshape(g, lifted), wide)
    names = b.broadcast(b.reshape(position, lifted), wide)
    here = b.compare("EQ", names, b.iota(wide, axis, int32))
    chosen = b.select(here, spread, b.constant(-0.0 if acc.is_float else 0, acc, wide))
    total = pairwise_reduce(b, chosen, [axis + 1], add, -0.0 if acc.is_float else 0)
    if acc.is_float:  # onto zeros, as index_add: a lone -0.0 (or nothing) gives +0.0
        total = b.binary("add", total, b.constant(0.0, acc, total.shape))
    return b.convert(total, out.dtype)


def _starts(b: FunctionBuilder, pos: Value, axis: int, rank: int) -> list[Value]:
    """The start indices of a dynamic slice: ``pos`` along ``axis``, 0 along the others."""
    zero = b.constant(0, pos.dtype)
    return [pos if d == axis else zero for d in range(rank)]


def emit_index_at(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """Position ``pos`` (0-d, in range) of ``axis``, kept as an axis of length 1.

    A position the module reads at run time is a ``stablehlo.gather`` of the whole slice,
    whose index the dispatch reads itself: a ``stablehlo.dynamic_slice`` there made IREE read
    the position back to the host to size its dispatch (a second submission and a host wait,
    per call). A position the module knows (an exported module, a loop body) is a
    ``dynamic_slice``, which IREE folds to a plain slice."""
    x, pos = xs
    axis = attrs["axis"]
    if b.is_constant(pos):
        starts = _starts(b, pos, axis, len(x.shape))
        types = ", ".join(str(s.type) for s in starts)
        names = ", ".join(s.name for s in starts)
        sizes = ", ".join(str(d) for d in out.shape)
        return b.emit(
            f"stablehlo.dynamic_slice {x.name}, {names}, sizes = [{sizes}] : "
            f"({x.type}, {types}) -> {out}",
            out,
            data=[x],
        )
    index = b.reshape(pos, (1,))
    offsets = ", ".join(str(d) for d in range(len(x.shape)))
    sizes = ", ".join(str(d) for d in out.shape)
    row = b.emit(
        f'"stablehlo.gather"({x.name}, {index.name}) {{dimension_numbers = '
        f"#stablehlo.gather<offset_dims = [{offsets}], start_index_map = [{axis}], "
        f"index_vector_dim = 0>, indices_are_sorted = true, "
        f"slice_sizes = array<i64: {sizes}>}} : ({x.type}, {index.type}) -> {out}",
        out,
        data=[x],
    )
    # in a dispatch of its own: IREE 3.13's llvm-cpu failed to translate the gather fused
    # with a slice, a broadcast and a transpose of its result ("unrealized_conversion_cast")
    (stopped,) = b.stop_fusion([row])
    return stopped


def emit_place_at(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``g`` (length 1 along ``axis``) at position ``pos`` of +0.0 zeros of ``out``'s shape:
    the transpose of ``index_at``, as a select on the position along the axis (read in the
    dispatch: a ``dynamic_update_slice`` would read it back to the host)."""
    g, pos = xs
    axis = attrs["axis"]
    here = b.compare("EQ", b.iota(out.shape, axis, pos.dtype), b.broadcast(pos, out.shape))
    spread = b.broadcast(g, out.shape)
    return b.select(here, spread, b.constant(0, out.dtype, out.shape))
