"""The registry of vkml passes: one explicit table, no registration by import side effect.

Each pass module exposes ``ARGUMENT`` (its command-line name), ``DESCRIPTION`` and
``run(module)``. The order a compile runs them in is ``vkml.passes.pipelines``.
"""

from __future__ import annotations

from types import ModuleType

from vkml.passes import (
    bound_bool_fusion,
    bound_scalar_dispatches,
    exact_divide,
    isolate_relayouts,
    isolate_reused_results,
    isolate_widened_operands,
    pairwise_extremes,
    pairwise_integer_reductions,
    pairwise_reductions,
    soft_f16,
    split_contractions,
    unify_equal_operands,
    verify_nan_semantics,
    vulkan_nan,
)
from vkml.passes.pipelines import (
    ISOLATE_RELAYOUTS,
    LOOP_CAP_PASSES,
    PIPELINE,
    VULKAN_PASSES,
    pipeline_for,
)

PASSES: dict[str, ModuleType] = {
    pairwise_reductions.ARGUMENT: pairwise_reductions,
    pairwise_extremes.ARGUMENT: pairwise_extremes,
    soft_f16.ARGUMENT: soft_f16,
    verify_nan_semantics.ARGUMENT: verify_nan_semantics,
    vulkan_nan.ARGUMENT: vulkan_nan,
    exact_divide.ARGUMENT: exact_divide,
    split_contractions.ARGUMENT: split_contractions,
    pairwise_integer_reductions.ARGUMENT: pairwise_integer_reductions,
    isolate_widened_operands.ARGUMENT: isolate_widened_operands,
    bound_scalar_dispatches.ARGUMENT: bound_scalar_dispatches,
    bound_bool_fusion.ARGUMENT: bound_bool_fusion,
    isolate_reused_results.ARGUMENT: isolate_reused_results,
    unify_equal_operands.ARGUMENT: unify_equal_operands,
    isolate_relayouts.ARGUMENT: isolate_relayouts,
}

# The orders are data (``pipelines``), re-exported here beside the passes they name
# (tests/py/passes/test_pipelines.py checks that every name is one of PASSES).
__all__ = [
    "ISOLATE_RELAYOUTS", "LOOP_CAP_PASSES", "PASSES", "PIPELINE", "VULKAN_PASSES", "pipeline_for",
]  # fmt: skip
