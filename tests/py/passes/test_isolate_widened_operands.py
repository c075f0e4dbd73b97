"""vkml-isolate-widened-operands: which matmul operands get a dispatch of their own."""

from __future__ import annotations

import numpy as np

import vkml
from vkml.compiler.target import vulkan_target
from vkml.dialect.fusion_stops import FUSION_STOP
from vkml.dialect.ir import compile_stablehlo
from vkml.passes.pipelines import VULKAN_PASSES, pipeline_for
from vkml.passes.run import run_passes

PASS = ("vkml-isolate-widened-operands",)


def _barriers(*roots: vkml.Tensor) -> int:
    return run_passes(vkml.emit_mlir(*roots), PASS).count(FUSION_STOP)


def test_an_operand_widened_and_computed_on_passes_through_a_fence() -> None:
    x = vkml.tensor(np.ones((2, 3), np.float16))
    w = vkml.tensor(np.ones((3, 4), np.float32))
    assert _barriers(x.astype(vkml.float32) * 2.0 @ w) == 1
    assert _barriers(vkml.tensor(np.ones((2, 3), bool)).astype(vkml.float32) @ w) == 1


def test_operands_of_their_own_width_pass_as_they_are() -> None:
    x = vkml.tensor(np.ones((2, 3), np.float16))
    y = vkml.tensor(np.ones((3, 4), np.float16))
    w = vkml.tensor(np.ones((3, 4), np.float32))
    assert _barriers(x @ y, (-x) @ (y * 2.0)) == 0  # 16-bit operands: the matmul widens them
    assert _barriers(vkml.tensor(np.ones((2, 3), np.float32)) * 3.0 @ w) == 0
    assert _barriers(vkml.tensor(np.ones((2, 3), np.int32)).astype(vkml.float32) @ w) == 0


def test_the_fence_costs_no_queue_submission() -> None:
    """IREE's stream IR of a widened-operand matmul after the Vulkan passes: one execution
    region, one host wait. With the optimization barrier the pass used before, two of each."""
    x = vkml.tensor(np.ones((2, 3), np.float16))
    w = vkml.tensor(np.ones((3, 4), np.float32))
    text = run_passes(
        vkml.emit_mlir(x.astype(vkml.float32) * 2.0 @ w), pipeline_for("vulkan-spirv")
    )
    flags = [*vulkan_target("llvmpipe", float64=False).flags, "--compile-to=stream"]
    stream = compile_stablehlo(text, "vulkan-spirv", flags, timeout=300).decode()
    assert text.count(FUSION_STOP) == 1
    assert stream.count("stream.cmd.execute") == 1
    assert stream.count("stream.timepoint.await") == 1


def test_only_vulkan_compiles_run_it() -> None:
    assert PASS[0] in VULKAN_PASSES
    assert PASS[0] not in pipeline_for("llvm-cpu")
