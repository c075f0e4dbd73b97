"""The run-time zero: an ``i32`` the caller always passes as 0 (``FENCE_ARG``) that no compiler
can prove is 0, and what vkml hides behind it.

A value xor the fence is the value, yet IREE and a driver see an unknown: a float multiply
behind it is never fused into an FMA (ADR 0007), a literal behind it is never folded with
the op that reads it, ``a - a`` with its right side mixed with it never cancels (ADR 0009),
and no polynomial expansion of ``exp`` or ``pow`` sees a NaN it could fold (ADR 0016).
``FencedOps`` emits those ops, and the arithmetic and casts that pass through them: with
``fence_float_ops`` (Vulkan, ADR 0009) no float operation's operand is something a driver
could fold it with; without it (cpu) only multiplies are fenced.
"""

from __future__ import annotations

from vkml.dialect.structural import StructuralOps
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import DType, bool_, float32, int32, int64

# The name of the function argument that carries the fence (always 0 at run time).
FENCE_ARG = "%fence"
# In an exported module the fence is this mutable global instead (``vkml.dialect.exported_module``).
FENCE_GLOBAL = "vkml_fence"

# Float arithmetic whose operands a Vulkan driver could fold (a literal, a - a): ADR 0009.
_FLOAT_ARITH = frozenset({"add", "subtract", "multiply", "divide", "power"})
# Of those, the ones whose result is fenced too: power is a transcendental (log(x ** y) would
# become y * log(x)); multiply always is (ADR 0007).
_FENCED_ARITH = frozenset({"power"})
# Float ops that are one exact instruction on every target. IREE expands the others (exp,
# sine, logistic, pow, ...) into polynomial code whose float -> integer steps are poison for
# NaN, and LLVM folded the expansion of a NaN it knew to 0: their operands are opaque (ADR 0016).
_ONE_INSTRUCTION = frozenset({
    "abs", "negate", "floor", "ceil", "round_nearest_even", "round_nearest_afz", "sign",
    "sqrt", "not", "count_leading_zeros", "is_finite",
})  # fmt: skip
_EXPANDED_BINARY = frozenset({"power", "atan2"})


def fenceable(dtype: DType) -> bool:
    """Whether ``dtype``'s values can pass through the fence (an xor on 32 or 64 bits)."""
    return dtype.bits >= 32 and dtype.kind != "bool"


class FencedOps(StructuralOps):
    """The ops that pass values through the fence, and the arithmetic and casts built on
    them, over the structural ops."""

    _SCOPED = (*StructuralOps._SCOPED, "_fences", "_hidden", "_opaques")

    def __init__(self, fence_float_ops: bool) -> None:
        super().__init__()
        self._varying.add(FENCE_ARG)  # the fence is run-time data, as an argument is
        self.fence_float_ops = fence_float_ops
        # the fence is used: an i32 argument (or global) added after all others
        self.uses_fence = False
        self._fences: dict[tuple[str, tuple[int, ...], bool], Value] = {}
        self._owned = 0  # own_buffer calls so far: each compares the fence with its own number
        self._int_types = (int32, int64)
        # literals behind the fence, and opaque copies (_opaque), by the value they stand for
        self._hidden: dict[str, Value] = {}
        self._opaques: dict[str, Value] = {}

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

    # -- arithmetic and casts, fenced where a compiler could rewrite them -----------------
    def convert(self, v: Value, dtype: DType) -> Value:
        if v.dtype is dtype:
            return v
        out = v.type.with_dtype(dtype)
        if dtype.kind == "bool":  # nonzero is true, as NumPy and PyTorch cast
            zero = self.broadcast(self.constant(0, v.dtype), v.shape)
            return self.compare("NE", v, zero)
        if v.dtype.is_integer and dtype.is_float and dtype.bits == 16:
            # integers reach 16-bit floats through float32 (IREE's SPIR-V backend cannot
            # convert i32 -> bf16 directly); exact for every integer a float16 can hold
            v = self.convert(v, float32)
        if v.dtype.name == "uint32" and dtype.bits == 64:  # IREE read it in a matmul as signed
            return self.convert(self.zero_extend(v), dtype)
        if v.dtype.kind == "bool":
            # a select: IREE's llvm-cpu made (float(b) * y) (b ? y : 0), losing 0 * inf = NaN,
            # and a matmul read a converted bool as a signed i1 (true = -1) on Vulkan
            one = self.broadcast(self.constant(1, dtype), v.shape)
            return self.select(v, one, self.broadcast(self.constant(0, dtype), v.shape))
        converted = self.emit(f"stablehlo.convert {v.name} : ({v.type}) -> {out}", out)
        # a driver cancels float -> int -> float (into trunc, -0.0 kept) and int -> float -> int
        return self._fenced(converted) if v.dtype.is_float or dtype.is_float else converted

    def prepare(self, v: Value, shape: tuple[int, ...], dtype: DType) -> Value:
        return self.broadcast(self.convert(v, dtype), shape)

    def unary(self, name: str, v: Value) -> Value:
        if name == "negate" and self.fence_float_ops and fenceable(v.dtype) and v.dtype.is_float:
            return self._flip_sign(v)
        if v.dtype.is_float and name not in _ONE_INSTRUCTION:
            v = self._opaque(v)
        out = self.emit(f"stablehlo.{name} {v.name} : {v.type}", v.type)
        return self._fenced(out) if v.dtype.is_float else out

    def chlo_unary(self, name: str, v: Value) -> Value:
        """A CHLO elementwise op (``erf``, ``erfc``), which StableHLO does not have."""
        if v.dtype.is_float:
            v = self._opaque(v)
        out = self.emit(f"chlo.{name} {v.name} : {v.type} -> {v.type}", v.type)
        return self._fenced(out) if v.dtype.is_float else out

    def binary(self, name: str, a: Value, b: Value) -> Value:
        arith = self.fence_float_ops and name in _FLOAT_ARITH and a.dtype.is_float
        if name in _EXPANDED_BINARY and a.dtype.is_float:  # ADR 0016: no known operand
            a, b = self._opaque(a), self._opaque(b)
        elif arith:  # ADR 0009: no literal for the driver to fold, and never a - a
            a = self._hide(a)
            b = self._opaque(b) if name == "subtract" else self._hide(b)
        out = self.emit(f"stablehlo.{name} {a.name}, {b.name} : {a.type}", a.type)
        if name == "multiply" and a.dtype.is_float and a.dtype.bits >= 32:
            return self._unfusable(out)
        return self._fenced(out) if arith and name in _FENCED_ARITH else out
