"""Which of vkml's passes a compile runs, in which order: data only, by pass argument name.

Kept apart from the passes themselves (``registry.PASSES``, which imports them and so
``iree.compiler``) so that what a module was compiled with can be named where no compiler is
installed (an exported module's manifest, ``vkml inspect``). ``registry`` checks that every
name here is a pass it has.
"""

from __future__ import annotations

from typing import Any

# The determinism slot: every compile runs these, in this order, before IREE sees the module.
# The NaN verifier comes last, so that it also checks what the passes before it emitted.
# Integer reductions become trees too, though their results do not depend on the order:
# IREE's llvm-cpu codegen ran a native integer reduce of a folded constant once instead of
# once per element (a wrong sum; see the pass), and lavapipe caps the loop a native one is.
# The scalar cut is not about numbers: it keeps IREE's scalar dispatches under its 32 bindings.
# The last passes see what every other pass emitted: the fusion stop of results read
# further (IREE mapped a fused chain of them onto the wrong values), the boolean bound
# (compile time: IREE copies boolean producers into each reader), one operand for a value an
# op reads twice across a fusion stop (after every pass that adds one: IREE's SPIR-V backend fails
# on the copy such an op folds to) and the NaN verifier.
LAST: tuple[str, ...] = (
    "vkml-isolate-reused-results",
    "vkml-bound-bool-fusion",
    "vkml-unify-equal-operands",
    "vkml-verify-nan-semantics",
)
PIPELINE: tuple[str, ...] = (
    "vkml-pairwise-reductions",
    "vkml-pairwise-extremes",
    "vkml-pairwise-integer-reductions",
    "vkml-soft-f16",
    "vkml-bound-scalar-dispatches",
    *LAST,
)

# Passes that only Vulkan targets run, after the pipeline's first four and before ``LAST``:
# Vulkan drivers' shader compilers treat floats more loosely than IREE's llvm-cpu (see each
# pass's docstring for what was measured). Division first: its integer recipe has no NaN
# for the NaN pass to guard. The matmul operands last: they see every op the others emitted.
VULKAN_PASSES: tuple[str, ...] = (
    "vkml-exact-divide",
    "vkml-vulkan-nan",
    "vkml-isolate-widened-operands",
)

# Passes for a target whose driver caps shader loops (lavapipe), first of all: what they emit
# goes through the rest of the pipeline like anything else.
LOOP_CAP_PASSES: tuple[str, ...] = ("vkml-split-contractions",)


# The Vulkan recompile of a module whose dispatches could race on workgroup memory (see
# vkml.compiler.workgroup_races): after the Vulkan passes, before the last ones (which must
# see its fusion stops).
ISOLATE_RELAYOUTS = "vkml-isolate-relayouts"


def pipeline_for(
    backend: str, loop_cap: int | None = None, isolate_relayouts: bool = False
) -> tuple[str, ...]:
    """The passes a compile for IREE ``backend`` runs, in order; ``loop_cap`` is the target
    driver's shader loop cap (``Target.loop_cap``), if it has one; ``isolate_relayouts``
    (Vulkan only) adds ``vkml-isolate-relayouts``."""
    first = LOOP_CAP_PASSES if loop_cap is not None else ()
    if backend != "vulkan-spirv":
        return (*first, *PIPELINE)
    isolate = (ISOLATE_RELAYOUTS,) if isolate_relayouts else ()
    return (*first, *PIPELINE[: -len(LAST)], *VULKAN_PASSES, *isolate, *LAST)


def options_for(backend: str) -> dict[str, dict[str, Any]]:
    """The pass options (keyword arguments of a pass's ``run``) a compile for IREE ``backend``
    sets: on llvm-cpu a float max/min that is only compared stays a native reduce (exact in
    any order; IREE compiles it far faster than the tree: vkml-pairwise-extremes)."""
    if backend == "llvm-cpu":
        return {"vkml-pairwise-extremes": {"native_when_compared": True}}
    return {}
