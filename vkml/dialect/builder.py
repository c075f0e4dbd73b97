"""FunctionBuilder: appends StableHLO ops to one ``func.func`` and prints the module."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from vkml.dialect.structural import StructuralOps
from vkml.dialect.types import TensorType, Value, literal, reflection_attr, string_attr
from vkml.dtypes import DType, bool_, float32, int32, int64

# The name of the function argument that carries the multiply fence (always 0 at run time).
FENCE_ARG = "%fence"
# In an exported module the fence is this mutable global instead (``vkml.dialect.module``).
FENCE_GLOBAL = "vkml_fence"
# Float arithmetic whose operands a Vulkan driver could fold (a literal, a - a): ADR 0009.
_FLOAT_ARITH = frozenset({"add", "subtract", "multiply", "divide", "power"})
# Of those, the ones whose result is fenced too: power is a transcendental (log(x ** y) would
# become y * log(x)); multiply always is (ADR 0007).
_FENCED_ARITH = frozenset({"power"})


def _fenceable(dtype: DType) -> bool:
    """Whether ``dtype``'s values can pass through the fence (an xor on 32 or 64 bits)."""
    return dtype.bits >= 32 and dtype.kind != "bool"


class Block:
    """A nested block being emitted (``FunctionBuilder.block``): its arguments, its lines and,
    once ``yield_`` is called, its terminator."""

    def __init__(self, args: list[Value]) -> None:
        self.args = args
        self.lines: list[str] = []

    def yield_(self, values: Sequence[Value]) -> None:
        """End the block, handing ``values`` to the op that owns it."""
        names = ", ".join(v.name for v in values)
        types = ", ".join(str(v.type) for v in values)
        self.lines.append(f'    "stablehlo.return"({names}) : ({types}) -> ()')

    def text(self) -> str:
        params = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        return f"    ^bb0({params}):\n" + "\n".join(self.lines)


