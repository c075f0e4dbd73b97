"""Replace every float32 -> float16 / bfloat16 ``stablehlo.convert`` by integer rounding.

Invariant: after this pass no ``stablehlo.convert`` from a float tensor to a float16 or
bfloat16 tensor of the other type remains (f32, f64, and f16 <-> bf16); each became the
32-bit integer recipe below, ending in a ``stablehlo.bitcast_convert``
from ui16, so the rounding (ties to even, correct subnormals, NumPy's and ml_dtypes' NaN rules)
is the same on every target. f64 sources are first rounded to odd float32, f16 and bf16 ones
widened exactly, so they too are rounded exactly once. Widening converts are left as they are.

The recipe below: float32 -> float16 / bfloat16 rounding spelled as 32-bit integer arithmetic (and
float16 <-> bfloat16 conversion through it).

Hardware and compiler conversions differ between targets (NaN payloads, flush-to-zero of
subnormals, and on one measured Vulkan target plainly wrong results), so vkml never relies on
them: every narrowing is this integer recipe, which gives the same bits on every device.

The result equals NumPy's ``astype(np.float16)`` and ml_dtypes' ``astype(bfloat16)`` bit for
bit for all 2**32 inputs:

- finite values: IEEE 754 roundTiesToEven, subnormals rounded correctly (never flushed),
  signed zeros kept, overflow to infinity of the same sign;
- NaN to float16 (NumPy's rule): sign kept, the top 10 payload bits kept as they are (the
  quiet bit is not forced, so a signalling NaN stays signalling); if those 10 bits are all
  zero the lowest payload bit is set so the result is still a NaN;
- NaN to bfloat16 (ml_dtypes' rule): sign kept, payload dropped: ``0x7FC0`` or ``0xFFC0``.

Between float16 and bfloat16 (``convert_16``) the source is widened exactly to float32 and
rounded by the same recipe, except that a bfloat16 NaN becomes float16's quiet NaN of its
sign, ``0x7E00`` / ``0xFE00``, as ml_dtypes' direct conversion does.
"""

from __future__ import annotations

import numpy as np

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.intbits import and_mask, const_like, or_mask, shr
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of
from vkml.dialect.types import Value
from vkml.dtypes import DType, bfloat16, float16, float32, float64, uint32

ARGUMENT = "vkml-soft-f16"
DESCRIPTION = "round every convert to f16/bf16 with integer arithmetic, the same on every target"

_NARROW = {"f16": float16, "bf16": bfloat16}


def _element(t: ir.Type) -> str:
    return str(ir.RankedTensorType(t).element_type)


def _is_narrowing(op: ir.Operation) -> bool:
    if op.name != "stablehlo.convert":
        return False
    source, target = _element(op.operands[0].type), _element(op.results[0].type)
    return target in _NARROW and source in ("f32", "f64", "f16", "bf16") and source != target


def run(module: ir.Operation) -> None:
    """Rewrite each float -> f16/bf16 convert of ``module`` (a builtin.module op) in place."""
    for op in find_ops(module, _is_narrowing):
        b = FunctionBuilder("narrow")
        x = b.arg(tensor_type_of(op.operands[0].type))
        narrow = {64: narrow_f64, 32: narrow_f32, 16: convert_16}[x.dtype.bits]
        b.ret([narrow(b, x, _NARROW[_element(op.results[0].type)])])
        replace_with_function_body(op, b.module_text())


# -- the recipe ---------------------------------------------------------------------------

# vkml has no 16-bit integer dtype; this one only carries bits between ui32 and the float
_UINT16 = DType("uint16", "uint", 16, "ui16", np.dtype(np.uint16))

_F32_ABS_MASK = 0x7FFFFFFF
_F32_INF = 0x7F800000
_F16_INF = 0x7C00
_F16_QUIET_NAN = 0x7E00
_BF16_INF = 0x7F80
# float32 bits of 2**-14, the smallest normal float16: below it the result is subnormal
_F16_MIN_NORMAL = 0x38800000
# float32 exponent bias (127) minus float16 bias (15), in exponent position
_F16_REBIAS = 112 << 23


