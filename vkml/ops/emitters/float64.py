"""The compiled devices' float64 functions: ``vkml.ops.float64``'s algorithms run on MLIR
values, the same operations in the order the reference performs them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.compile_hints import WIDE_FUSION
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import float32, float64, int64
from vkml.ops.emitters.common import Emitter
from vkml.ops.float64 import FUNCTIONS

_BINARY = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "divide",
           "%": "remainder", "&": "and", "|": "or", "<<": "shift_left",
           ">>": "shift_right_arithmetic"}  # fmt: skip


class Num:
    """An MLIR value with Python's operators, as ``vkml.ops.float64.backend`` describes; a
    Python number beside it becomes a constant of its dtype."""

    __slots__ = ("b", "v")

    def __init__(self, b: FunctionBuilder, v: Value) -> None:
        self.b, self.v = b, v

    def _value(self, other: Any) -> Value:
        if isinstance(other, Num):
            return other.v
        return self.b.constant(other, self.v.dtype, self.v.shape)

    def _op(self, symbol: str, other: Any, reflected: bool = False) -> Num:
        a, c = self.v, self._value(other)
        if reflected:
            a, c = c, a
        return Num(self.b, self.b.binary(_BINARY[symbol], a, c))

    def _compare(self, direction: str, other: Any) -> Num:
        return Num(self.b, self.b.compare(direction, self.v, self._value(other)))

    # fmt: off
    def __add__(self, o: Any) -> Num: return self._op("+", o)
    def __radd__(self, o: Any) -> Num: return self._op("+", o, True)
    def __sub__(self, o: Any) -> Num: return self._op("-", o)
    def __rsub__(self, o: Any) -> Num: return self._op("-", o, True)
    def __mul__(self, o: Any) -> Num: return self._op("*", o)
    def __rmul__(self, o: Any) -> Num: return self._op("*", o, True)
    def __truediv__(self, o: Any) -> Num: return self._op("/", o)
    def __rtruediv__(self, o: Any) -> Num: return self._op("/", o, True)
    def __floordiv__(self, o: Any) -> Num: return self._op("//", o)
    def __mod__(self, o: Any) -> Num: return self._op("%", o)
    def __and__(self, o: Any) -> Num: return self._op("&", o)
    def __or__(self, o: Any) -> Num: return self._op("|", o)
    def __lshift__(self, o: Any) -> Num: return self._op("<<", o)
    def __rlshift__(self, o: Any) -> Num: return self._op("<<", o, True)
    def __rshift__(self, o: Any) -> Num: return self._op(">>", o)
    def __rrshift__(self, o: Any) -> Num: return self._op(">>", o, True)
    def __neg__(self) -> Num: return Num(self.b, self.b.unary("negate", self.v))
    def __invert__(self) -> Num: return Num(self.b, self.b.unary("not", self.v))
    def __lt__(self, o: Any) -> Num: return self._compare("LT", o)
    def __le__(self, o: Any) -> Num: return self._compare("LE", o)
    def __gt__(self, o: Any) -> Num: return self._compare("GT", o)
    def __ge__(self, o: Any) -> Num: return self._compare("GE", o)
    def __eq__(self, o: object) -> Num: return self._compare("EQ", o)  # type: ignore[override]
    def __ne__(self, o: object) -> Num: return self._compare("NE", o)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]
    # fmt: on


class MlirMath:
    """``vkml.ops.float64.backend.Math`` emitting StableHLO into ``b``."""

    def __init__(self, b: FunctionBuilder, shape: tuple[int, ...]) -> None:
        self.b, self.shape = b, shape

    def _num(self, v: Value) -> Num:
        return Num(self.b, v)

    def const(self, value: float) -> Num:
        return self._num(self.b.constant(value, float64, self.shape))

    def where(self, cond: Num, on_true: Num, on_false: Num) -> Num:
        return self._num(self.b.select(cond.v, on_true.v, on_false.v))

    def floor(self, x: Num) -> Num:
        return self._num(self.b.unary("floor", x.v))

    def rint(self, x: Num) -> Num:
        return self._num(self.b.unary("round_nearest_even", x.v))

    def sqrt(self, x: Num) -> Num:
        return self._num(self.b.unary("sqrt", x.v))

    def abs(self, x: Num) -> Num:
        return self._num(self.b.unary("abs", x.v))

    def to_int(self, x: Num) -> Num:
        return self._num(self.b.convert(x.v, int64))

    def to_float(self, i: Num) -> Num:
        return self._num(self.b.convert(i.v, float64))

    def bits(self, x: Num) -> Num:
        return self._num(self.b.bitcast(x.v, int64))

    def from_bits(self, i: Num) -> Num:
        return self._num(self.b.bitcast(i.v, float64))

    def lookup(self, table: tuple[int, ...] | tuple[float, ...], index: Num) -> Num:
        dtype = int64 if isinstance(table[0], int) else float64
        column = self.b.reshape(index.v, (math.prod(self.shape), 1))  # gather's row form
        found = self.b.gather(self.b.table(table, dtype), column)
        return self._num(self.b.reshape(found, self.shape))


def with_float64(name: str, other: Emitter, narrow: bool = False) -> Emitter:
    """The emitter of op ``name``: vkml's float64 function for a float64 result, ``other``
    for any other dtype. With ``narrow``, a float32 (or 16-bit) result is vkml's float64
    function too, rounded to float32 (then to the 16-bit type), where the target computes
    float64 (``FunctionBuilder.float64_math``): IREE's float32 sin, cos and tan reduce the
    argument in float32 and were thousands of ULP off at |x| = 3 and garbage (-inf) by 1e15."""

    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        through = narrow and out.dtype.is_float and b.float64_math
        if out.dtype is not float64 and not through:
            return other(b, xs, out, attrs)
        operands = [Num(b, b.prepare(x, out.shape, float64)) for x in xs]
        if name in ("sin", "cos", "tan"):
            b.hint(WIDE_FUSION)  # the argument reduction: a long, much-shared chain
        math_ = MlirMath(b, out.shape)
        result: Num = (
            FUNCTIONS[name](math_, *operands, narrow=True)
            if through and out.dtype is not float64
            else FUNCTIONS[name](math_, *operands)
        )
        if out.dtype is float64:
            return result.v
        return b.convert(b.convert(result.v, float32), out.dtype)

    return emit
