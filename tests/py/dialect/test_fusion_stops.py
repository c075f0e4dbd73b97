"""Fusion fusion stops (vkml/dialect/fusion_stops.py): every dtype crosses one, bit for bit, and a fusion stop
costs no queue submission where an optimization barrier costs one."""

from __future__ import annotations

import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from vkml.compiler import lower
from vkml.compiler.target import CPU_TARGET
from vkml.dialect.fusion_stops import FUSION_STOP
from vkml.dialect.ir import compile_stablehlo, ir, parse_module
from vkml.dialect.rewrite import stop_fusion

DTYPES = ("float32", "float16", "bfloat16", "int32", "int64", "uint32", "bool")


def _chain(dtype: str, device: vkml.Device) -> list[vkml.Tensor]:
    x = vkml.tensor(np.arange(6).reshape(2, 3) % 3, device=device).astype(dtype)
    y = x
    out = []
    for _ in range(6):
        y = vkml.where(y == x, y, x) if dtype == "bool" else vkml.maximum(y, x) + x
        out.append(y)
    return out


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_value_of_every_dtype_crosses_the_lowering_fences(
    device: str, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lowering fusion stops the live values every SEGMENT_NODES nodes (cut to 4 here): a
    uint32 value crosses as its int32 bits (IREE 3.13 cannot legalize a fusion stop of ui32)."""
    monkeypatch.setattr(lower, "SEGMENT_NODES", 4)
    dev = vkml.device(device)
    if not dev.supports("astype", vkml.dtypes.to_dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    got = _chain(dtype, dev)
    assert vkml.emit_mlir(*got).count(FUSION_STOP) >= 2
    vkml.realize(*got)
    for k, (g, w) in enumerate(zip(got, _chain(dtype, vkml.reference))):
        assert_bit_exact(g.numpy(), w.numpy(), f"{dtype} value {k}")


UNSIGNED = """func.func @main(%a: tensor<4xui32>) -> tensor<4xui32> {
  %0 = stablehlo.add %a, %a : tensor<4xui32>
  %1 = stablehlo.multiply %0, %a : tensor<4xui32>
  return %1 : tensor<4xui32>
}"""


def test_a_fusion_stop_of_an_unsigned_value_compiles() -> None:
    with ir.Context() as context:
        module = parse_module(UNSIGNED, context)
        add = module.body.operations[0].regions[0].blocks[0].operations[0]
        mul = module.body.operations[0].regions[0].blocks[0].operations[1]
        mul.operands[0] = stop_fusion(add.results[0], add)
        text = str(module)
    assert f"{FUSION_STOP}" in text and "tensor<4xi32>" in text
    compile_stablehlo(text, CPU_TARGET.backend, list(CPU_TARGET.flags), timeout=300)
