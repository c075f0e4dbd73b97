"""Decide every NaN outcome of a Vulkan module with integer tests on the floats' bits.

IREE's SPIR-V lacks the SignedZeroInfNanPreserve execution mode, so a Vulkan driver may
compile a shader as if no float were NaN. Measured on an NVIDIA H200 (driver 580, IREE target
``ampere``): relu(NaN) gave 0, exp(NaN) 0, tanh(NaN) and sigmoid(NaN) 1, in float32, float16
and bfloat16; lavapipe and cpu gave NaN. The driver cannot assume anything of that kind about
integers, so this pass restates each NaN decision with ``vkml.dialect.nan_bits``
(docs/adr/0010-vulkan-nan-by-integers.md). Only Vulkan compiles run it
(``pipelines.VULKAN_PASSES``).

Invariant: no float ``stablehlo.compare`` of a value with itself remains (``x != x`` and
``x == x`` became integer tests of x's bits); every other float compare is joined with integer
tests of its operands that are not constants, ``and`` not-NaN for EQ/GT/GE/LT/LE and ``or``
NaN for NE, so the joint result is IEEE's for a NaN operand whatever the compare itself gives
(this covers relu's ``x <= 0`` and select_max's ``x >= y``); and the result of every op in
``_RULES`` passes through selects that return a NaN, decided by integer tests, wherever IEEE's
result is NaN for a NaN operand (and for log/sqrt/rsqrt below -0.0, sin/cos/tan of infinity).
For a NaN operand that NaN is the operand itself, untouched by float code; for a domain error
it is the default quiet NaN (payloads are not promised: NumPy itself returns the quieted
operand from sqrt and power but the default NaN from exp). Values that are not NaN are
unchanged, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.fusion_stops import FUSION_STOPS
from vkml.dialect.ir import ir
from vkml.dialect.nan_bits import (
    is_below,
    is_below_one,
    is_beyond,
    is_infinite,
    is_nan,
    is_not_nan,
    is_one,
    is_zero,
)
from vkml.dialect.rewrite import replace_with_function_body, tensor_type_of, wrap_results
from vkml.dialect.types import Value

ARGUMENT = "vkml-vulkan-nan"
DESCRIPTION = "decide NaN outcomes by integer tests on the bits (drivers may assume no NaN)"

Test = Callable[[FunctionBuilder, Value], Value]


def _negative(b: FunctionBuilder, x: Value) -> Value:
    return is_below(b, x, -0.0)


def _below_minus_one(b: FunctionBuilder, x: Value) -> Value:
    return is_below(b, x, -1.0)


def _beyond_one(b: FunctionBuilder, x: Value) -> Value:
    return is_beyond(b, x, 1.0)


@dataclass(frozen=True, slots=True)
class _Rule:
    """When an op's IEEE result is NaN: a NaN operand, or a domain error of its one operand."""

    domain: Test | None = None  # the inputs outside the domain
    # per operand: a test of the *other* operand under which a NaN in this one gives no NaN
    exempt: tuple[Test, Test] | None = None


_RULES: dict[str, _Rule] = {
    "stablehlo.exponential": _Rule(),
    "stablehlo.exponential_minus_one": _Rule(),
    "stablehlo.log": _Rule(_negative),
    "stablehlo.log_plus_one": _Rule(_below_minus_one),
    "stablehlo.sqrt": _Rule(_negative),
    "stablehlo.rsqrt": _Rule(_negative),
    "stablehlo.cbrt": _Rule(),
    "stablehlo.tanh": _Rule(),
    "stablehlo.logistic": _Rule(),
    "stablehlo.sine": _Rule(is_infinite),
    "stablehlo.cosine": _Rule(is_infinite),
    "stablehlo.tan": _Rule(is_infinite),
    "chlo.erf": _Rule(),
    "chlo.erfc": _Rule(),
    "chlo.asin": _Rule(_beyond_one),
    "chlo.acos": _Rule(_beyond_one),
    "chlo.atan": _Rule(),
    "chlo.cosh": _Rule(),
    "chlo.acosh": _Rule(is_below_one),
    # pow(NaN, ±0) and pow(1, NaN) are 1 (IEEE pow, NumPy, PyTorch)
    "stablehlo.power": _Rule(exempt=(is_zero, is_one)),
    "stablehlo.atan2": _Rule(),
    # fmod (vkml refuses float remainders on Vulkan today; integer ones pass untouched)
    "stablehlo.remainder": _Rule(),
    # a driver that assumes no NaN may round a NaN's bits as if they were a number
    "stablehlo.floor": _Rule(),
    "stablehlo.ceil": _Rule(),
    "stablehlo.round_nearest_even": _Rule(),
    # their lowering tests NaN with float compares of its own, which the driver may fold
    "stablehlo.maximum": _Rule(),
    "stablehlo.minimum": _Rule(),
    "stablehlo.clamp": _Rule(),
}
# The ops the pass leaves alone. They move or reinterpret bits (no float arithmetic), act on
# integers, or are IEEE arithmetic whose NaN results a driver that assumes no NaN still gave
# right on the H200 (ADR 0010: every op of the contract tests but those of ``_RULES``).
# ``stablehlo.compare`` is rewritten separately. tests/py/ops/test_registry.py checks that
# every op vkml's emitters write for a Vulkan module is here, in ``_RULES`` or a compare, so
# a new op cannot reach a GPU undecided.
_MOVE_BITS = (
    "bitcast_convert",
    "broadcast_in_dim",
    "gather",
    "concatenate",
    "constant",
    "dynamic_slice",
    "dynamic_update_slice",
    "iota",
    "optimization_barrier",
    "pad",
    "reshape",
    "reverse",
    "select",
    "slice",
    "transpose",
    "while",
    "return",
)  # fmt: skip  (a loop and its regions' terminator carry values)
_INTEGER = ("and", "or", "xor", "not", "shift_left", "shift_right_logical",
            "shift_right_arithmetic", "count_leading_zeros")  # fmt: skip
