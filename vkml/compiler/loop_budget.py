"""The loop-budget check: on a Vulkan driver that caps shader loops, prove from IREE's own
code for each dispatch that no shader invocation can run into the cap.

Mesa's lavapipe gives every shader invocation one loop counter, shared by all of its loops
and set to 65,535; each loop iteration takes one, and at zero every loop exits early. The
shader then finishes normally with part of its work undone: a wrong answer and no error
(an integer sum of 70,000 ones gave 65,535). vkml's lowerings keep per-thread loops short
(reductions are pairwise trees, long contractions are split: ``vkml-split-contractions``),
and this check turns any loop they missed into a ``CompileError`` at compile time instead
of a wrong answer at run time.

How: IREE compiles the module with its IR printed, one file per executable, right before
the conversion to SPIR-V (``vkml.compiler.dispatch_dump``). There every loop is an ``scf.for`` over 32-bit or index values. A dispatch's *budget* is
the iterations one invocation can run in all: the sum over its loops of the loop's trip
count times those of the loops around it. A loop whose trip count cannot be bounded makes
the budget unknown, which fails the check as an exceeded one does. The count is an upper
bound: the driver may unroll short loops, which only lowers it.

A trip count is bounded from what the IR says of the loop's bounds (``_Ranges``): constants,
the ranges IREE asserts with ``util.assume.int`` (a dynamic size it knows, such as the
element count of IREE's own ``__builtin_fill_i64``), the ``upper_bound`` of a workgroup or
thread id and count (a count is at least 1), and the casts, products, sums, minima, maxima,
quotients and remainders of those. The loop runs at most
``ceil((max upper - min lower) / min step)`` times; a value the ranges say nothing of is
unbounded above and 0 below (IREE's distributed loops start at a thread's or workgroup's
non-negative offset).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from vkml.compiler.dispatch_dump import dump_files

_FUNC = re.compile(r"^\s*func\.func @([\w$.-]+)")
# (IREE may print a location after an op: `loc(...)`.)
_CONSTANT = re.compile(r"^\s*(%[\w$.-]+) = arith\.constant (-?\d+) : (?:i\d+|index)(?:\s|$)")
_FOR = re.compile(r"\bscf\.for (%[\w$.-]+) = (%[\w$.-]+) to (%[\w$.-]+) step (%[\w$.-]+)")
_UNBOUNDED = re.compile(r"\b(scf\.while|cf\.br|cf\.cond_br)\b")
_RESULT = r"(%[\w$.-]+) = "
_ASSUME = re.compile(r"^\s*(%[\w$.-]+)(?::(\d+))? = util\.assume\.int (.*?) : ")
_ASSUMED = re.compile(r"(%[\w$.-]+)\[([^\]]*)\]")
_ROW = re.compile(r"<([^>]*)>")
_IDS = re.compile(
    _RESULT + r"(?:gpu\.(thread_id|block_dim) \w|hal\.interface\.workgroup\.(id|count|size)\[\d\])"
    r"(?: upper_bound (\d+))?"
)
_SIZES = ("block_dim", "count", "size")  # at least 1; an id is at least 0
_CAST = re.compile(_RESULT + r"arith\.index_cast(?:ui)? (%[\w$.-]+) ")
_ARITH = re.compile(
    _RESULT + r"arith\.(muli|addi|minui|minsi|maxui|maxsi|divui|remui) (%[\w$.-]+), (%[\w$.-]+)\b"
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass(frozen=True)
class Budget:
    """One dispatch function's loop budget: ``iterations`` per invocation (``None``: a loop
    could not be bounded) and the trip counts of its loops, outermost first, as read."""

    function: str
    iterations: int | None
    loops: tuple[int | None, ...]


class _Ranges:
    """What one function's IR bounds its values to: ``low[v] <= v <= high[v]`` (a value in
    neither map is taken as 0 below and unbounded above)."""

    def __init__(self) -> None:
        self.low: dict[str, int] = {}
        self.high: dict[str, int] = {}

    def read(self, line: str) -> None:
        """Learn the bounds the op on ``line`` gives its result, if it is one that does."""
        if m := _CONSTANT.match(line):
            self._set(m.group(1), int(m.group(2)), int(m.group(2)))
        elif m := _ASSUME.match(line):
            self._assume(m.group(1), m.group(2), m.group(3))
        elif m := _IDS.search(line):
            value, gpu, hal, bound = m.groups()
            size = (gpu or hal) in _SIZES
            top = None if bound is None else int(bound) - (0 if size else 1)
            self._set(value, 1 if size else 0, top)
        elif m := _CAST.search(line):
            self._set(m.group(1), self.low.get(m.group(2), 0), self.high.get(m.group(2)))
        elif m := _ARITH.search(line):
            value, op, a, b = m.groups()
            self._set(value, *_arith(op, self._range(a), self._range(b)))

    def _assume(self, first: str, count: str | None, operands: str) -> None:
        """``util.assume.int``: each operand has one row of assumptions per case; the result
        is within the widest row (unbounded above if a row has no ``umax``)."""
        groups = _ASSUMED.findall(operands)
        names = [first] if count is None else [f"{first}#{i}" for i in range(int(count))]
        for name, (_, rows) in zip(names, groups, strict=False):
            facts = [
                dict(_fact(f) for f in row.split(",") if "=" in f) for row in _ROW.findall(rows)
            ]
            lows = [f.get("umin", 0) for f in facts]
            highs = [f.get("umax") for f in facts]
            top = None if not highs or None in highs else max(h for h in highs if h is not None)
            self._set(name, min(lows, default=0), top)

    def _range(self, value: str) -> _Range:
        return self.low.get(value, 0), self.high.get(value)

    def _set(self, value: str, low: int, high: int | None) -> None:
        self.low[value] = low
        if high is None:
            self.high.pop(value, None)
        else:
            self.high[value] = high

    def trip_count(self, lower: str, upper: str, step: str) -> int | None:
        """At most how many times ``scf.for`` from ``lower`` to ``upper`` by ``step`` runs;
        ``None`` when the upper bound has no known maximum or the step no positive minimum."""
        hi, by = self.high.get(upper), self.low.get(step, 0)
        if hi is None or by <= 0:
            return None
        return max(0, -(-(hi - self.low.get(lower, 0)) // by))


_Range = tuple[int, int | None]  # (low, high); high None: no known maximum


def _arith(op: str, a: _Range, b: _Range) -> _Range:
    """The range of ``arith.<op> a, b`` on 32-bit or index values, from its operands'."""
    (la, ha), (lb, hb) = a, b
    nonnegative = la >= 0 and lb >= 0
    if op in ("addi", "muli"):
        low = (la * lb if op == "muli" else la + lb) if nonnegative else 0
        if not nonnegative or ha is None or hb is None:
            return low, None
        return low, ha * hb if op == "muli" else ha + hb
    if op in ("minui", "minsi"):
        # an unsigned minimum is at most any operand known to lie in [0, high]
        known = [h for lo, h in (a, b) if h is not None and (op == "minsi" or lo >= 0)]
        return (min(la, lb) if nonnegative else 0), min(known, default=None)
    if op in ("maxui", "maxsi"):
        if ha is None or hb is None or (op == "maxui" and not nonnegative):
            return max(la, lb), None
        return max(la, lb), max(ha, hb)
    # divui, remui: nothing is known of a divisor that may be 0
    if lb < 1:
        return 0, None
    if op == "remui":
        if hb is None:
            return 0, None
        return 0, hb - 1 if la < 0 or ha is None else min(ha, hb - 1)
    return 0, ha // lb if la >= 0 and ha is not None else None


