"""The registry of vkml passes: one explicit table, no registration by import side effect.

Each pass module exposes ``ARGUMENT`` (its command-line name), ``DESCRIPTION`` and
``run(module)``. ``PIPELINE`` is the order every compile runs them in, for every device.
"""

from __future__ import annotations

from types import ModuleType

from vkml.passes import (
    exact_divide,
    pairwise_reductions,
    soft_f16,
    verify_nan_semantics,
    vulkan_nan,
)

PASSES: dict[str, ModuleType] = {
    pairwise_reductions.ARGUMENT: pairwise_reductions,
    soft_f16.ARGUMENT: soft_f16,
    verify_nan_semantics.ARGUMENT: verify_nan_semantics,
    vulkan_nan.ARGUMENT: vulkan_nan,
    exact_divide.ARGUMENT: exact_divide,
}

# The determinism slot: every compile runs these, in this order, before IREE sees the module.
# The NaN verifier comes last, so that it also checks what the passes before it emitted.
PIPELINE: tuple[str, ...] = (
    pairwise_reductions.ARGUMENT,
    soft_f16.ARGUMENT,
    verify_nan_semantics.ARGUMENT,
)

# Passes that only Vulkan targets run, after the pipeline's first two and before the verifier:
# Vulkan drivers' shader compilers treat floats more loosely than IREE's llvm-cpu (see each
# pass's docstring for what was measured). Division first: its integer recipe has no NaN
# for the NaN pass to guard.
VULKAN_PASSES: tuple[str, ...] = (exact_divide.ARGUMENT, vulkan_nan.ARGUMENT)


def pipeline_for(backend: str) -> tuple[str, ...]:
    """The passes a compile for IREE ``backend`` runs, in order."""
    if backend != "vulkan-spirv" or not VULKAN_PASSES:
        return PIPELINE
    return (*PIPELINE[:-1], *VULKAN_PASSES, PIPELINE[-1])