_PROPAGATE = ("abs", "add", "subtract", "multiply", "divide", "negate", "convert", "dot_general",
              "reduce")  # fmt: skip
NAN_TRANSPARENT = FUSION_STOPS | frozenset(
    "stablehlo." + name for name in (*_MOVE_BITS, *_INTEGER, *_PROPAGATE)
)
# self-compares that are a NaN test: direction -> whether it is true for NaN
_SELF_TESTS = {"NE": True, "EQ": False, "GE": False, "LE": False}


@dataclass(slots=True)
class _Targets:
    """What the pass rewrites, gathered in one walk before anything changes."""

    compares: list[tuple[ir.Operation, str]] = field(default_factory=list)  # (op, direction)
    producers: list[ir.Operation] = field(default_factory=list)
    never_nan: set[ir.Value] = field(default_factory=set)  # float splat constants, not NaN


def run(module: ir.Operation) -> None:
    """Rewrite every float compare and every op of ``_RULES`` in ``module`` in place."""
    targets = _gather(module)
    for op, direction in targets.compares:
        _rewrite_compare(op, direction, targets.never_nan)
    for op in targets.producers:
        _restore_nan(op, targets.never_nan)


def _gather(module: ir.Operation) -> _Targets:
    targets = _Targets()

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name == "stablehlo.compare" and _is_float(op.operands[0].type):
            direction, compare_type = _compare_attributes(op)
            if compare_type != "TOTALORDER":  # integer compares by definition
                targets.compares.append((op, direction))
        elif name in _RULES and _is_float(op.results[0].type):
            targets.producers.append(op)
        elif name == "stablehlo.constant" and _is_float(op.results[0].type) and _splat_not_nan(op):
            targets.never_nan.add(op.results[0])
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return targets


def _rewrite_compare(op: ir.Operation, direction: str, never_nan: set[ir.Value]) -> None:
    x, y = op.operands
    b = FunctionBuilder("nan_compare")
    xs = [b.arg(tensor_type_of(v.type)) for v in (x, y)]
    if x == y and direction in _SELF_TESTS:
        test = is_nan if _SELF_TESTS[direction] else is_not_nan
        b.ret([test(b, xs[0])])
        replace_with_function_body(op, b.module_text())
        return
    tested = [arg for arg, v in zip(xs, (x, y)) if v not in never_nan]
    if x == y:
        tested = tested[:1]
    if not tested:
        return  # two constants: IREE folds the compare itself
    result = b.arg(tensor_type_of(op.results[0].type))
    # IEEE: NE is true when an operand is NaN, every other direction false
    if direction == "NE":
        nan = _join(b, "or", [is_nan(b, v) for v in tested])
        b.ret([b.binary("or", result, nan)])
    else:
        ordered = _join(b, "and", [is_not_nan(b, v) for v in tested])
        b.ret([b.binary("and", result, ordered)])
    wrap_results(op, b.module_text())


def _restore_nan(op: ir.Operation, never_nan: set[ir.Value]) -> None:
    rule = _RULES[op.name]
    out_type = tensor_type_of(op.results[0].type)
    b = FunctionBuilder("nan_result")
    args = [b.arg(tensor_type_of(v.type)) for v in op.operands]
    result = b.arg(out_type)
    if rule.domain is not None:
        nan = b.constant(math.nan, out_type.dtype, out_type.shape)
        result = b.select(rule.domain(b, args[0]), nan, result)
    # the innermost select is the last operand's: when both are NaN the first one is returned
    for i in reversed(range(len(args))):
        if op.operands[i] in never_nan:
            continue
        v = b.broadcast(args[i], out_type.shape)
        propagates = is_nan(b, v)
        if rule.exempt is not None:
            exempt = rule.exempt[i](b, b.broadcast(args[1 - i], out_type.shape))
            propagates = b.binary("and", propagates, b.unary("not", exempt))
        result = b.select(propagates, v, result)
    b.ret([result])
    wrap_results(op, b.module_text())


def _join(b: FunctionBuilder, logic: str, values: list[Value]) -> Value:
    joined = values[0]
    for v in values[1:]:
        joined = b.binary(logic, joined, v)
    return joined


def _is_float(t: ir.Type) -> bool:
    return isinstance(ir.ShapedType(t).element_type, ir.FloatType)


def _compare_attributes(op: ir.Operation) -> tuple[str, str]:
    """(direction, compare type) of a ``stablehlo.compare``, read from the printed attributes
    (``#stablehlo<comparison_direction NE>``)."""
    direction = str(op.attributes["comparison_direction"]).rstrip(">").split()[-1]
    if "compare_type" not in op.attributes:
        return direction, ""
    return direction, str(op.attributes["compare_type"]).rstrip(">").split()[-1]


def _splat_not_nan(op: ir.Operation) -> bool:
    value = op.attributes["value"]
    if not isinstance(value, ir.DenseElementsAttr) or not value.is_splat:
        return False
    splat = value.get_splat_value()
    return isinstance(splat, ir.FloatAttr) and not math.isnan(splat.value)
