"""The run-time zero: an ``i32`` the caller always passes as 0 (``FENCE_ARG``) that no compiler
can prove is 0, and what vkml hides behind it.

A value xor the fence is the value, yet IREE and a driver see an unknown: a float multiply
behind it is never fused into an FMA (ADR 0007), a literal behind it is never folded with
the op that reads it, ``a - a`` with its right side mixed with it never cancels (ADR 0009),
and no polynomial expansion of ``exp`` or ``pow`` sees a NaN it could fold (ADR 0016).
``FencedOps`` emits those ops; ``FunctionBuilder`` decides where they go.
"""

from __future__ import annotations

from vkml.dialect.structural import StructuralOps
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import DType, bool_, int32, int64

# The name of the function argument that carries the fence (always 0 at run time).
FENCE_ARG = "%fence"
# In an exported module the fence is this mutable global instead (``vkml.dialect.module``).
FENCE_GLOBAL = "vkml_fence"


def fenceable(dtype: DType) -> bool:
    """Whether ``dtype``'s values can pass through the fence (an xor on 32 or 64 bits)."""
    return dtype.bits >= 32 and dtype.kind != "bool"


class FencedOps(StructuralOps):
    """The ops that pass values through the fence, over the structural ops."""

    def __init__(self, fence_float_ops: bool) -> None:
        self.fence_float_ops = fence_float_ops
        # the fence is used: an i32 argument (or global) added after all others
        self.uses_fence = False
        self._fences: dict[tuple[str, tuple[int, ...], bool], Value] = {}
        self._owned = 0  # own_buffer calls so far: each compares the fence with its own number
        self._int_types = (int32, int64)
        # literals behind the fence, and opaque copies (_opaque), by the value they stand for
        self._hidden: dict[str, Value] = {}
        self._opaques: dict[str, Value] = {}

    def constant(self, value: float | bool, dtype: DType, shape: tuple[int, ...] = ()) -> Value:
        raise NotImplementedError

    def broadcast(self, v: Value, shape: tuple[int, ...]) -> Value:
        raise NotImplementedError

    def is_static(self, v: Value) -> bool:
        raise NotImplementedError

    def _bits_type(self, dtype: DType) -> DType:
        """The integer dtype holding a 32- or 64-bit float's bits."""
        return self._int_types[0] if dtype.bits == 32 else self._int_types[1]

    def _flip_sign(self, v: Value) -> Value:
        """``-v`` as an xor of the sign bit (ADR 0009): exactly IEEE negation, and no float
        negate for a driver to push into the op that made ``v`` (NVIDIA's rewrote
        ``-(c - m)`` as ``m - c``, which is +0.0 where the negation is -0.0)."""
        bits_type = self._bits_type(v.dtype)
        bits = self.bitcast(v, bits_type)
        sign = self.constant(-(1 << (v.dtype.bits - 1)), bits_type, v.shape)
        flipped = self.emit(f"stablehlo.xor {bits.name}, {sign.name} : {bits.type}", bits.type)
        return self.bitcast(flipped, v.dtype)

    def _unfusable(self, v: Value) -> Value:
        """``v`` unchanged, through ``bits ^ fence``, where ``fence`` is an argument the
        caller passes as 0.

        IREE's llvm-cpu marks every float multiply and add ``contract``, so LLVM fuses a
        multiply feeding an add into one FMA, which rounds once where the reference rounds
        twice. The compiler cannot prove the fence is 0, so no multiply result reaches an add
        directly and nothing is fused; the xor costs one integer op per element. Integers
        (the casts of ADR 0009) take the xor directly.
        """
        if not v.dtype.is_float:
            fence = self._fence_value(v.dtype, v.shape)
            return self.emit(f"stablehlo.xor {v.name}, {fence.name} : {v.type}", v.type)
        bits_type = self._bits_type(v.dtype)
        bits = self.bitcast(v, bits_type)
        fence = self._fence_value(bits_type, v.shape)
        mixed = self.emit(f"stablehlo.xor {bits.name}, {fence.name} : {bits.type}", bits.type)
        return self.bitcast(mixed, v.dtype)

    def own_buffer(self, v: Value) -> Value:
        """``v`` again, in a buffer of its own: ``select(fence == k, 0, v)`` with a ``k`` no
        other call uses (1, 2, ...), so IREE can neither prove it equal to ``v`` nor merge two
        of them (the fence is 0 at run time). Any dtype."""
        self._owned += 1
        fence = Value(FENCE_ARG, TensorType((), int32))
        self.uses_fence = True
        k = self.constant(self._owned, int32)
        never = self.emit(
            f"stablehlo.compare EQ, {fence.name}, {k.name}, SIGNED : "
            f"(tensor<i32>, tensor<i32>) -> tensor<i1>",
            TensorType((), bool_),
        )
        never = self.broadcast(never, v.shape)
        zero = self.constant(False if v.dtype.kind == "bool" else 0, v.dtype, v.shape)
        return self.emit(
            f"stablehlo.select {never.name}, {zero.name}, {v.name} : {never.type}, {v.type}",
            v.type,
        )

    def _fenced(self, v: Value) -> Value:
        """``v`` through the fence when this builder fences float ops (ADR 0009).

        A Vulkan driver may treat float arithmetic as real arithmetic (SPIR-V from IREE
        carries no ``NoContraction``): Mesa rewrites ``sqrt(x) * sqrt(x)`` into ``abs(x)``,
        ``x + (-x)`` into 0 and ``int(float(i))`` into ``i``. Each rewrite needs to see the op
        that produced an operand; behind the fence it sees an xor with an unknown.
        """
        if self.fence_float_ops and fenceable(v.dtype):
            return self._unfusable(v)
        return v

    def _hide(self, v: Value) -> Value:
        """A float literal, or any value IREE could fold into one (``is_static``), through
        the fence, so that ``x * 0.0``, ``x + 0.0`` and ``1.0 / x`` stay operations (folded,
        they lose NaN, inf and -0.0); else ``v``."""
        if not self.is_static(v) or not fenceable(v.dtype):
            return v
        found = self._hidden.get(v.name)
        if found is None:
            found = self._hidden[v.name] = self._unfusable(v)
        return found

    def _opaque(self, v: Value) -> Value:
        """``v`` as ``bits ^ (fence << 1)``: a value the compiler knows nothing of, even after
        CSE and constant folding.

        ``a - a`` folds to 0 (wrong for inf and NaN) once a driver sees the same value on
        both sides, which happens for ``x - x`` and for two equal subexpressions IREE merged;
        and LLVM folded IREE's polynomial ``exp`` of a NaN it knew (``x - nan``) to 0 (ADR
        0016). Not the plain fence: ``(a ^ fence) ^ fence`` cancels back to ``a``, and
        ``bits | fence`` keeps the bits LLVM knows of ``a``, enough to know a NaN a NaN.
        """
        if not fenceable(v.dtype):
            return v
        found = self._opaques.get(v.name)
        if found is None:
            bits_type = self._bits_type(v.dtype)
            bits = self.bitcast(v, bits_type)
            fence = self._fence_value(bits_type, v.shape, shifted=True)
            mixed = self.emit(f"stablehlo.xor {bits.name}, {fence.name} : {bits.type}", bits.type)
            found = self._opaques[v.name] = self.bitcast(mixed, v.dtype)
        return found

    def _fence_value(self, dtype: DType, shape: tuple[int, ...], shifted: bool = False) -> Value:
        """The fence as ``dtype``, broadcast to ``shape``; ``shifted``: ``fence << 1``, 0 as
        well, which an xor with the fence itself does not cancel."""
        key = (dtype.name, shape, shifted)
        found = self._fences.get(key)
        if found is None:
            scalar = Value(FENCE_ARG, TensorType((), int32))
            self.uses_fence = True
            if dtype is not int32:
                scalar = self.emit(
                    f"stablehlo.convert {scalar.name} : (tensor<i32>) -> tensor<{dtype.mlir}>",
                    TensorType((), dtype),
                )
            if shifted:
                one = self.constant(1, dtype)
                scalar = self.emit(
                    f"stablehlo.shift_left {scalar.name}, {one.name} : {scalar.type}", scalar.type
                )
            found = self._fences[key] = self.broadcast(scalar, shape)
        return found
