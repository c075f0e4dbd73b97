"""The registry of vkml passes: one explicit table, no registration by import side effect.

Each pass module exposes ``ARGUMENT`` (its command-line name), ``DESCRIPTION`` and
``run(module)``. ``PIPELINE`` is the order every compile runs them in, for every device.
"""

from __future__ import annotations

from types import ModuleType

from vkml.passes import (
    exact_divide,
    pairwise_integer_reductions,
    pairwise_reductions,
    soft_f16,
    split_contractions,
    verify_nan_semantics,
    vulkan_nan,
)

PASSES: dict[str, ModuleType] = {
    pairwise_reductions.ARGUMENT: pairwise_reductions,
    soft_f16.ARGUMENT: soft_f16,
    verify_nan_semantics.ARGUMENT: verify_nan_semantics,
    vulkan_nan.ARGUMENT: vulkan_nan,
    exact_divide.ARGUMENT: exact_divide,
    split_contractions.ARGUMENT: split_contractions,
    pairwise_integer_reductions.ARGUMENT: pairwise_integer_reductions,
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


# Passes for a target whose driver caps shader loops (lavapipe), first of all: what they emit
# goes through the rest of the pipeline like anything else.
LOOP_CAP_PASSES: tuple[str, ...] = (
    split_contractions.ARGUMENT,
    pairwise_integer_reductions.ARGUMENT,
)


def pipeline_for(backend: str, loop_cap: int | None = None) -> tuple[str, ...]:
    """The passes a compile for IREE ``backend`` runs, in order; ``loop_cap`` is the target
    driver's shader loop cap (``Target.loop_cap``), if it has one."""
    first = LOOP_CAP_PASSES if loop_cap is not None else ()
    if backend != "vulkan-spirv" or not VULKAN_PASSES:
        return (*first, *PIPELINE)
    return (*first, *PIPELINE[:-1], *VULKAN_PASSES, PIPELINE[-1])
