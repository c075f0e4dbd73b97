"""Fail the compile when a floating-point maximum or minimum in the module swallows NaN.

Invariant: the module is unchanged, and it holds no ``arith.maxnumf``/``arith.minnumf`` and no
compare-and-select maximum or minimum that only vkml's emitters write (one whose predicate
joins compares with ``or``/``and``/``xor``/``not``, or one inside a reduction body) which,
given a NaN operand, returns the other operand. vkml's NaN contract (docs/contracts.md, "NaN")
says ``maximum``, ``minimum``, ``clip``, ``relu``, ``amax`` and ``amin`` propagate NaN.

What counts, and why:
- ``arith.maxnumf``/``arith.minnumf`` (IEEE maxNum) return the non-NaN operand by definition:
  always an error. ``stablehlo.maximum``/``minimum``/``clamp`` and ``arith.maximumf`` /
  ``minimumf`` propagate NaN by their specifications and pass.
- A float ``select(p, t, f)`` whose predicate ``p`` contains an ordered compare (GT, GE, LT,
  LE) of ``t`` and ``f`` (the same SSA values, or equal constants) is a max/min. Its
  predicate is evaluated in three-valued logic for "t is NaN, f is not" and the reverse; if it
  may pick the non-NaN operand, the max/min swallows NaN. vkml's own forms pass:
  ``select(x >= y or x != x, x, y)`` (``emitters.select_max``) and relu's
  ``select(x <= 0, 0, x)``.
- Such a select is checked only where a user cannot have written it. The public API has no
  logical and/or/not, so a compound predicate comes from an emitter; a reduction body comes
  from an emitter too. A top-level select on one compare is what ``vkml.where(x > y, x, y)``
  emits, and that must keep ``torch.where``'s meaning (it returns ``y`` when ``x`` is NaN), so
  it is not an error: the IR carries no provenance that would tell it from an emitter that
  dropped its NaN check. Behavioural tests (tests/py/passes/test_nan_semantics.py) cover that.
- The integer NaN tests ``vkml-vulkan-nan`` writes are read as the float compares they stand
  for: ``(bits(x) & MASK) > INF`` as ``x != x``, ``<= INF`` as ``x == x``
  (``vkml.dialect.nan_bits``); and a compare joined with tests of its own operands that cannot
  change its IEEE result (``c and x == x`` for an ordered ``c``, ``c or x != x`` for NE) is
  read as ``c`` alone, so a user's ``where(x > y, x, y)`` stays a select on one compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from vkml.dialect.ir import ir
from vkml.dialect.nan_bits import FLOAT_BITS
from vkml.errors import CompileError

ARGUMENT = "vkml-verify-nan-semantics"
DESCRIPTION = "fail on a float maximum/minimum that swallows NaN (vkml's NaN contract)"

_MAXNUM = {"arith.maxnumf": "maximum", "arith.minnumf": "minimum"}
_SELECTS = ("stablehlo.select", "arith.select")
_CONSTANTS = ("stablehlo.constant", "arith.constant")
_LOGIC = {
    "stablehlo.or": "or", "stablehlo.and": "and", "stablehlo.xor": "xor", "stablehlo.not": "not",
    "arith.ori": "or", "arith.andi": "and", "arith.xori": "xor",
}  # fmt: skip
# bodies no public op lets a user write: a select there is an emitter's combiner
_REDUCTION_BODIES = ("stablehlo.reduce", "stablehlo.reduce_window", "linalg.reduce")
# stablehlo.compare: (result when an operand is NaN, result for x vs x when x is not NaN)
_DIRECTIONS = {
    "EQ": (False, True), "NE": (True, False), "GT": (False, False),
    "GE": (False, True), "LT": (False, False), "LE": (False, True),
}  # fmt: skip
# arith.cmpf predicates by enum value: (name, result when an operand is NaN, result for x vs x)
_CMPF = {
    0: ("false", False, False), 1: ("oeq", False, True), 2: ("ogt", False, False),
    3: ("oge", False, True), 4: ("olt", False, False), 5: ("ole", False, True),
    6: ("one", False, False), 7: ("ord", False, True), 8: ("ueq", True, True),
    9: ("ugt", True, False), 10: ("uge", True, True), 11: ("ult", True, False),
    12: ("ule", True, True), 13: ("une", True, False), 14: ("uno", True, False),
    15: ("true", True, True),
}  # fmt: skip
_ORDERED = {"GT", "GE", "LT", "LE", "ogt", "oge", "olt", "ole", "ugt", "uge", "ult", "ule"}
_GREATER = {"GT", "GE", "ogt", "oge", "ugt", "uge"}
# predicates deeper than this are treated as unknown (they are one or two levels in practice)
_MAX_DEPTH = 8

Truth = bool | None  # three-valued: None is "depends on the data"


@dataclass(frozen=True, slots=True)
class _Compare:
    x: ir.Value
    y: ir.Value
    direction: str  # GT, GE, ... or an arith.cmpf mnemonic
    on_nan: bool  # the result when either operand is NaN
    on_self: bool  # the result of x against itself, x not NaN
    total_order: bool  # NaN sorts by its sign: only x against itself is known


@dataclass(slots=True)
class _Facts:
    """What the checks read, gathered in one walk and keyed by the value an op defines.

    Reading ``value.owner`` or a stablehlo attribute through the bindings tries to import a
    Python module for the dialect on every call (~50 us each); one walk avoids both.
    """

    maxnum: list[ir.Operation] = field(default_factory=list)
    selects: list[ir.Operation] = field(default_factory=list)
    in_reduction: set[ir.Value] = field(default_factory=set)  # select results in a reduce body
    compares: dict[ir.Value, _Compare] = field(default_factory=dict)
    logic: dict[ir.Value, tuple[str, list[ir.Value]]] = field(default_factory=dict)
    constants: dict[ir.Value, tuple[str, object]] = field(default_factory=dict)
    bitcasts: dict[ir.Value, ir.Value] = field(default_factory=dict)  # result -> operand


def run(module: ir.Operation) -> None:
    """Raise ``CompileError`` naming every NaN-swallowing max/min of ``module``; change nothing."""
    facts = _gather(module)
    problems = [_describe_maxnum(op) for op in facts.maxnum]
    for op in facts.selects:
        problem = _check_select(op, facts)
        if problem:
            problems.append(problem)
    if problems:
        raise CompileError(
            f"{ARGUMENT}: {len(problems)} NaN-swallowing operation(s); vkml's NaN contract "
            "(docs/contracts.md) says maximum, minimum, clip, relu, amax and amin propagate "
            "NaN:\n  " + "\n  ".join(problems)
        )


def _gather(module: ir.Operation) -> _Facts:
    facts = _Facts()
    reductions: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name in _SELECTS:
            facts.selects.append(op)
        elif name == "stablehlo.compare" or name == "arith.cmpf":
            facts.compares[op.results[0]] = _nan_bits_test(op, facts) or _read_compare(op)
        elif name in _LOGIC:
            logic = (_LOGIC[name], list(op.operands))
            guarded = _guarded_compare(logic, facts)
            if guarded is not None:
                facts.compares[op.results[0]] = guarded
            else:
                facts.logic[op.results[0]] = logic
        elif name == "stablehlo.bitcast_convert":
            facts.bitcasts[op.results[0]] = op.operands[0]
        elif name in _CONSTANTS:
            constant = _read_constant(op)
            if constant is not None:
                facts.constants[op.results[0]] = constant
        elif name in _MAXNUM:
            facts.maxnum.append(op)
        elif name in _REDUCTION_BODIES:
            reductions.append(op)
        return ir.WalkResult.ADVANCE

    def visit_body(op: ir.Operation) -> ir.WalkResult:
        if op.name in _SELECTS:
            facts.in_reduction.add(op.results[0])
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for reduction in reductions:
        reduction.walk(visit_body)
    return facts


def _attribute_texts(op: ir.Operation) -> dict[str, str]:
    """``op``'s attributes as printed text, read from the printed NamedAttributes: that does
    not look for a Python dialect module, ``op.attributes[name]`` does (~8 us against ~50)."""
    attributes = op.attributes
    texts: dict[str, str] = {}
    for i in range(len(attributes)):
        name, _, value = str(attributes[i]).removeprefix("NamedAttribute(").partition("=")
        texts[name] = value[:-1]
    return texts


def _read_compare(op: ir.Operation) -> _Compare:
    x, y = op.operands
    if op.name == "arith.cmpf":
        direction, on_nan, on_self = _CMPF[ir.IntegerAttr(op.attributes["predicate"]).value]
        return _Compare(x, y, direction, on_nan, on_self, False)
    texts = _attribute_texts(op)
    direction = texts["comparison_direction"].rstrip(">").split()[-1]
    on_nan, on_self = _DIRECTIONS[direction]
    return _Compare(x, y, direction, on_nan, on_self, "TOTALORDER" in texts.get("compare_type", ""))


def _nan_bits_test(op: ir.Operation, facts: _Facts) -> _Compare | None:
    """``(bits(x) & MASK) > INF`` read as ``x != x``, ``<= INF`` as ``x == x``; else None."""
    if op.name != "stablehlo.compare":
        return None
    masked, bound = op.operands
    if masked not in facts.logic or bound not in facts.constants:
        return None
    logic, operands = facts.logic[masked]
    bits = [v for v in operands if v in facts.bitcasts]
    if logic != "and" or len(operands) != 2 or len(bits) != 1:
        return None
    mask = operands[1] if operands[0] == bits[0] else operands[0]
    x = facts.bitcasts[bits[0]]
    layout = FLOAT_BITS.get(str(ir.ShapedType(x.type).element_type))
    if (
        layout is None
        or mask not in facts.constants
        or facts.constants[mask][1] != layout.magnitude_mask
        or facts.constants[bound][1] != layout.infinity
    ):
        return None
    direction = _attribute_texts(op)["comparison_direction"].rstrip(">").split()[-1]
    if direction == "GT":
        return _Compare(x, x, "NE", True, False, False)
    if direction == "LE":
        return _Compare(x, x, "EQ", False, True, False)
    return None


def _guarded_compare(logic: tuple[str, list[ir.Value]], facts: _Facts) -> _Compare | None:
    """The compare ``c`` when ``logic`` is ``c and (x == x ...)`` for an ordered ``c`` or
    ``c or (x != x ...)`` for an unordered one, x being c's operands: the same value as ``c``
    in IEEE arithmetic, whatever x is."""
    kind, operands = logic
    if kind not in ("and", "or") or len(operands) != 2:
        return None
    for c_value, guard in (operands, operands[::-1]):
        c = facts.compares.get(c_value)
        if c is None or c.total_order or c.on_nan != (kind == "or"):
            continue
        if _is_nan_guard(guard, kind, c, facts):
            return c
    return None


def _is_nan_guard(guard: ir.Value, kind: str, c: _Compare, facts: _Facts) -> bool:
    """Whether ``guard`` joins, with ``kind`` only, self-compares of c's operands that are
    true exactly for NaN (``or``) or exactly for non-NaN (``and``)."""
    # (result for NaN, result for x against itself): x != x under or, x == x under and
    wanted = (True, False) if kind == "or" else (False, True)
    pending = [(guard, 0)]
    while pending:
        value, depth = pending.pop()
        test = facts.compares.get(value)
        if test is not None:
            is_test = (
                _same(test.x, test.y, facts)
                and not test.total_order
                and (test.on_nan, test.on_self) == wanted
                and (_same(test.x, c.x, facts) or _same(test.x, c.y, facts))
            )
            if not is_test:
                return False
        elif value in facts.logic and facts.logic[value][0] == kind and depth < _MAX_DEPTH:
            pending.extend((v, depth + 1) for v in facts.logic[value][1])
        else:
            return False
    return True


def _read_constant(op: ir.Operation) -> tuple[str, object] | None:
    """(a key equal for equal constants, the Python value) of a splat or scalar constant."""
    value = op.attributes["value"]
    if isinstance(value, ir.DenseElementsAttr):
        if not value.is_splat:
            return None
        value = value.get_splat_value()
    if not isinstance(value, (ir.FloatAttr, ir.BoolAttr, ir.IntegerAttr)):
        return None
    python = value.value
    return f"{op.results[0].type}:{python!r}", python


def _describe_maxnum(op: ir.Operation) -> str:
    kind = _MAXNUM[op.name]
    return (
        f"'{op.name}' at {op.location} is a {kind} that returns the non-NaN operand when one "
        f"operand is NaN; use 'arith.{kind}f', which propagates NaN"
    )


def _check_select(op: ir.Operation, facts: _Facts) -> str | None:
    """A description of ``op``'s NaN swallowing, or None if it propagates NaN or is exempt."""
    pred, on_true, on_false = op.operands
    if not _is_float(on_true.type) or _same(on_true, on_false, facts):
        return None
    compares, compound = _predicate_leaves(pred, facts)
    ordered = [
        c for c in compares if c.direction in _ORDERED and _relates(c, on_true, on_false, facts)
    ]
    if not ordered or not (compound or op.results[0] in facts.in_reduction):
        return None
    kind = "maximum" if _picks_greater(ordered[0], on_true, facts) else "minimum"
    cases = ((on_true, on_false, True, "true"), (on_false, on_true, False, "false"))
    for nan, other, wanted, label in cases:
        if _constant_nan(nan, facts) is False or _constant_nan(other, facts) is True:
            continue  # this operand cannot be NaN (or the other one always is)
        truth = _truth(pred, nan, other, facts)
        if truth is not wanted:
            verb = "may return" if truth is None else "returns"
            return (
                f"'{op.name}' at {op.location} is a {kind} that swallows NaN: when its {label} "
                f"operand is NaN it {verb} the other one; emit it as "
                "emitters.select_max/select_min do (compare OR x != x)"
            )
    return None


