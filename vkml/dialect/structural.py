"""The ops a function builder emits that move, select or compare values without float
arithmetic: nothing here is fenced (ADR 0007, 0009), since no compiler or driver rewrites
them into something that rounds differently. They build on ``FunctionBody``; ``FencedOps`` builds on them."""

from __future__ import annotations

from collections.abc import Sequence

from vkml.dialect.function_body import FunctionBody
from vkml.dialect.fusion_stops import FUSION_STOP, SIGNLESS
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import DType, bool_, int32, int64

_SIGNED = {32: int32, 64: int64}
_COMPARE_TYPE = {"bool": "UNSIGNED", "int": "SIGNED", "uint": "UNSIGNED", "float": "FLOAT"}


class StructuralOps(FunctionBody):
    """StableHLO data movement, selection, comparison, reduction and contraction, each
    appended to the function being built through ``emit``."""

    def barrier(self, values: Sequence[Value]) -> list[Value]:
        """Pass each of ``values`` through a ``stablehlo.optimization_barrier`` of its own:
        IREE materializes each in a buffer (and waits on the host there: ``stop_fusion`` stops
        fusion alone, at no run-time cost). (One barrier of several scalars, read out of
        order, IREE 3.13 miscompiled.)"""
        return [self.emit(f"stablehlo.optimization_barrier {v.name} : {v.type}", v.type)
                for v in values]  # fmt: skip

    def stop_fusion(self, values: Sequence[Value]) -> list[Value]:
        """Pass each of ``values`` through a fusion stop (``vkml.dialect.fusion_stops``): IREE
        fuses nothing across one, so it bounds the dispatches formed on either side, and
        both sides stay in one queue submission. An unsigned value crosses as its signless
        bits (IREE 3.13 cannot legalize a fusion stop of ``ui32``)."""
        out = []
        for v in values:
            signless = SIGNLESS.get(v.dtype)
            bits = v if signless is None else self.bitcast(v, signless)
            stopped = self.emit(
                f"{FUSION_STOP} {bits.name} : {bits.type} -> {bits.type}", bits.type
            )
            out.append(stopped if signless is None else self.bitcast(stopped, v.dtype))
        return out

    def compare(self, direction: str, a: Value, b: Value) -> Value:
        out = a.type.with_dtype(bool_)
        kind = _COMPARE_TYPE[a.dtype.kind]
        return self.emit(
            f"stablehlo.compare {direction}, {a.name}, {b.name}, {kind} : "
            f"({a.type}, {b.type}) -> {out}",
            out,
        )

    def select(self, pred: Value, on_true: Value, on_false: Value) -> Value:
        return self.emit(
            f"stablehlo.select {pred.name}, {on_true.name}, {on_false.name} : "
            f"{pred.type}, {on_true.type}",
            on_true.type,
        )

    def zero_extend(self, v: Value) -> Value:
        """A uint32 ``v`` as int64 of the same value, spelled as a sign extension and a mask:
        IREE 3.13's llvm-cpu folded ``convert : ui32 -> i64`` (and ``-> f64``) into the
        matmul that read it as a *signed* widening, so 4294967295 became -1."""
        wide_type = v.type.with_dtype(int64)
        signed = self.emit(
            f"stablehlo.convert {self.bitcast(v, int32).name} : "
            f"({v.type.with_dtype(int32)}) -> {wide_type}",
            wide_type,
        )
        low = self.emit(f"stablehlo.constant dense<4294967295> : {wide_type}", wide_type)
        return self.emit(f"stablehlo.and {signed.name}, {low.name} : {wide_type}", wide_type)

    def reshape(self, v: Value, shape: tuple[int, ...]) -> Value:
        shape = tuple(shape)
        if v.shape == shape:
            return v
        out = v.type.with_shape(shape)
        return self.emit(f"stablehlo.reshape {v.name} : ({v.type}) -> {out}", out)

    def transpose(self, v: Value, perm: Sequence[int]) -> Value:
        perm = tuple(perm)
        if perm == tuple(range(len(perm))):
            return v
        out = v.type.with_shape(tuple(v.shape[p] for p in perm))
        dims = ", ".join(map(str, perm))
        return self.emit(
            f"stablehlo.transpose {v.name}, dims = [{dims}] : ({v.type}) -> {out}", out
        )

    def slice(
        self, v: Value, start: Sequence[int], limit: Sequence[int], strides: Sequence[int]
    ) -> Value:
        shape = tuple(max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(start, limit, strides))
        if shape == v.shape:
            return v
        out = v.type.with_shape(shape)
        spec = ", ".join(f"{lo}:{hi}:{st}" for lo, hi, st in zip(start, limit, strides))
        return self.emit(f"stablehlo.slice {v.name} [{spec}] : ({v.type}) -> {out}", out)

    def element(self, v: Value, index: int) -> Value:
        """Element ``index`` of a 1-d ``v``, as a 0-d value."""
        return self.reshape(self.slice(v, [index], [index + 1], [1]), ())

    def number(self, table: Value, index: int) -> Value:
        """Entry ``index`` of a table of Python numbers (an argument), as a 0-d value whose
        broadcasts are emitted once per shape."""
        value = self.element(table, index)
        self._spread[(value.name, ())] = value
        return value

    def bitcast(self, v: Value, dtype: DType) -> Value:
        out = v.type.with_dtype(dtype)
        return self.emit(f"stablehlo.bitcast_convert {v.name} : ({v.type}) -> {out}", out)

    def reverse(self, v: Value, dims: Sequence[int]) -> Value:
        if not dims:
            return v
        d = ", ".join(map(str, dims))
        if v.dtype.kind == "uint":
            # IREE 3.13 cannot legalize stablehlo.reverse on unsigned types: move the bits
            # as the signed type of the same width instead
            signed = self.bitcast(v, _SIGNED[v.dtype.bits])
            flipped = self.emit(
                f"stablehlo.reverse {signed.name}, dims = [{d}] : {signed.type}", signed.type
            )
            return self.bitcast(flipped, v.dtype)
        return self.emit(f"stablehlo.reverse {v.name}, dims = [{d}] : {v.type}", v.type)

    def concatenate(self, values: Sequence[Value], dim: int, shape: tuple[int, ...]) -> Value:
        if len(values) == 1:
            return values[0]
        out = values[0].type.with_shape(shape)
        names = ", ".join(v.name for v in values)
        types = ", ".join(str(v.type) for v in values)
        return self.emit(f"stablehlo.concatenate {names}, dim = {dim} : ({types}) -> {out}", out)

    def pad(
        self, v: Value, fill: Value, low: Sequence[int], high: Sequence[int],
        interior: Sequence[int] | None = None,
    ) -> Value:  # fmt: skip
        """``v`` with ``fill`` added before (``low``), after (``high``) and between
        (``interior``) the elements of each axis; a negative ``low`` or ``high`` drops
        elements."""
        inner = tuple(interior) if interior is not None else (0,) * len(v.shape)
        shape = tuple(
            s + lo + hi + max(s - 1, 0) * i for s, lo, hi, i in zip(v.shape, low, high, inner)
        )
        if not any(low) and not any(high) and not any(inner):
            return v
        out = v.type.with_shape(shape)
        return self.emit(
            f"stablehlo.pad {v.name}, {fill.name}, low = [{', '.join(map(str, low))}], "
            f"high = [{', '.join(map(str, high))}], interior = [{', '.join(map(str, inner))}] : "
            f"({v.type}, {fill.type}) -> {out}",
            out,
        )

    def iota(self, shape: tuple[int, ...], dim: int, dtype: DType) -> Value:
        out = TensorType(tuple(shape), dtype)
        return self.emit(f"stablehlo.iota dim = {dim} : {out}", out)

    def gather(self, v: Value, indices: Value) -> Value:
        """``v[indices[..., :]]``: one element of ``v`` per row of the last axis of
        ``indices`` (a full index of ``v``, in bounds); the result has ``indices``' leading
        shape."""
        r = len(v.shape)
        out = v.type.with_shape(indices.shape[:-1])
        dims = ", ".join(map(str, range(r)))
        ones = ", ".join("1" for _ in range(r))
        return self.emit(
            f'"stablehlo.gather"({v.name}, {indices.name}) {{dimension_numbers = '
            f"#stablehlo.gather<collapsed_slice_dims = [{dims}], start_index_map = [{dims}], "
            f"index_vector_dim = {r}>, indices_are_sorted = false, "
            f"slice_sizes = array<i64: {ones}>}} : ({v.type}, {indices.type}) -> {out}",
            out,
        )

    def reduce(self, v: Value, dims: Sequence[int], combiner: str, init: Value) -> Value:
        """``stablehlo.reduce`` of ``v`` over ``dims`` with a one-op combiner body."""
        shape = tuple(s for i, s in enumerate(v.shape) if i not in dims)
        out = v.type.with_shape(shape)
        d = ", ".join(map(str, dims))
        return self.emit(
            f"stablehlo.reduce({v.name} init: {init.name}) applies stablehlo.{combiner} "
            f"across dimensions = [{d}] : ({v.type}, {init.type}) -> {out}",
            out,
        )

    def dot_general(self, a: Value, b: Value, batch: int, out: TensorType) -> Value:
        """Batched matmul: ``a`` is (*batch, m, k), ``b`` is (*batch, k, n)."""
        bd = ", ".join(map(str, range(batch)))
        return self.emit(
            f"stablehlo.dot_general {a.name}, {b.name}, batching_dims = [{bd}] x [{bd}], "
            f"contracting_dims = [{batch + 1}] x [{batch}], precision = [HIGHEST, HIGHEST] : "
            f"({a.type}, {b.type}) -> {out}",
            out,
        )
