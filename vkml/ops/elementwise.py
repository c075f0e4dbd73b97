"""Elementwise ops: arithmetic, comparisons, selection, casts, bitwise and transcendental.

Where PyTorch's gradient is a choice rather than calculus (ties, kinks, NaN), vkml follows
PyTorch 2.13: maximum/minimum split a tie evenly and pass ``g`` to both operands where
either is NaN; relu passes ``g`` where the output is NaN and blocks it at 0; abs has
gradient sign(x), 0 at 0 and at NaN. Comparisons and bitwise ops carry no gradient (their
outputs are not floats).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from vkml.dialect.numerics import select_max, select_min
from vkml.dtypes import bfloat16, float16, float32, float64
from vkml.graph.node import Node
from vkml.ops import rules
from vkml.ops.emitters import accurate, common as emit, float64 as f64, floor_division, ieee_pow
from vkml.ops.references import common as ref, float64 as ref64
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, Spelling, table, to_source

# Transcendentals IREE cannot run in float64 on Vulkan: SPIR-V's GLSL.std.450 instructions
# (Exp, Log, Sin, ...) take 16/32-bit floats only. Most float64 functions are vkml's own
# (vkml.ops.float64, the same bits on every device); erf, gelu and pow are not yet.
NO_F64_VULKAN = frozenset({("vulkan", float64)})
# SPIR-V's float remainder (OpFRem) is x - y * trunc(x / y): lavapipe gave fmod(1e10, 3) = 0
# and fmod(1, inf) = NaN, so floor_divide and remainder of floats would be wrong on Vulkan;
# llvm-cpu links no float64 fmod
NO_FLOAT_VULKAN = frozenset(("vulkan", d) for d in (float16, bfloat16, float32, float64))
NO_FMOD = NO_FLOAT_VULKAN | {("cpu", float64)}


# -- gradients of binary arithmetic ------------------------------------------------------------
def grad_add(node: Node, g: Handle, f: Algebra) -> Grads:
    return to_source(g, node.src[0]), to_source(g, node.src[1])


def grad_sub(node: Node, g: Handle, f: Algebra) -> Grads:
    return to_source(g, node.src[0]), to_source(-g, node.src[1])


def grad_mul(node: Node, g: Handle, f: Algebra) -> Grads:
    a, b = f.tensor(node.src[0]), f.tensor(node.src[1])
    return to_source(g * b, node.src[0]), to_source(g * a, node.src[1])


def grad_div(node: Node, g: Handle, f: Algebra) -> Grads:
    b = f.tensor(node.src[1])
    # d(a/b)/db = -(a/b)/b, with a/b the output itself (PyTorch divides twice the same way)
    return to_source(g / b, node.src[0]), to_source(-(g * (f.tensor(node) / b)), node.src[1])


def grad_floor_divide(node: Node, g: Handle, f: Algebra) -> Grads:
    zero = f.full(g.shape, 0, g.dtype, g.device)  # a step function of both operands
    return to_source(zero, node.src[0]), to_source(zero, node.src[1])


def grad_remainder(node: Node, g: Handle, f: Algebra) -> Grads:
    # a - b * floor(a / b): PyTorch's gradients, g and -g * floor(a / b)
    a, b = f.tensor(node.src[0]), f.tensor(node.src[1])
    return to_source(g, node.src[0]), to_source(-(g * (a // b)), node.src[1])


def grad_pow(node: Node, g: Handle, f: Algebra) -> Grads:
    a, b, out = f.tensor(node.src[0]), f.tensor(node.src[1]), f.tensor(node)
    # PyTorch: no gradient to the base where the exponent is 0, none to the exponent where
    # the base is 0 and the exponent non-negative (0**b is flat there)
    base = f.where(b == 0, 0.0, g * (b * a ** (b - 1)))
    flat = f.where(a == 0, f.where(b >= 0, 0.0, out * a.log()), out * a.log())
    return to_source(base, node.src[0]), to_source(g * flat, node.src[1])


def _extreme_pair(
    node: Node, g: Handle, f: Algebra, loses: Callable[[Handle, Handle], Handle]
) -> Grads:
    a, b = f.tensor(node.src[0]), f.tensor(node.src[1])
    # a tie splits g evenly; NaN compares false everywhere, so both operands then get g
    tie = f.where(a == b, g * 0.5, g)
    ga = f.where(loses(a, b), 0.0, tie)
    gb = f.where(loses(b, a), 0.0, tie)
    return to_source(ga, node.src[0]), to_source(gb, node.src[1])


def grad_maximum(node: Node, g: Handle, f: Algebra) -> Grads:
    return _extreme_pair(node, g, f, lambda x, y: x < y)


def grad_minimum(node: Node, g: Handle, f: Algebra) -> Grads:
    return _extreme_pair(node, g, f, lambda x, y: x > y)


def grad_where(node: Node, g: Handle, f: Algebra) -> Grads:
    cond = f.tensor(node.src[0])
    return (
        None,
        to_source(f.where(cond, g, 0.0), node.src[1]),
        to_source(f.where(cond, 0.0, g), node.src[2]),
    )


# -- gradients of unary ops --------------------------------------------------------------------
def grad_neg(node: Node, g: Handle, f: Algebra) -> Grads:
    return (-g,)


def grad_abs(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    # sign(x) from comparisons: 0 at 0 and at NaN, as PyTorch's sgn. Selects, not casts of
    # bools: IREE's cpu code folds (float)mask * y into a select, losing 0 * inf = NaN.
    sign = f.where(x > 0, 1.0, f.where(x < 0, -1.0, 0.0))
    return (g * sign.astype(g.dtype),)


def grad_relu(node: Node, g: Handle, f: Algebra) -> Grads:
    # PyTorch's threshold_backward on the output: blocked where out <= 0, so NaN passes g
    return (f.where(f.tensor(node) <= 0, 0.0, g),)


def grad_exp(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g * f.tensor(node),)


def grad_log(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g / f.tensor(node.src[0]),)


def grad_sqrt(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g / (f.tensor(node) * 2.0),)


def grad_rsqrt(node: Node, g: Handle, f: Algebra) -> Grads:
    out = f.tensor(node)
    return (g * (out * out * out) * -0.5,)


def grad_tanh(node: Node, g: Handle, f: Algebra) -> Grads:
    out = f.tensor(node)
    return (g * (1.0 - out * out),)


def grad_sin(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g * f.tensor(node.src[0]).cos(),)


def grad_cos(node: Node, g: Handle, f: Algebra) -> Grads:
    return (-(g * f.tensor(node.src[0]).sin()),)


def grad_sigmoid(node: Node, g: Handle, f: Algebra) -> Grads:
    out = f.tensor(node)
    return (g * ((1.0 - out) * out),)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def grad_erf(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (g * ((-(x * x)).exp() * _TWO_OVER_SQRT_PI),)


def grad_gelu(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    # exact GELU: d/dx x*Phi(x) = Phi(x) + x*phi(x)
    cdf = (f.unary("erf", x * _INV_SQRT_2) + 1.0) * 0.5
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


def grad_expm1(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g * (f.tensor(node) + 1.0),)


def grad_log1p(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g / (f.tensor(node.src[0]) + 1.0),)


def grad_tan(node: Node, g: Handle, f: Algebra) -> Grads:
    out = f.tensor(node)
    return (g * (out * out + 1.0),)


def grad_asin(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (g * (1.0 - x * x).rsqrt(),)


def grad_acos(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (-(g * (1.0 - x * x).rsqrt()),)


def grad_atan(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (g / (x * x + 1.0),)


def grad_sinh(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g * f.unary("cosh", f.tensor(node.src[0])),)


def grad_cosh(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g * f.unary("sinh", f.tensor(node.src[0])),)


def grad_asinh(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (g * (x * x + 1.0).rsqrt(),)


def grad_acosh(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (g * (x * x - 1.0).rsqrt(),)


def grad_atanh(node: Node, g: Handle, f: Algebra) -> Grads:
    x = f.tensor(node.src[0])
    return (g / (1.0 - x * x),)


def grad_atan2(node: Node, g: Handle, f: Algebra) -> Grads:
    y, x = f.tensor(node.src[0]), f.tensor(node.src[1])
    r2 = x * x + y * y
    return to_source(g * (x / r2), node.src[0]), to_source(-(g * (y / r2)), node.src[1])


def grad_zero(node: Node, g: Handle, f: Algebra) -> Grads:
    # a step function: zero almost everywhere, and PyTorch's 0 at the steps as well
    return (f.full(g.shape, 0, g.dtype, g.device),)


def grad_astype(node: Node, g: Handle, f: Algebra) -> Grads:
    # only float -> float casts are on a gradient path (integers carry no gradient)
    return (g.astype(node.src[0].dtype),)


ELEMENTWISE: dict[str, OpDef] = table(
    # arithmetic: IEEE-exact operations, identical everywhere
    OpDef("add", rules.binary, emit.arith("add"), ref.arith(np.add), True, inputs="number", gradient=grad_add,
          spelling=Spelling("add", "Elementwise ``a + b``.")),
    OpDef("sub", rules.binary, emit.arith("subtract"), ref.arith(np.subtract), True, inputs="number", gradient=grad_sub,
          spelling=Spelling("subtract", "Elementwise ``a - b``.")),
    OpDef("mul", rules.binary, emit.arith("multiply"), ref.arith(np.multiply), True, inputs="number", gradient=grad_mul,
          spelling=Spelling("multiply", "Elementwise ``a * b``.")),
    OpDef("div", rules.division, emit.arith("divide"), ref.arith(np.divide), True, inputs="number", gradient=grad_div,
          spelling=Spelling("divide", "Elementwise ``a / b`` (true division: integers give float32).")),
    OpDef("maximum", rules.binary, emit.select_binary(select_max), ref.arith(ref.select_max), True,
          inputs="number", gradient=grad_maximum,
          spelling=Spelling("maximum", "Elementwise maximum; NaN in either operand gives NaN (PyTorch semantics).", methods=("maximum",))),
    OpDef("minimum", rules.binary, emit.select_binary(select_min), ref.arith(ref.select_min), True,
          inputs="number", gradient=grad_minimum,
          spelling=Spelling("minimum", "Elementwise minimum; NaN in either operand gives NaN (PyTorch semantics).", methods=("minimum",))),
    OpDef("floor_divide", rules.binary, floor_division.divmod_emitter(0), ref.arith(np.floor_divide), True,
          inputs="number", gradient=grad_floor_divide, refuses=NO_FMOD,
          spelling=Spelling("floor_divide", "Elementwise ``a // b``: the quotient rounded toward minus infinity (NumPy's values; an integer divided by zero gives 0).")),
    OpDef("remainder", rules.binary, floor_division.divmod_emitter(1), ref.arith(np.remainder), True,
          inputs="number", gradient=grad_remainder, refuses=NO_FMOD,
          spelling=Spelling("remainder", "Elementwise ``a % b``, with the sign of ``b`` (NumPy's and Python's; an integer modulo zero gives 0).")),
    OpDef("pow", rules.binary, ieee_pow.emit_pow, ref.arith(ref.power), False, ulp=4, inputs="number",
          gradient=grad_pow, refuses=NO_F64_VULKAN,
          spelling=Spelling("power", "Elementwise ``a ** b``.")),
    # comparisons: bool results, no gradient
    OpDef("eq", rules.compare, emit.compare("EQ"), ref.compare(np.equal), True,
          spelling=Spelling("equal", "Elementwise ``a == b`` (bool).")),
    OpDef("ne", rules.compare, emit.compare("NE"), ref.compare(np.not_equal), True,
          spelling=Spelling("not_equal", "Elementwise ``a != b`` (bool; true where either is NaN).")),
    OpDef("lt", rules.compare, emit.compare("LT"), ref.compare(np.less), True,
          spelling=Spelling("less", "Elementwise ``a < b`` (bool).")),
    OpDef("le", rules.compare, emit.compare("LE"), ref.compare(np.less_equal), True,
          spelling=Spelling("less_equal", "Elementwise ``a <= b`` (bool).")),
    OpDef("gt", rules.compare, emit.compare("GT"), ref.compare(np.greater), True,
          spelling=Spelling("greater", "Elementwise ``a > b`` (bool).")),
    OpDef("ge", rules.compare, emit.compare("GE"), ref.compare(np.greater_equal), True,
          spelling=Spelling("greater_equal", "Elementwise ``a >= b`` (bool).")),
    OpDef("where", rules.where, emit.emit_where, ref.where, True, gradient=grad_where),
    # exact unary ops and casts
    OpDef("neg", rules.unary, emit.unary("negate"), ref.unary(np.negative), True, inputs="number", gradient=grad_neg,
          spelling=Spelling("negative", "Elementwise negation.", methods=("negative",))),
    OpDef("abs", rules.unary, emit.unary("abs"), ref.unary(np.abs), True, inputs="number", gradient=grad_abs,
          spelling=Spelling("abs", "Elementwise absolute value.", methods=("abs",))),
    OpDef("relu", rules.unary, emit.emit_relu, ref.relu, True, inputs="number", gradient=grad_relu,
          spelling=Spelling("relu", "max(x, 0); NaN stays NaN (PyTorch semantics).", methods=("relu",))),
    # rounding and sign: exact; an integer is its own floor (the Array API's rule: NumPy would
    # return float64); no gradient flows through a step
    OpDef("floor", rules.unary, emit.rounding("floor"), ref.integral(np.floor), True, inputs="number",
          gradient=grad_zero, spelling=Spelling("floor", "Elementwise largest integer <= x (integers unchanged).", methods=("floor",))),
    OpDef("ceil", rules.unary, emit.rounding("ceil"), ref.integral(np.ceil), True, inputs="number",
          gradient=grad_zero, spelling=Spelling("ceil", "Elementwise smallest integer >= x (integers unchanged).", methods=("ceil",))),
    OpDef("trunc", rules.unary, emit.emit_trunc, ref.integral(np.trunc), True, inputs="number",
          gradient=grad_zero, spelling=Spelling("trunc", "Elementwise x rounded toward zero (integers unchanged).", methods=("trunc",))),
    OpDef("round", rules.unary, emit.rounding("round_nearest_even"), ref.integral(np.rint), True,
          inputs="number", gradient=grad_zero, spelling=Spelling("round", "Elementwise x rounded to the nearest integer, ties to even (integers unchanged).", methods=("round",))),
    OpDef("sign", rules.unary, emit.emit_sign, ref.sign, True, inputs="number", gradient=grad_zero,
          spelling=Spelling("sign", "Elementwise 1 above zero, -1 below, 0 at zero, NaN for NaN.", methods=("sign",))),
    OpDef("astype", rules.cast, emit.emit_astype, ref.astype, True, gradient=grad_astype),
    OpDef("bitcast", rules.bitcast, emit.emit_bitcast, ref.bitcast, True),
    # bitwise, integers only: the random-number generator (vkml.frontend.random) is built from
    # these, add and bitcast, so its bits are the same on every device
    OpDef("bitwise_and", rules.binary, emit.bitwise("and"), ref.bitwise(np.bitwise_and), True, inputs="integer",
          spelling=Spelling("bitwise_and", "Elementwise ``a & b`` (integers only).")),
    OpDef("bitwise_or", rules.binary, emit.bitwise("or"), ref.bitwise(np.bitwise_or), True, inputs="integer",
          spelling=Spelling("bitwise_or", "Elementwise ``a | b`` (integers only).")),
    OpDef("bitwise_xor", rules.binary, emit.bitwise("xor"), ref.bitwise(np.bitwise_xor), True, inputs="integer",
          spelling=Spelling("bitwise_xor", "Elementwise ``a ^ b`` (integers only).")),
    OpDef("left_shift", rules.binary, emit.bitwise("shift_left"), ref.bitwise(ref.shift(left=True)), True,
          inputs="integer",
          spelling=Spelling("left_shift", "Elementwise ``a << b`` (integers only); an amount outside [0, bits) gives 0.")),
    OpDef("right_shift", rules.binary, emit.emit_right_shift, ref.bitwise(ref.shift(left=False)), True,
          inputs="integer",
          spelling=Spelling("right_shift", "Elementwise ``a >> b`` (integers only): logical on uint32, arithmetic on signed integers; an amount outside [0, bits) gives 0, or -1 for a negative signed ``a``.")),
    # transcendental: each device's own approximation, bounded against the reference
    OpDef("exp", rules.unary, f64.with_float64("exp", emit.unary("exponential")), ref64.with_float64("exp", ref.unary(np.exp)), False, ulp=4, inputs="float",
          gradient=grad_exp,
          spelling=Spelling("exp", "Elementwise e**x.", methods=("exp",))),
    OpDef("log", rules.unary, f64.with_float64("log", emit.unary("log")), ref64.with_float64("log", ref.unary(np.log)), False, ulp=4, inputs="float",
          gradient=grad_log,
          spelling=Spelling("log", "Elementwise natural logarithm.", methods=("log",))),
    OpDef("sqrt", rules.unary, emit.unary("sqrt"), ref.unary(np.sqrt), False, ulp=2, inputs="float",
          gradient=grad_sqrt,
          spelling=Spelling("sqrt", "Elementwise square root.", methods=("sqrt",))),
    OpDef("rsqrt", rules.unary, emit.unary("rsqrt"), ref.unary(ref.rsqrt), False, ulp=4, inputs="float",
          gradient=grad_rsqrt,
          spelling=Spelling("rsqrt", "Elementwise 1 / sqrt(x).", methods=("rsqrt",))),
    OpDef("tanh", rules.unary, f64.with_float64("tanh", emit.unary("tanh")), ref64.with_float64("tanh", ref.unary(np.tanh)), False, ulp=8, inputs="float",
          gradient=grad_tanh,
          spelling=Spelling("tanh", "Elementwise hyperbolic tangent.", methods=("tanh",))),
    OpDef("sin", rules.unary, f64.with_float64("sin", emit.unary("sine"), narrow=True), ref64.with_float64("sin", ref.unary(np.sin), narrow=True), False, ulp=16, inputs="float",
          gradient=grad_sin,
          spelling=Spelling("sin", "Elementwise sine.", methods=("sin",))),
    OpDef("cos", rules.unary, f64.with_float64("cos", emit.unary("cosine"), narrow=True), ref64.with_float64("cos", ref.unary(np.cos), narrow=True), False, ulp=16, inputs="float",
          gradient=grad_cos,
          spelling=Spelling("cos", "Elementwise cosine.", methods=("cos",))),
    OpDef("sigmoid", rules.unary, f64.with_float64("sigmoid", emit.unary("logistic")), ref64.with_float64("sigmoid", ref.unary(ref.sigmoid)), False, ulp=8,
          inputs="float", gradient=grad_sigmoid,
          spelling=Spelling("sigmoid", "Elementwise 1 / (1 + exp(-x)).", methods=("sigmoid",))),
    OpDef("erf", rules.unary, emit.unary("erf", chlo=True), ref.unary(ref.erf), False, ulp=8,
          inputs="float", gradient=grad_erf, refuses=NO_F64_VULKAN,
          spelling=Spelling("erf", "Elementwise error function.", methods=("erf",))),
    OpDef("gelu", rules.unary, emit.emit_gelu, ref.unary(ref.gelu), False, ulp=16, inputs="float",
          gradient=grad_gelu, refuses=NO_F64_VULKAN,
          spelling=Spelling("gelu", "Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))).", methods=("gelu",))),
    OpDef("expm1", rules.unary, f64.with_float64("expm1", accurate.emit_expm1), ref64.with_float64("expm1", ref.unary(np.expm1)), False, ulp=4,
          inputs="float", gradient=grad_expm1,
          spelling=Spelling("expm1", "Elementwise e**x - 1, accurate near 0.", methods=("expm1",))),
    OpDef("log1p", rules.unary, f64.with_float64("log1p", accurate.emit_log1p), ref64.with_float64("log1p", ref.unary(np.log1p)), False, ulp=4,
          inputs="float", gradient=grad_log1p,
          spelling=Spelling("log1p", "Elementwise log(1 + x), accurate near 0.", methods=("log1p",))),
    OpDef("tan", rules.unary, f64.with_float64("tan", accurate.emit_tan, narrow=True), ref64.with_float64("tan", ref.unary(np.tan), narrow=True), False, ulp=256,
          inputs="float", gradient=grad_tan,
          spelling=Spelling("tan", "Elementwise tangent.", methods=("tan",))),
    OpDef("asin", rules.unary, f64.with_float64("asin", emit.unary("asin", chlo=True)), ref64.with_float64("asin", ref.unary(np.arcsin)), False, ulp=16,
          inputs="float", gradient=grad_asin,
          spelling=Spelling("asin", "Elementwise inverse sine.", methods=("asin",))),
    OpDef("acos", rules.unary, f64.with_float64("acos", emit.unary("acos", chlo=True)), ref64.with_float64("acos", ref.unary(np.arccos)), False, ulp=32,
          inputs="float", gradient=grad_acos,
          spelling=Spelling("acos", "Elementwise inverse cosine.", methods=("acos",))),
    OpDef("atan", rules.unary, f64.with_float64("atan", emit.unary("atan", chlo=True)), ref64.with_float64("atan", ref.unary(np.arctan)), False, ulp=16,
          inputs="float", gradient=grad_atan,
          spelling=Spelling("atan", "Elementwise inverse tangent.", methods=("atan",))),
    OpDef("sinh", rules.unary, f64.with_float64("sinh", accurate.emit_sinh), ref64.with_float64("sinh", ref.unary(np.sinh)), False, ulp=16,
          inputs="float", gradient=grad_sinh,
          spelling=Spelling("sinh", "Elementwise hyperbolic sine.", methods=("sinh",))),
    OpDef("cosh", rules.unary, f64.with_float64("cosh", emit.unary("cosh", chlo=True)), ref64.with_float64("cosh", ref.unary(np.cosh)), False, ulp=16,
          inputs="float", gradient=grad_cosh,
          spelling=Spelling("cosh", "Elementwise hyperbolic cosine.", methods=("cosh",))),
    OpDef("asinh", rules.unary, f64.with_float64("asinh", accurate.emit_asinh), ref64.with_float64("asinh", ref.unary(np.arcsinh)), False, ulp=16,
          inputs="float", gradient=grad_asinh,
          spelling=Spelling("asinh", "Elementwise inverse hyperbolic sine.", methods=("asinh",))),
    OpDef("acosh", rules.unary, f64.with_float64("acosh", emit.unary("acosh", chlo=True)), ref64.with_float64("acosh", ref.unary(np.arccosh)), False, ulp=16,
          inputs="float", gradient=grad_acosh,
          spelling=Spelling("acosh", "Elementwise inverse hyperbolic cosine.", methods=("acosh",))),
    OpDef("atanh", rules.unary, f64.with_float64("atanh", accurate.emit_atanh), ref64.with_float64("atanh", ref.unary(np.arctanh)), False, ulp=16,
          inputs="float", gradient=grad_atanh,
          spelling=Spelling("atanh", "Elementwise inverse hyperbolic tangent.", methods=("atanh",))),
    OpDef("atan2", rules.binary, f64.with_float64("atan2", accurate.emit_atan2), ref64.with_float64("atan2", ref.arith(np.arctan2)), False, ulp=32,
          inputs="float", gradient=grad_atan2,
          spelling=Spelling("atan2", "Elementwise angle of the point (b, a) in radians, in [-pi, pi] (floats; integers are converted to float32).")),
)  # fmt: skip
