"""The registry of vkml passes: one explicit table, no registration by import side effect.

Each pass module exposes ``ARGUMENT`` (its command-line name), ``DESCRIPTION`` and
``run(module)``. ``PIPELINE`` is the order every compile runs them in, for every device.
"""

from __future__ import annotations

from types import ModuleType

from vkml.passes import pairwise_reductions, soft_f16, verify_nan_semantics

PASSES: dict[str, ModuleType] = {
    pairwise_reductions.ARGUMENT: pairwise_reductions,
    soft_f16.ARGUMENT: soft_f16,
    verify_nan_semantics.ARGUMENT: verify_nan_semantics,
}

# The determinism slot: every compile runs these, in this order, before IREE sees the module.
# The NaN verifier comes last, so that it also checks what the passes before it emitted.
PIPELINE: tuple[str, ...] = (
    pairwise_reductions.ARGUMENT,
    soft_f16.ARGUMENT,
    verify_nan_semantics.ARGUMENT,
)