def narrow_f32(b: FunctionBuilder, x: Value, target: DType) -> Value:
    """Round the float32 tensor ``x`` to ``target`` (float16 or bfloat16) with integer ops."""
    if x.dtype is not float32 or target not in (float16, bfloat16):
        raise ValueError(f"narrow_f32 rounds f32 to f16 or bf16, not {x.dtype} to {target}")
    return _as_16_bit(b, _narrowed_bits(b, b.bitcast(x, uint32), target), target)


def convert_16(b: FunctionBuilder, x: Value, target: DType) -> Value:
    """Convert the float16 tensor ``x`` to bfloat16, or the bfloat16 one to float16, rounded
    once, as ml_dtypes' ``astype`` does: ``x`` is widened exactly to float32 and rounded by
    the integer recipe; a NaN becomes the quiet NaN of its sign (``0x7FC0`` / ``0x7E00``).

    IREE is never given the direct conversion: its codegen drops the bfloat16 rounding of
    ``f16 -> bf16`` when a widening convert follows (``tests/py/frontend/test_cast_chains.py``).
    """
    if {x.dtype, target} != {float16, bfloat16}:
        raise ValueError(f"convert_16 converts f16 <-> bf16, not {x.dtype} to {target}")
    if x.dtype is float16:
        # every float16 is a normal float32: the widening is exact on every target
        wide = b.bitcast(b.convert(x, float32), uint32)
        return _as_16_bit(b, _narrowed_bits(b, wide, bfloat16), bfloat16)
    h = b.convert(b.bitcast(x, _UINT16), uint32)
    wide = b.binary("shift_left", h, const_like(b, h, 16))  # the float32 bits, exactly
    is_nan = b.compare("GT", and_mask(b, h, 0x7FFF), const_like(b, h, _BF16_INF))
    quiet_nan = or_mask(b, and_mask(b, h, 0x8000), _F16_QUIET_NAN)
    bits = b.select(is_nan, quiet_nan, _narrowed_bits(b, wide, float16))
    return _as_16_bit(b, bits, float16)


def _narrowed_bits(b: FunctionBuilder, u: Value, target: DType) -> Value:
    """The float32 bits ``u`` (ui32) rounded to ``target``: its 16 bits, in a ui32."""
    sign = and_mask(b, shr(b, u, 16), 0x8000)
    a = and_mask(b, u, _F32_ABS_MASK)
    is_nan = b.compare("GT", a, const_like(b, a, _F32_INF))
    if target is float16:
        kept = shr(b, a, 13)  # the bits float16 keeps of |x|
        magnitude = b.select(is_nan, _f16_nan(b, kept), _f16_finite(b, a, kept))
    else:
        magnitude = b.select(is_nan, const_like(b, a, 0x7FC0), _bf16_finite(b, a))
    return b.binary("or", sign, magnitude)


def _as_16_bit(b: FunctionBuilder, bits: Value, target: DType) -> Value:
    return b.bitcast(b.convert(bits, _UINT16), target)


