"""What vkml's float64 functions compute with: one algorithm, two backends.

Each function in this package is written once against ``Math`` and run by the reference
device on NumPy arrays (``vkml.ops.references.float64``) and by the compiled devices on MLIR
values (``vkml.ops.emitters.float64``), so the two perform the same IEEE operations in the
same order and agree bit for bit. The values support ``+ - * /``, unary ``-`` and the
comparisons (floats), ``& | ~`` (bools), and ``+ - * & | << >>`` (int64; ``>>`` is
arithmetic). ``//`` and ``%`` are used only on non-negative integers, where truncating and
flooring division agree. A Python number mixed in takes the other operand's dtype.

Only correctly rounded operations are used (add, subtract, multiply, divide, sqrt, and exact
ones: floor, rint, bit casts, integer arithmetic), never a fused multiply-add, so every
device that rounds these as IEEE 754 says gives the same bits.
"""

from __future__ import annotations

from typing import Any, Protocol


class Math(Protocol):
    def const(self, value: float) -> Any:
        """A float64 constant shaped like the function's input."""

    def where(self, cond: Any, on_true: Any, on_false: Any) -> Any: ...

    def floor(self, x: Any) -> Any: ...

    def rint(self, x: Any) -> Any:
        """The nearest integer, ties to even."""

    def sqrt(self, x: Any) -> Any: ...

    def abs(self, x: Any) -> Any: ...

    def to_int(self, x: Any) -> Any:
        """An integral float64 (never NaN or out of range) as int64."""

    def to_float(self, i: Any) -> Any:
        """An int64 below 2**53 in magnitude as float64 (exact)."""

    def bits(self, x: Any) -> Any:
        """The float64's bit pattern as int64."""

    def from_bits(self, i: Any) -> Any: ...

    def lookup(self, table: tuple[int, ...] | tuple[float, ...], index: Any) -> Any:
        """``table[index]`` elementwise (an int64 ``index`` in range): int64 entries for an
        integer table, float64 for a float one."""
