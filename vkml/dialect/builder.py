"""FunctionBuilder: appends StableHLO ops to one ``func.func`` and prints the module."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from vkml.dialect.module import global_type
from vkml.dialect.run_time_fence import FENCE_ARG, FENCE_GLOBAL, FencedOps, fenceable
from vkml.dialect.types import TensorType, Value, literal, reflection_attr, string_attr
from vkml.dtypes import DType, float32, int32

STOP_ARG = "%stop"

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
# an SSA name an op's text reads (``%v3`` of ``%v3#1``, ``%arg0``, ``%fence``)
_OPERAND = re.compile(r"%[A-Za-z0-9_]+")


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


class FunctionBuilder(FencedOps):
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
        super().__init__(fence_float_ops)
        self.name = name
        # a last argument, the caller's buffer for the values IREE keeps between dispatches
        # (``iree.abi.transients``; ``vkml.compiler.abi``)
        self.transients = False
        # whether device loops read a stop flag the caller can set mid-call (``stop_flag``):
        # a module compiled for realize, not an exported one
        self.stoppable = False
        self.uses_stop = False
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
        # broadcasts of the reads of a table of Python numbers (``number``), each emitted
        # once per shape, as a literal's splat is
        self._spread: dict[tuple[str, tuple[int, ...]], Value] = {}
        self._arg_attrs: dict[str, str] = {}
        # the values that hold run-time data (see is_static): the fence, non-empty arguments
        # and block arguments, and what an op computes from at least one of them
        self._varying: set[str] = {FENCE_ARG}

    # -- structure ---------------------------------------------------------------------
    def arg(self, ttype: TensorType, name: str | None = None) -> Value:
        """The next argument; ``name`` is what IREE shows for it (``iree.abi.name``)."""
        value = Value(f"%arg{len(self.args)}", ttype)
        self.args.append(value)
        self._vary(value)
        if name is not None:
            self._arg_attrs[value.name] = f" {{iree.abi.name = {string_attr(name)}}}"
        return value

    def stop_flag(self) -> Value:
        """The ``tensor<2xi32>`` argument the caller passes as zeros and sets to ones to end
        every device loop at its next turn (Ctrl-C, ``vkml.runtime.stop``); it comes after
        the arguments and output buffers, before the multiply fence (``vkml.compiler.abi``)."""
        self.uses_stop = True
        return self._vary(Value(STOP_ARG, TensorType((2,), int32)))

    def global_load(self, symbol: str, ttype: TensorType) -> Value:
        """The value of the module's global ``symbol`` (a parameter of an exported module),
        declared as ``vkml.dialect.module.global_type`` says."""
        stored = global_type(ttype)
        value = self._vary(self.emit(f"util.global.load @{symbol} : {stored}", stored))
        return value if stored == ttype else self.bitcast(value, ttype.dtype)

    def output_arg(self, ttype: TensorType, result: int) -> Value:
        """An argument whose buffer receives result number ``result`` (IREE's
        ``iree.abi.output``): the caller allocates the result's storage before the call."""
        value = self.arg(ttype)
        self._arg_attrs[value.name] = f" {{iree.abi.output = {result} : index}}"
        return value

    def emit(self, text: str, result: TensorType, data: Sequence[Value] | None = None) -> Value:
        """Append ``%vN = text`` and return the new value of type ``result``. The value holds
        run-time data (``is_static``) where an operand does, or, given ``data``, where one
        of those does: a position read at run time from a constant is still that constant
        to a compiler (a dynamic slice of zeros is zeros, which a driver folds)."""
        value = Value(f"%v{self._count}", result)
        self._count += 1
        self.lines.append(f"    {value.name} = {text}")
        reads = (
            self._reads_varying(text) if data is None else any(not self.is_static(v) for v in data)
        )
        if reads:
            self._vary(value)
        return value

    def _reads_varying(self, text: str) -> bool:
        """Whether an op's text reads a value that holds run-time data (``is_static``)."""
        return any(name in self._varying for name in _OPERAND.findall(text))

    def _vary(self, v: Value) -> Value:
        """Count ``v`` as run-time data, unless it has no elements (then nothing it holds
        reaches what is computed from it: a sum over it is its init value)."""
        if math.prod(v.shape) > 0:
            self._varying.add(v.name.partition("#")[0])
        return v

    def is_constant(self, v: Value) -> bool:
        """Whether ``v`` is a splat constant this builder emitted."""
        return v.name in self._literal_of

    def is_static(self, v: Value) -> bool:
        """Whether ``v`` is known before the call: a constant, or computed from constants and
        empty values only (a reshape or slice of a splat, a sum over no elements, a product
        with an empty contraction). IREE folds such a value into a literal of the dispatch
        that reads it, where a driver can fold it further, as it would ``v`` itself."""
        return v.name.partition("#")[0] not in self._varying

    @contextmanager
    def block(self, types: Sequence[TensorType]) -> Iterator[Block]:
        """Emit into a nested block (a region of a loop) whose arguments have ``types``.

        Inside, values of the enclosing function are usable (StableHLO's loop regions are not
        isolated from above); what is emitted inside, constants and fences included, stays
        inside: the builder's caches are restored on leaving.
        """
        args = []
        for t in types:
            args.append(self._vary(Value(f"%v{self._count}", t)))
            self._count += 1
        saved = (
            self.lines,
            self._splats,
            self._literal_of,
            self._spread,
            self._fences,
            self._hidden,
            self._opaques,
        )
        block = Block(args)
        self.lines = block.lines
        self._splats, self._literal_of = dict(self._splats), dict(self._literal_of)
        self._spread = dict(self._spread)
        self._fences, self._hidden, self._opaques = (
            dict(self._fences),
            dict(self._hidden),
            dict(self._opaques),
        )
        try:
            yield block
        finally:
            (self.lines, self._splats, self._literal_of, self._spread, self._fences,
             self._hidden, self._opaques) = saved  # fmt: skip

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
        if self._reads_varying(self.lines[-1]):
            self._varying.add(name)
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
        if self.uses_stop:
            params += f"{', ' if params else ''}{STOP_ARG}: tensor<2xi32>"
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
        spread = self._spread.get((v.name, shape))
        if spread is not None:
            return spread
        offset = len(shape) - len(v.shape)
        dims = ", ".join(str(offset + i) for i in range(len(v.shape)))
        out = v.type.with_shape(shape)
        made = self.emit(
            f"stablehlo.broadcast_in_dim {v.name}, dims = [{dims}] : ({v.type}) -> {out}", out
        )
        if (v.name, ()) in self._spread:  # a number read from its table: spread once
            self._spread[(v.name, shape)] = made
        return made

    def number(self, table: Value, index: int) -> Value:
        """Entry ``index`` of a table of Python numbers (an argument), as a 0-d value whose
        broadcasts are emitted once per shape."""
        value = self.element(table, index)
        self._spread[(value.name, ())] = value
        return value

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
