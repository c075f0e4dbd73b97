"""Replace every float32 -> float16 / bfloat16 ``stablehlo.convert`` by integer rounding.

Invariant: after this pass no ``stablehlo.convert`` from a float tensor to a float16 or
bfloat16 tensor of the other type remains (f32, f64, and f16 <-> bf16); each became the
32-bit integer recipe of ``vkml.dialect.soft_narrow`` ending in a ``stablehlo.bitcast_convert``
from ui16, so the rounding (ties to even, correct subnormals, NumPy's and ml_dtypes' NaN rules)
is the same on every target. f64 sources are first rounded to odd float32, f16 and bf16 ones
widened exactly, so they too are rounded exactly once. Widening converts are left as they are.
"""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of
from vkml.dialect.soft_narrow import convert_16, narrow_f32, narrow_f64
from vkml.dtypes import bfloat16, float16

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
