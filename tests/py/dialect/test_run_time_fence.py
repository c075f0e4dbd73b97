"""What a Vulkan module hides behind the run-time fence (vkml/dialect/run_time_fence.py): every
value IREE could fold into a literal, not only the literals vkml writes (ADR 0009)."""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import TensorType
from vkml.dtypes import float32, int32


def test_values_computed_from_constants_and_empty_values_are_static() -> None:
    b = FunctionBuilder(fence_float_ops=True)
    x = b.arg(TensorType((4,), float32))
    empty = b.arg(TensorType((4, 0), float32))
    zeros = b.constant(0.0, float32, (1, 4))
    assert not b.is_static(x)
    assert b.is_static(zeros)
    assert b.is_static(b.reshape(zeros, (4,)))
    assert b.is_static(b.transpose(zeros, (1, 0)))
    assert b.is_static(b.reduce(empty, [1], "add", b.constant(0.0, float32)))
    assert not b.is_static(b.reduce(b.reshape(x, (4, 1)), [1], "add", b.constant(0.0, float32)))
    assert not b.is_static(b.binary("add", b.reshape(zeros, (4,)), x))


def test_a_loop_over_run_time_values_is_not_static() -> None:
    b = FunctionBuilder(fence_float_ops=True)
    i = b.constant(0, int32)
    with b.block([i.type]) as test:
        test.yield_([b.compare("LT", test.args[0], b.constant(3, int32))])
    with b.block([i.type]) as step:
        step.yield_([b.binary("add", step.args[0], b.constant(1, int32))])
    (turns,) = b.while_loop([i], test, step)
    assert not b.is_static(turns)


def test_a_static_operand_of_float_arithmetic_is_hidden() -> None:
    """``x * zeros.reshape(4)``: IREE folds the reshape into the literal 0.0, and lavapipe then
    folds ``x * 0.0`` to 0 (NaN for NaN and inf)."""
    b = FunctionBuilder(fence_float_ops=True)
    x = b.arg(TensorType((4,), float32))
    zeros = b.reshape(b.constant(0.0, float32, (1, 4)), (4,))
    product = b.binary("multiply", x, zeros)
    b.ret([product])
    (multiply,) = [line for line in b.lines if "stablehlo.multiply" in line]
    operands = multiply.split("stablehlo.multiply")[1].split(":")[0]
    assert zeros.name not in operands.replace(",", " ").split()
    assert any(f"stablehlo.bitcast_convert {zeros.name} " in line for line in b.lines)
