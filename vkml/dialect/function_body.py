"""The body of one function being built: SSA values numbered in emission order, which of them
hold run-time data, splat constants and broadcasts emitted once, nested blocks and loops.

The ops come in layers over it, each a class that uses only what is below it:
``structural.StructuralOps`` (movement, selection, comparison, reduction, contraction),
``run_time_fence.FencedOps`` (arithmetic and casts, behind the run-time fence where a compiler
could rewrite them) and ``builder.FunctionBuilder`` (the public function: its arguments,
results and signature).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from vkml.dialect.types import TensorType, Value, literal
from vkml.dtypes import DType

# an SSA name an op's text reads (``%v3`` of ``%v3#1``, ``%arg0``, ``%fence``)
_OPERAND = re.compile(r"%[A-Za-z0-9_]+")


class Block:
    """A nested block being emitted (``FunctionBody.block``): its arguments, its lines and,
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


class FunctionBody:
    """The lines of one function body and what is known of each value emitted into it."""

    # the caches a nested block copies on entry and restores on leaving (``block``)
    _SCOPED: tuple[str, ...] = ("_splats", "_literal_of", "_spread", "_tables")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count = 0
        # splat constants by (literal, type): each is emitted once, and broadcasting one
        # emits a splat of the wider type instead of a broadcast op
        self._splats: dict[tuple[str, TensorType], Value] = {}
        self._literal_of: dict[str, str] = {}
        # broadcasts of the reads of a table of Python numbers (``number``), each emitted
        # once per shape, as a literal's splat is
        self._spread: dict[tuple[str, tuple[int, ...]], Value] = {}
        # lookup tables by their spelling, each emitted once, as a splat is
        self._tables: dict[tuple[str, TensorType], Value] = {}
        # the values that hold run-time data (see is_static): non-empty arguments and block
        # arguments, and what an op computes from at least one of them
        self._varying: set[str] = set()

    def hint(self, line: str) -> None:
        """Leave ``line`` (a comment, ``vkml.dialect.compile_hints``) in the body, once."""
        if line not in self.lines:
            self.lines.append(line)

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
        inside: the caches named in ``_SCOPED`` are copied on entry and restored on leaving.
        """
        args = []
        for t in types:
            args.append(self._vary(Value(f"%v{self._count}", t)))
            self._count += 1
        block = Block(args)
        saved_lines, saved = self.lines, {name: getattr(self, name) for name in self._SCOPED}
        self.lines = block.lines
        for name, cache in saved.items():
            setattr(self, name, dict(cache))
        try:
            yield block
        finally:
            self.lines = saved_lines
            for name, cache in saved.items():
                setattr(self, name, cache)

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

    def constant(self, value: float | bool, dtype: DType, shape: tuple[int, ...] = ()) -> Value:
        return self._splat(literal(value, dtype), TensorType(tuple(shape), dtype))

    def table(self, values: Sequence[float], dtype: DType) -> Value:
        """A 1-d constant holding ``values`` (a lookup table)."""
        ttype = TensorType((len(values),), dtype)
        spelled = ", ".join(literal(v, dtype) for v in values)
        found = self._tables.get((spelled, ttype))
        if found is None:
            found = self.emit(f"stablehlo.constant dense<[{spelled}]> : {ttype}", ttype)
            self._tables[(spelled, ttype)] = found
        return found

    def _splat(self, spelled: str, ttype: TensorType) -> Value:
        found = self._splats.get((spelled, ttype))
        if found is None:
            found = self.emit(f"stablehlo.constant dense<{spelled}> : {ttype}", ttype)
            self._splats[(spelled, ttype)] = found
            self._literal_of[found.name] = spelled
        return found

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