def _is_float(t: ir.Type) -> bool:
    element = t.element_type if isinstance(t, ir.ShapedType) else t
    return isinstance(element, ir.FloatType)


def _constant_nan(v: ir.Value, facts: _Facts) -> bool | None:
    """True/False for a float constant that is/is not NaN; None when ``v`` is no constant."""
    constant = facts.constants.get(v)
    if constant is None or not isinstance(constant[1], float):
        return None
    return math.isnan(constant[1])


def _same(a: ir.Value, b: ir.Value, facts: _Facts) -> bool:
    """The same SSA value, or two constants of one type and one spelled value."""
    if a == b:
        return True
    ca, cb = facts.constants.get(a), facts.constants.get(b)
    return ca is not None and cb is not None and ca[0] == cb[0]


def _predicate_leaves(pred: ir.Value, facts: _Facts) -> tuple[list[_Compare], bool]:
    """The compares a predicate is built from, and whether logic ops join them."""
    compares: list[_Compare] = []
    compound = False
    pending = [(pred, 0)]
    while pending:
        value, depth = pending.pop()
        if value in facts.compares:
            compares.append(facts.compares[value])
        elif value in facts.logic and depth < _MAX_DEPTH:
            compound = True
            pending.extend((operand, depth + 1) for operand in facts.logic[value][1])
    return compares, compound