class FunctionBuilder(StructuralOps):
    """Builds the text of one public function; SSA names are numbered in emission order.

    With ``fence_float_ops`` (Vulkan, ADR 0009) no float operation's operand is something a
    driver could fold it with: a float literal used by arithmetic is hidden behind the fence,
    the right operand of a subtraction differs from the left one even when both are the same
    value, and the results of float unary ops, powers and casts to or from float pass through
    the fence, as every multiply does (ADR 0007). Without the option (cpu) only multiplies are
    fenced.
    """

    def __init__(
        self, name: str = "main", fence_float_ops: bool = False, fence_global: bool = False
    ) -> None:
        self.name = name
        self.fence_float_ops = fence_float_ops
        # a last argument, the caller's buffer for the values IREE keeps between dispatches
        # (``iree.abi.transients``; ``vkml.compiler.abi``)
        self.transients = False
        # where the multiply fence comes from: the last argument, or (an exported module,
        # ``vkml.dialect.module``) the global FENCE_GLOBAL, loaded first in the body
        self.fence_global = fence_global
        self.args: list[Value] = []
        self.lines: list[str] = []
        self.results: list[Value] = []
        self._result_names: list[str] = []
        self._count = 0
        # splat constants by (literal, type): each is emitted once, and broadcasting one
        # emits a splat of the wider type instead of a broadcast op
        self._splats: dict[tuple[str, TensorType], Value] = {}
        self._literal_of: dict[str, str] = {}
        self._arg_attrs: dict[str, str] = {}
        # the multiply fence (see _unfusable): an i32 argument, added after all others when used
        self.uses_fence = False
        self._fences: dict[tuple[str, tuple[int, ...]], Value] = {}
        self._owned = 0  # own_buffer calls so far: each compares the fence with its own number
        self._int_types = (int32, int64)
        # literals behind the fence, and subtrahends made distinct, by the value they stand for
        self._hidden: dict[str, Value] = {}
        self._distinct: dict[str, Value] = {}

    # -- structure ---------------------------------------------------------------------
    def arg(self, ttype: TensorType, name: str | None = None) -> Value:
        """The next argument; ``name`` is what IREE shows for it (``iree.abi.name``)."""
        value = Value(f"%arg{len(self.args)}", ttype)
        self.args.append(value)
        if name is not None:
            self._arg_attrs[value.name] = f" {{iree.abi.name = {string_attr(name)}}}"
        return value

    def global_load(self, symbol: str, ttype: TensorType) -> Value:
        """The value of the module's global ``symbol`` (a parameter of an exported module)."""
        return self.emit(f"util.global.load @{symbol} : {ttype}", ttype)

    def output_arg(self, ttype: TensorType, result: int) -> Value:
        """An argument whose buffer receives result number ``result`` (IREE's
        ``iree.abi.output``): the caller allocates the result's storage before the call."""
        value = self.arg(ttype)
        self._arg_attrs[value.name] = f" {{iree.abi.output = {result} : index}}"
        return value

    def emit(self, text: str, result: TensorType) -> Value:
        """Append ``%vN = text`` and return the new value of type ``result``."""
        value = Value(f"%v{self._count}", result)
        self._count += 1
        self.lines.append(f"    {value.name} = {text}")
        return value

    def is_constant(self, v: Value) -> bool:
        """Whether ``v`` is a splat constant this builder emitted."""
        return v.name in self._literal_of

    @contextmanager
    def block(self, types: Sequence[TensorType]) -> Iterator[Block]:
        """Emit into a nested block (a region of a loop) whose arguments have ``types``.

        Inside, values of the enclosing function are usable (StableHLO's loop regions are not
        isolated from above); what is emitted inside, constants and fences included, stays
        inside: the builder's caches are restored on leaving.
        """
        args = []
        for t in types:
            args.append(Value(f"%v{self._count}", t))
            self._count += 1
        saved = (
            self.lines,
            self._splats,
            self._literal_of,
            self._fences,
            self._hidden,
            self._distinct,
        )
        block = Block(args)
        self.lines = block.lines
        self._splats, self._literal_of = dict(self._splats), dict(self._literal_of)
        self._fences, self._hidden, self._distinct = (
            dict(self._fences),
            dict(self._hidden),
            dict(self._distinct),
        )
        try:
            yield block
        finally:
            (self.lines, self._splats, self._literal_of, self._fences, self._hidden,
             self._distinct) = saved  # fmt: skip

    def while_loop(self, init: Sequence[Value], cond: Block, body: Block) -> list[Value]:
        """``stablehlo.while`` over ``init``: ``cond`` returns one ``i1``, ``body`` the next
        values; one value per carried value."""
        types = ", ".join(str(v.type) for v in init)
        name = f"%v{self._count}"
        self._count += 1
        arity = f":{len(init)}" if len(init) > 1 else ""
        operands = ", ".join(v.name for v in init)
        self.lines.append(
            f'    {name}{arity} = "stablehlo.while"({operands}) ({{\n{cond.text()}\n    }}, {{\n'
            f"{body.text()}\n    }}) : ({types}) -> ({types})"
        )
        if len(init) == 1:
            return [Value(name, init[0].type)]
        return [Value(f"{name}#{i}", v.type) for i, v in enumerate(init)]

    def ret(self, values: Sequence[Value], names: Sequence[str] = ()) -> None:
        """Return ``values``; ``names`` (one per value) is what IREE shows for them."""
        self.results = list(values)
        self._result_names = list(names)

    def module_text(self) -> str:
        """The whole module: one public function taking the args and returning the results."""
        return f"module {{\n{self.function_text()}\n}}\n"

    def function_text(self, reflection: Mapping[str, str] | None = None) -> str:
        """The public function alone (``reflection``: string metadata IREE keeps with it)."""
        params = ", ".join(
            f"{a.name}: {a.type}{self._arg_attrs.get(a.name, '')}" for a in self.args
        )
        lines = self.lines
        if self.uses_fence and self.fence_global:
            load = f"    {FENCE_ARG} = util.global.load @{FENCE_GLOBAL} : tensor<i32>"
            lines = [load, *lines]
        elif self.uses_fence:
            params += f"{', ' if params else ''}{FENCE_ARG}: tensor<i32>"
        if self.transients:
            params += f"{', ' if params else ''}%transients: !hal.buffer {{iree.abi.transients}}"
        labels: list[str | None] = [*self._result_names] or [None] * len(self.results)
        rtypes = ", ".join(
            f"{r.type}" + ("" if n is None else f" {{iree.abi.name = {string_attr(n)}}}")
            for r, n in zip(self.results, labels)
        )
        values = ", ".join(r.name for r in self.results)
        types = ", ".join(str(r.type) for r in self.results)
        body = "\n".join(lines)
        ret = f"    return {values} : {types}" if self.results else "    return"
        attributes = "" if reflection is None else f" attributes {{{reflection_attr(reflection)}}}"
        return (
            f"  func.func @{self.name}({params}) -> ({rtypes}){attributes} {{\n{body}\n{ret}\n  }}"
        )

    # -- small helpers every emitter uses -------------------------------------------------
    def constant(self, value: float | bool, dtype: DType, shape: tuple[int, ...] = ()) -> Value:
        return self._splat(literal(value, dtype), TensorType(tuple(shape), dtype))

    def _splat(self, spelled: str, ttype: TensorType) -> Value:
        found = self._splats.get((spelled, ttype))
        if found is None:
            found = self.emit(f"stablehlo.constant dense<{spelled}> : {ttype}", ttype)
            self._splats[(spelled, ttype)] = found
            self._literal_of[found.name] = spelled
        return found

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

    def broadcast(self, v: Value, shape: tuple[int, ...]) -> Value:
        """NumPy broadcasting of ``v`` to ``shape`` (trailing dimensions aligned)."""
        shape = tuple(shape)
        if v.shape == shape:
            return v
        spelled = self._literal_of.get(v.name)
        if spelled is not None:
            return self._splat(spelled, v.type.with_shape(shape))
        offset = len(shape) - len(v.shape)
        dims = ", ".join(str(offset + i) for i in range(len(v.shape)))
        out = v.type.with_shape(shape)
        return self.emit(
            f"stablehlo.broadcast_in_dim {v.name}, dims = [{dims}] : ({v.type}) -> {out}", out
        )

    def prepare(self, v: Value, shape: tuple[int, ...], dtype: DType) -> Value:
        return self.broadcast(self.convert(v, dtype), shape)

    def unary(self, name: str, v: Value) -> Value:
        if name == "negate" and self.fence_float_ops and _fenceable(v.dtype) and v.dtype.is_float:
            return self._flip_sign(v)
        out = self.emit(f"stablehlo.{name} {v.name} : {v.type}", v.type)
        return self._fenced(out) if v.dtype.is_float else out

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

    def chlo_unary(self, name: str, v: Value) -> Value:
        """A CHLO elementwise op (``erf``, ``erfc``), which StableHLO does not have."""
        out = self.emit(f"chlo.{name} {v.name} : {v.type} -> {v.type}", v.type)
        return self._fenced(out) if v.dtype.is_float else out

    def binary(self, name: str, a: Value, b: Value) -> Value:
        arith = self.fence_float_ops and name in _FLOAT_ARITH and a.dtype.is_float
        if arith:  # ADR 0009: no literal for the driver to fold, and never a - a
            a = self._hide(a)
            b = self._made_distinct(b) if name == "subtract" else self._hide(b)
        out = self.emit(f"stablehlo.{name} {a.name}, {b.name} : {a.type}", a.type)
        if name == "multiply" and a.dtype.is_float and a.dtype.bits >= 32:
            return self._unfusable(out)
        return self._fenced(out) if arith and name in _FENCED_ARITH else out

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
        if self.fence_float_ops and _fenceable(v.dtype):
            return self._unfusable(v)
        return v

    def _hide(self, v: Value) -> Value:
        """A float literal through the fence, so that ``x * 0.0``, ``x + 0.0`` and
        ``1.0 / x`` stay operations (folded, they lose NaN, inf and -0.0); else ``v``."""
        if not self.is_constant(v) or not _fenceable(v.dtype):
            return v
        found = self._hidden.get(v.name)
        if found is None:
            found = self._hidden[v.name] = self._unfusable(v)
        return found

    def _made_distinct(self, v: Value) -> Value:
        """``v`` as ``bits | fence``: a value no other operand can be, even after CSE.

        ``a - a`` folds to 0 (wrong for inf and NaN) once a driver sees the same value on
        both sides, which happens for ``x - x`` and for two equal subexpressions IREE merged.
        ``or`` rather than the xor fence: ``(a ^ fence) ^ fence`` cancels back to ``a``.
        """
        if not _fenceable(v.dtype):
            return v
        found = self._distinct.get(v.name)
        if found is None:
            bits_type = self._bits_type(v.dtype)
            bits = self.bitcast(v, bits_type)
            fence = self._fence_value(bits_type, v.shape)
            mixed = self.emit(f"stablehlo.or {bits.name}, {fence.name} : {bits.type}", bits.type)
            found = self._distinct[v.name] = self.bitcast(mixed, v.dtype)
        return found

    def _fence_value(self, dtype: DType, shape: tuple[int, ...]) -> Value:
        key = (dtype.name, shape)
        found = self._fences.get(key)
        if found is None:
            scalar = Value(FENCE_ARG, TensorType((), int32))
            self.uses_fence = True
            if dtype is not int32:
                scalar = self.emit(
                    f"stablehlo.convert {scalar.name} : (tensor<i32>) -> tensor<{dtype.mlir}>",
                    TensorType((), dtype),
                )
            found = self._fences[key] = self.broadcast(scalar, shape)
        return found
