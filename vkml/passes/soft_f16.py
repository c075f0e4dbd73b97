"""Replace every float32 -> float16 / bfloat16 ``stablehlo.convert`` by integer rounding.

Invariant: after this pass no ``stablehlo.convert`` from an f32 or f64 tensor to an f16 or
bf16 tensor remains; each became the 32-bit integer recipe of ``vkml.dialect.soft_narrow``
ending in a ``stablehlo.bitcast_convert`` from ui16, so the rounding (ties to even, correct
subnormals, NumPy's and ml_dtypes' NaN rules) is the same on every target. f64 sources are
first rounded to odd float32, so they too are rounded exactly once. Widening converts are
left as they are.
"""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of
from vkml.dialect.soft_narrow import narrow_f32, narrow_f64
from vkml.dtypes import bfloat16, float16

ARGUMENT = "vkml-soft-f16"
DESCRIPTION = "round f32 -> f16/bf16 converts with integer arithmetic, the same on every target"

_NARROW = {"f16": float16, "bf16": bfloat16}


def _element(t: ir.Type) -> str:
    return str(ir.RankedTensorType(t).element_type)


def _is_narrowing(op: ir.Operation) -> bool:
    if op.name != "stablehlo.convert":
        return False
    return (
        _element(op.operands[0].type) in ("f32", "f64") and _element(op.results[0].type) in _NARROW
    )


def run(module: ir.Operation) -> None:
    """Rewrite each f32/f64 -> f16/bf16 convert of ``module`` (a builtin.module op) in place."""
    for op in find_ops(module, _is_narrowing):
        b = FunctionBuilder("narrow")
        x = b.arg(tensor_type_of(op.operands[0].type))
        narrow = narrow_f32 if x.dtype.bits == 32 else narrow_f64
        b.ret([narrow(b, x, _NARROW[_element(op.results[0].type)])])
        replace_with_function_body(op, b.module_text())