def _relates(c: _Compare, a: ir.Value, b: ir.Value, facts: _Facts) -> bool:
    return (_same(c.x, a, facts) and _same(c.y, b, facts)) or (
        _same(c.x, b, facts) and _same(c.y, a, facts)
    )


def _picks_greater(c: _Compare, on_true: ir.Value, facts: _Facts) -> bool:
    """Whether the select's true operand is the greater one when ``c`` holds."""
    return (c.direction in _GREATER) == _same(c.x, on_true, facts)


def _truth(pred: ir.Value, nan: ir.Value, other: ir.Value, facts: _Facts, depth: int = 0) -> Truth:
    """``pred`` in three-valued logic, given that ``nan`` is NaN and ``other`` is not."""
    if pred in facts.compares:
        return _compare_truth(facts.compares[pred], nan, other, facts)
    if pred in facts.constants:
        value = facts.constants[pred][1]
        return value if isinstance(value, bool) else None
    if pred not in facts.logic or depth >= _MAX_DEPTH:
        return None
    logic, operands = facts.logic[pred]
    args = [_truth(v, nan, other, facts, depth + 1) for v in operands]
    if logic == "not":
        return None if args[0] is None else not args[0]
    if logic == "or":
        return True if True in args else (None if None in args else False)
    if logic == "and":
        return False if False in args else (None if None in args else True)
    return None if None in args else args[0] != args[1]


def _compare_truth(c: _Compare, nan: ir.Value, other: ir.Value, facts: _Facts) -> Truth:
    def is_nan(v: ir.Value) -> bool | None:
        if _same(v, nan, facts):
            return True
        return False if _same(v, other, facts) else _constant_nan(v, facts)

    if c.total_order:
        return c.on_self if _same(c.x, c.y, facts) else None
    nan_x, nan_y = is_nan(c.x), is_nan(c.y)
    if nan_x or nan_y:
        return c.on_nan
    if _same(c.x, c.y, facts) and nan_x is False:
        return c.on_self
    return None
