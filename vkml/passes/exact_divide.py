"""Replace every float32 ``stablehlo.divide`` by correctly rounded integer long division.

Invariant: after this pass no ``stablehlo.divide`` of float32 tensors remains; each became the
32-bit integer recipe of ``vkml.dialect.exact_divide`` between two bitcasts, so the quotient
is IEEE 754's (ties to even, subnormals kept) whatever the target's divide instruction does.
Vulkan allows OpFDiv 2.5 ULP of error; an NVIDIA H200 (driver 580) was 1 ULP off in 2 of ~24
quotients (ADR 0011). Only Vulkan compiles run it: llvm-cpu divides correctly.
"""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.exact_divide import divide_f32
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of

ARGUMENT = "vkml-exact-divide"
DESCRIPTION = "compute float32 division with integer arithmetic, correctly rounded on every target"


def _is_f32_divide(op: ir.Operation) -> bool:
    if op.name != "stablehlo.divide":
        return False
    return str(ir.RankedTensorType(op.results[0].type).element_type) == "f32"


def run(module: ir.Operation) -> None:
    """Rewrite each float32 divide of ``module`` (a builtin.module op) in place."""
    for op in find_ops(module, _is_f32_divide):
        b = FunctionBuilder("divide")
        t = tensor_type_of(op.operands[0].type)
        x, y = b.arg(t), b.arg(t)
        b.ret([divide_f32(b, x, y)])
        replace_with_function_body(op, b.module_text())
