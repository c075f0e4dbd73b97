"""vkml.compiler.loop_budget and the capped-target compile: a dispatch that could run past a
driver's shader loop cap (lavapipe's 65,535 iterations per invocation) fails to compile
instead of returning a wrong answer. Compile-only: no Vulkan device needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from vkml.compiler import compile as pipeline, dispatch_dump, loop_budget
from vkml.compiler.cache import cache_key
from vkml.compiler.target import parse_precompile_targets, vulkan_target
from vkml.dialect.ir import compile_stablehlo
from vkml.errors import CompileError
from vkml.passes import split_contractions
from vkml.passes.registry import LOOP_CAP_PASSES, pipeline_for

CAP = 65_535
LAVAPIPE = vulkan_target("llvmpipe", float64=True, loop_cap=CAP)

NESTED = """
func.func @kernel() {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1_i32 = arith.constant 1 : i32
  %c100_i32 = arith.constant 100 : i32
  %c2 = arith.constant 2 : index loc("x":1:2)
  %lb = arith.muli %c0, %c4 : index
  scf.for %i = %c0 to %c4 step %c1 : index {
    scf.for %j = %c0_i32 to %c100_i32 step %c1_i32 : i32 {
      %s = "foo.op"() {text = "}{"} : () -> i32
    }
  }
  scf.for %k = %lb to %c4 step %c2 : index {
  }
  return
}
func.func @unbounded(%n: i32) {
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  scf.for %i = %c0_i32 to %n step %c1_i32 : i32 {
  }
  return
}
"""


def test_budget_sums_each_loop_times_the_loops_around_it() -> None:
    found = {b.function: b for b in loop_budget.budgets(NESTED.replace("%c1 :", "%c1 :"))}
    # %c1 (index) is not defined: the outer loop's step is unknown
    assert found["kernel"].iterations is None
    fixed = NESTED.replace(
        "%c0 = arith.constant 0 : index",
        "%c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index",
    )
    found = {b.function: b for b in loop_budget.budgets(fixed)}
    # 4 + 4 * 100 inside it, then 2 more (a lower bound that is not a constant counts as 0)
    assert found["kernel"].iterations == 4 + 400 + 2
    assert found["kernel"].loops == (4, 100, 2)
    assert found["unbounded"].iterations is None


def test_while_loops_have_no_budget() -> None:
    text = "func.func @w() {\n  scf.while : () -> () {\n  }\n  return\n}\n"
    [budget] = loop_budget.budgets(text)
    assert budget.iterations is None


# IREE's own fill of 64-bit patterns (__builtin_fill_i64) as it reaches the check, trimmed: a
# loop over workgroups whose bound is the element count, which IREE asserts with assume.int.
FILL = """
func.func @__builtin_fill_i64() {
  %c8_i32 = arith.constant 8 : i32 loc(unknown)
  %0 = hal.interface.constant.load layout(<constants = 1>) ordinal(0) : i32 loc("-":16:48)
  %1 = util.assume.int %0[<umin = 4, umax = 4, udiv = 4>, <umin = 1, umax = COUNT>] : i32
  %thread_id_x = gpu.thread_id x upper_bound 8 loc("-":21:12)
  %workgroup_id_x = hal.interface.workgroup.id[0] upper_bound 65535 : index loc("-":21:12)
  %workgroup_count_x = hal.interface.workgroup.count[0] upper_bound 65535 : index
  %4 = arith.index_castui %workgroup_id_x : index to i32 loc("-":21:12)
  %5 = arith.muli %4, %c8_i32 overflow<nsw> : i32 loc("-":21:12)
  %6 = arith.index_castui %workgroup_count_x : index to i32 loc("-":21:12)
  %7 = arith.muli %6, %c8_i32 overflow<nsw> : i32 loc("-":21:12)
  scf.for %arg0 = %5 to %1 step %7  : i32 {
  }
  return
}
"""


def test_loops_are_bounded_by_the_ranges_iree_asserts() -> None:
    """The fill's loop runs at most (largest count) / (8 x the fewest workgroups, 1) times;
    without the assumption, or with a row that has no maximum, it is unbounded."""
    [budget] = loop_budget.budgets(FILL.replace("COUNT", "1000"))
    assert budget.iterations == 125  # ceil((1000 - 0) / (1 * 8))
    [budget] = loop_budget.budgets(FILL.replace("COUNT", "1"))
    assert budget.iterations == 1
    [budget] = loop_budget.budgets(FILL.replace(", umax = COUNT", ""))
    assert budget.iterations is None
    no_assume = FILL.replace("%1 = util.assume.int", "%1 = foo.op")
    assert loop_budget.budgets(no_assume)[0].iterations is None
    # a step whose minimum is not positive (an id, which may be 0) bounds nothing
    by_id = FILL.replace("step %7", "step %5").replace("COUNT", "8")
    assert loop_budget.budgets(by_id)[0].iterations is None


# A broadcast dispatch IREE tiled over 10 workgroups (trimmed): each workgroup's rows end at
# min(15 - 8 * (id / 5), 8), a bound only the unsigned minimum makes finite.
CLAMPED = """
func.func @main_dispatch_1_elementwise_broadcast_15x4x5_i32xf32xf32xf32() {
  %c-8_i32 = arith.constant -8 : i32
  %c15_i32 = arith.constant 15 : i32
  %c1_i32 = arith.constant 1 : i32
  %c4_i32 = arith.constant 4 : i32
  %c8_i32 = arith.constant 8 : i32
  %c0_i32 = arith.constant 0 : i32
  %c5_i32 = arith.constant 5 : i32
  %thread_id_y = gpu.thread_id y upper_bound 4
  %workgroup_id_x = hal.interface.workgroup.id[0] upper_bound 10 : index
  %3 = arith.index_castui %workgroup_id_x : index to i32
  %4 = arith.divui %3, %c5_i32 : i32
  %5 = arith.remui %3, %c5_i32 : i32
  %6 = arith.muli %4, %c-8_i32 overflow<nsw> : i32
  %7 = arith.addi %6, %c15_i32 : i32
  %8 = arith.MIN %7, %c8_i32 : i32
  %9 = arith.index_castui %thread_id_y : index to i32
  scf.for %arg0 = %9 to %8 step %c4_i32  : i32 {
    scf.for %arg1 = %c0_i32 to %5 step %c1_i32  : i32 {
    }
  }
  return
}
"""


def test_loops_are_bounded_by_minima_quotients_and_remainders() -> None:
    """Found by the fuzz campaign on lavapipe: a ``where`` broadcast to (3, 5, 4, 5) was
    refused as unbounded because the outer loop ends at an ``arith.minui``. The outer loop
    runs ceil(8 / 4) = 2 times, the inner at most 4 (a remainder by 5) inside each."""
    for minimum in ("minui", "minsi"):
        [budget] = loop_budget.budgets(CLAMPED.replace("MIN", minimum))
        assert budget.loops == (2, 4) and budget.iterations == 2 + 2 * 4
    # a minimum of two values without a maximum bounds nothing
    unknown = CLAMPED.replace("MIN", "minui").replace("%7, %c8_i32", "%7, %6")
    assert loop_budget.budgets(unknown)[0].loops[0] is None
    # a maximum is only as bounded as its larger operand
    larger = CLAMPED.replace("MIN", "maxui")
    assert loop_budget.budgets(larger)[0].loops[0] is None
    # a remainder by a value that may be 0 bounds nothing
    by_zero = CLAMPED.replace("MIN", "minui").replace("remui %3, %c5_i32", "remui %3, %c0_i32")
    assert loop_budget.budgets(by_zero)[0].loops[1] is None


def _native_sum(n: int) -> str:
    return (
        f"func.func @main(%a: tensor<{n}xi64>) -> tensor<i64> {{\n"
        f"  %z = stablehlo.constant dense<0> : tensor<i64>\n"
        f"  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : "
        f"(tensor<{n}xi64>, tensor<i64>) -> tensor<i64>\n"
        f"  return %r : tensor<i64>\n}}\n"
    )


def test_iree_still_writes_the_ir_the_check_reads(tmp_path: Path) -> None:
    # IREE's native integer sum is one thread looping over the whole axis: the check must see
    # it (a compiler that stopped writing the IR would leave every module unchecked)
    flags = [*LAVAPIPE.flags, *dispatch_dump.dump_flags(tmp_path)]
    compile_stablehlo(_native_sum(70_000), "vulkan-spirv", flags, timeout=None)
    [over] = loop_budget.over_budget(tmp_path, CAP)
    assert over.iterations == 70_000 and "reduction" in over.function


def test_a_loop_past_the_cap_fails_the_compile_naming_dispatch_cap_and_remedy() -> None:
    # integer products are left to IREE's native reduce (no vkml pass rewrites them)
    text = _native_sum(70_000).replace("stablehlo.add", "stablehlo.multiply")
    with pytest.raises(CompileError) as info:
        pipeline.run_pipeline(text, LAVAPIPE)
    message = str(info.value)
    assert "70,000 loop iterations" in message and "65,535" in message
    assert "vulkan-spirv-llvmpipe" in message and "device=vkml.cpu" in message
    # the same module on a target without a cap compiles
    pipeline.run_pipeline(text, vulkan_target("llvmpipe", float64=True))


def _matmul(batch: int, m: int, k: int, n: int) -> str:
    lead = f"{batch}x" if batch else ""
    dims = (
        "batching_dims = [0] x [0], contracting_dims = [2] x [1]"
        if batch
        else "contracting_dims = [1] x [0]"
    )
    a, b, c = (
        f"tensor<{lead}{m}x{k}xf32>",
        f"tensor<{lead}{k}x{n}xf32>",
        f"tensor<{lead}{m}x{n}xf32>",
    )
    return (
        f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %0 = stablehlo.dot_general %a, %b, {dims}, precision = [HIGHEST, HIGHEST] : ({a}, {b}) -> {c}\n"
        f"  return %0 : {c}\n}}\n"
    )


def test_long_contraction_compiles_within_the_cap_by_shrinking_its_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # IREE runs 2 of the 4 chunks of a 2x3 result per thread: 4 * 16,384 iterations with the
    # first chunk size, so the compile must retry with smaller chunks
    text = _matmul(0, 2, 65_536, 3)
    pipeline.run_pipeline(text, LAVAPIPE)
    monkeypatch.setattr(split_contractions, "MIN_CHUNK", split_contractions.CHUNK)
    with pytest.raises(CompileError, match="65,548 loop iterations"):
        pipeline.run_pipeline(text, LAVAPIPE)


def test_capped_targets_split_contractions_first_and_have_their_own_key() -> None:
    assert pipeline_for("vulkan-spirv", CAP)[: len(LOOP_CAP_PASSES)] == LOOP_CAP_PASSES
    for name in LOOP_CAP_PASSES:
        assert name not in pipeline_for("vulkan-spirv")
        assert name not in pipeline_for("llvm-cpu")
    assert cache_key("x", LAVAPIPE) != cache_key("x", vulkan_target("llvmpipe", float64=True))


def test_precompiled_lavapipe_modules_have_the_devices_key() -> None:
    # a lavapipe elsewhere computes its key with the cap its report gives
    [llvmpipe, ampere] = parse_precompile_targets("llvmpipe+f64,ampere+f64")
    assert llvmpipe == LAVAPIPE
    assert ampere.loop_cap is None