def _fact(text: str) -> tuple[str, int]:
    key, _, number = text.partition("=")
    return key.strip(), int(number)


def budgets(ir_text: str) -> list[Budget]:
    """The loop budget of every function in one executable's pre-SPIR-V IR ``ir_text``."""
    found: list[Budget] = []
    name: str | None = None
    ranges = _Ranges()
    open_loops: list[tuple[int, int | None]] = []  # (brace depth outside the loop, trip count)
    trips: list[int | None] = []
    total: int | None = 0
    depth = 0
    for line in ir_text.splitlines():
        started = _FUNC.match(line)
        if started:
            if name is not None:
                found.append(Budget(name, total, tuple(trips)))
            name, ranges, open_loops, trips, total = started.group(1), _Ranges(), [], [], 0
        elif name is not None:
            ranges.read(line)
            loop = _FOR.search(line)
            if loop:
                trip = ranges.trip_count(*loop.group(2, 3, 4))
                enclosing = [t for _, t in open_loops]
                trips.append(trip)
                known = [t for t in enclosing if t is not None]
                if total is not None:
                    if trip is None or len(known) < len(enclosing):
                        total = None
                    else:
                        total += trip * math.prod(known)
                open_loops.append((depth, trip))
            elif _UNBOUNDED.search(line):
                trips.append(None)
                total = None
        depth += _net_braces(line)
        while open_loops and depth <= open_loops[-1][0]:
            open_loops.pop()
    if name is not None:
        found.append(Budget(name, total, tuple(trips)))
    return found


def _net_braces(line: str) -> int:
    text = _STRING.sub("", line)
    return text.count("{") - text.count("}")


def over_budget(directory: Path, cap: int) -> list[Budget]:
    """The dispatches dumped under ``directory`` whose budget exceeds ``cap`` or is unknown.

    A module without dispatches (only reshapes, say) leaves no file and nothing to check; a
    test compiles a known over-budget dispatch, so a compiler that stopped writing the IR
    would fail it rather than pass every module unchecked.
    """
    return [
        b
        for path in dump_files(directory)
        for b in budgets(path.read_text(encoding="utf-8"))
        if b.iterations is None or b.iterations > cap
    ]