def narrow_f64(b: FunctionBuilder, x: Value, target: DType) -> Value:
    """Round the float64 tensor ``x`` to ``target`` (float16 or bfloat16) exactly once.

    Two roundings (f64 -> f32 -> f16) can land on a float16 tie and round the wrong way. So
    the first step rounds to odd: keep the float32 neighbour toward zero and set its lowest
    bit when anything was dropped. float32 has at least two more bits than either target, so
    the second, nearest-even rounding then gives the correctly rounded result.
    """
    if x.dtype is not float64:
        raise ValueError(f"narrow_f64 rounds f64, not {x.dtype}")
    nearest = b.emit(
        f"stablehlo.convert {x.name} : ({x.type}) -> {x.type.with_dtype(float32)}",
        x.type.with_dtype(float32),
    )
    back = b.emit(f"stablehlo.convert {nearest.name} : ({nearest.type}) -> {x.type}", x.type)
    bits = b.bitcast(nearest, uint32)
    # nearest-even rounded away from zero: step back to the neighbour toward zero
    away = b.compare("GT", b.unary("abs", back), b.unary("abs", x))
    bits = b.select(away, b.binary("subtract", bits, const_like(b, bits, 1)), bits)
    inexact = b.compare("NE", back, x)  # NaN too: any NaN stays a NaN with its low bit set
    bits = b.select(inexact, b.binary("or", bits, const_like(b, bits, 1)), bits)
    return narrow_f32(b, b.bitcast(bits, float32), target)


def _bf16_finite(b: FunctionBuilder, a: Value) -> Value:
    """|x| to bfloat16 bits: drop 16 bits, ties to even. Overflow carries into the exponent
    and lands exactly on infinity; infinity itself has zero low bits and stays."""
    return _round_shift(b, a, and_mask(b, shr(b, a, 16), 1), 16)


def _f16_finite(b: FunctionBuilder, a: Value, kept: Value) -> Value:
    """|x| (not NaN) to float16 bits; ``kept`` is ``a >> 13``."""
    # normal range: rebias the exponent, drop 13 mantissa bits with ties to even; anything
    # at or above 65520 (and infinity) rounds past 0x7C00 and is clamped to infinity; below
    # 2**-14 the unsigned subtraction wraps, but those lanes take the subnormal result
    lsb = and_mask(b, kept, 1)
    rebiased = b.binary("subtract", a, const_like(b, a, _F16_REBIAS))
    normal = b.binary("minimum", _round_shift(b, rebiased, lsb, 13), const_like(b, a, _F16_INF))
    # subnormal range: the significand with its implicit bit, shifted right by 126 - exponent
    # (14 at 2**-15 .. 24 at 2**-25); the shift is capped at 25, which gives 0 for everything
    # smaller and keeps every shift amount below 32 (where targets disagree); for normal
    # lanes 126 - exponent wraps to a huge unsigned value and is capped too
    significand = b.binary("or", and_mask(b, a, 0x7FFFFF), const_like(b, a, 0x800000))
    exponent = shr(b, a, 23)
    shift = b.binary(
        "minimum", b.binary("subtract", const_like(b, a, 126), exponent), const_like(b, a, 25)
    )
    odd = and_mask(b, b.binary("shift_right_logical", significand, shift), 1)
    subnormal = _round_shift(b, significand, odd, shift)
    return b.select(b.compare("LT", a, const_like(b, a, _F16_MIN_NORMAL)), subnormal, normal)


def _f16_nan(b: FunctionBuilder, kept: Value) -> Value:
    """NumPy's float16 NaN: the top 10 payload bits (``kept`` is ``|x| >> 13``), at least 1."""
    payload = b.binary("maximum", and_mask(b, kept, 0x3FF), const_like(b, kept, 1))
    return b.binary("or", payload, const_like(b, kept, _F16_INF))


def _round_shift(b: FunctionBuilder, v: Value, odd: Value, shift: int | Value) -> Value:
    """``v >> shift`` rounded to nearest, ties to even; ``odd`` is bit 0 of ``v >> shift``.

    Adding ``half - 1 + odd`` carries into the kept bits exactly when the dropped bits are
    above half, or equal to half with an odd result.
    """
    if isinstance(shift, int):
        below_half = const_like(b, v, (1 << (shift - 1)) - 1)
        amount = const_like(b, v, shift)
    else:
        one = const_like(b, v, 1)
        half = b.binary("shift_left", one, b.binary("subtract", shift, one))
        below_half = b.binary("subtract", half, one)
        amount = shift
    biased = b.binary("add", b.binary("add", v, below_half), odd)
    return b.binary("shift_right_logical", biased, amount)
