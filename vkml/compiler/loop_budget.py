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
the conversion to SPIR-V (``--mlir-print-ir-before`` into ``--mlir-print-ir-tree-dir``).
There every loop is an ``scf.for`` over 32-bit or index constants. A dispatch's *budget* is
the iterations one invocation can run in all: the sum over its loops of the loop's trip
count times those of the loops around it. A loop whose trip count cannot be bounded makes
the budget unknown, which fails the check as an exceeded one does. The count is an upper
bound: the driver may unroll short loops, which only lowers it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# What IREE prints before this pass holds only structured loops with explicit bounds.
DUMP_BEFORE = "iree-convert-to-spirv"

_FUNC = re.compile(r"^\s*func\.func @([\w$.-]+)")
# (IREE may print a location after an op: `loc(...)`.)
_CONSTANT = re.compile(r"^\s*(%[\w$.-]+) = arith\.constant (-?\d+) : (?:i\d+|index)(?:\s|$)")
_FOR = re.compile(r"\bscf\.for (%[\w$.-]+) = (%[\w$.-]+) to (%[\w$.-]+) step (%[\w$.-]+)")
_UNBOUNDED = re.compile(r"\b(scf\.while|cf\.br|cf\.cond_br)\b")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def dump_flags(directory: Path) -> list[str]:
    """The IREE compiler flags that write each executable's pre-SPIR-V IR under ``directory``."""
    return [f"--mlir-print-ir-before={DUMP_BEFORE}", f"--mlir-print-ir-tree-dir={directory}"]


@dataclass(frozen=True)
class Budget:
    """One dispatch function's loop budget: ``iterations`` per invocation (``None``: a loop
    could not be bounded) and the trip counts of its loops, outermost first, as read."""

    function: str
    iterations: int | None
    loops: tuple[int | None, ...]


def budgets(ir_text: str) -> list[Budget]:
    """The loop budget of every function in one executable's pre-SPIR-V IR ``ir_text``."""
    found: list[Budget] = []
    name: str | None = None
    constants: dict[str, int] = {}
    open_loops: list[tuple[int, int | None]] = []  # (brace depth outside the loop, trip count)
    trips: list[int | None] = []
    total: int | None = 0
    depth = 0
    for line in ir_text.splitlines():
        started = _FUNC.match(line)
        if started:
            if name is not None:
                found.append(Budget(name, total, tuple(trips)))
            name, constants, open_loops, trips, total = started.group(1), {}, [], [], 0
        elif name is not None:
            constant = _CONSTANT.match(line)
            if constant:
                constants[constant.group(1)] = int(constant.group(2))
            loop = _FOR.search(line)
            if loop:
                trip = _trip_count(constants, *loop.group(2, 3, 4))
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


def _trip_count(constants: dict[str, int], lower: str, upper: str, step: str) -> int | None:
    """Iterations of ``scf.for`` from ``lower`` to ``upper`` by ``step``; ``None`` when the
    upper bound or the step is not a constant. A lower bound that is not a constant is taken
    as 0: IREE's distributed loops start at a thread's or workgroup's non-negative offset."""
    hi, by = constants.get(upper), constants.get(step)
    if hi is None or by is None or by <= 0:
        return None
    lo = constants.get(lower, 0)
    return max(0, -(-(hi - lo) // by))


def _net_braces(line: str) -> int:
    text = _STRING.sub("", line)
    return text.count("{") - text.count("}")


def dump_files(directory: Path) -> Iterable[Path]:
    """The IR files IREE wrote under ``directory`` (one per executable variant)."""
    return sorted(directory.rglob(f"*{DUMP_BEFORE}.mlir"))


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
