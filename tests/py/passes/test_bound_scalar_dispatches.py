"""vkml-bound-scalar-dispatches: a function returning many one-element values is cut into
groups, so that IREE's scalar dispatches stay under its 32 bindings."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.compiler.target import CPU_TARGET
from vkml.dialect.fusion_stops import FUSION_STOP
from vkml.dialect.ir import compile_stablehlo
from vkml.errors import InvocationError
from vkml.passes import bound_scalar_dispatches
from vkml.passes.pipelines import PIPELINE, pipeline_for
from vkml.passes.run import run_passes
from vkml.runtime.executable import Executable
from vkml.runtime.hal import session

PASS = (bound_scalar_dispatches.ARGUMENT,)
GROUP = bound_scalar_dispatches.GROUP


def _chain(n: int, shape: tuple[int, ...] = ()) -> list[vkml.Tensor]:
    y = vkml.tensor(np.full(shape, 3.0, np.float32))
    out = []
    for _ in range(n):
        y = y * 0.5 + 1.0
        out.append(y)
    return out


def _barriers(text: str) -> int:
    """The cuts in ``text``: runs of fusion stop lines (one fusion stop per value crossing)."""
    runs, before = 0, False
    for line in text.splitlines():
        barrier = FUSION_STOP in line
        runs += barrier and not before
        before = barrier
    return runs


@pytest.mark.parametrize(("n", "cuts"), [(GROUP, 0), (GROUP + 1, 1), (3 * GROUP, 2), (100, 4)])
def test_a_cut_after_every_group_of_returned_scalars(n: int, cuts: int) -> None:
    assert _barriers(run_passes(vkml.emit_mlir(*_chain(n)), PASS)) == cuts


def _reaching_back(n: int, device: str) -> list[vkml.Tensor]:
    """An int32 scalar chain each step of which also reads the value 6 steps back; every
    value is a result, so the pass cuts it with values live across the cut."""
    ints = [vkml.tensor(np.int32(3), device=device)]
    for _ in range(n):
        ints.append(vkml.bitwise_xor(ints[-1], ints[max(0, len(ints) - 6)] + 1))
    return ints[1:]


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_a_chain_reading_across_cuts_is_never_a_wrong_answer(device: str) -> None:
    """IREE 3.13 gave wrong values (63 for 7) for this chain cut by barriers, with several
    scalars computed from across a cut; in raw StableHLO one barrier of (a, x0..x4) read as
    #0 and #5 gave 7 for 11. The pass does not cut such a chain; realize computes it in
    parts where IREE refuses to load it. The chain folds onto earlier values (x ^ a ^ a),
    which IREE also maps onto wrong results uncut, even at 6 steps: vkml-fusion stop-reused-
    results (test_isolate_reused_results.py) keeps it right."""
    got = _reaching_back(3 * GROUP, device)
    try:
        vkml.realize(*got)
    except InvocationError as exc:
        assert "could not load a module" in str(exc)
        return
    want = _reaching_back(3 * GROUP, "reference")
    vkml.realize(*want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.numpy().tobytes() == w.numpy().tobytes(), f"value {k}"


def test_every_barrier_holds_one_value() -> None:
    text = run_passes(vkml.emit_mlir(*_chain(3 * GROUP)), PASS)
    lines = [line for line in text.splitlines() if FUSION_STOP in line]
    assert lines and all(":" not in line.split("=")[0] for line in lines)
    assert not _barriers(run_passes(vkml.emit_mlir(*_reaching_back(3 * GROUP, "cpu")), PASS))


def test_larger_values_and_few_scalars_are_left_alone() -> None:
    assert _barriers(run_passes(vkml.emit_mlir(*_chain(100, (2,))), PASS)) == 0
    assert _barriers(run_passes(vkml.emit_mlir(*_chain(10)), PASS)) == 0


def test_every_compile_runs_it_before_the_verifier() -> None:
    for backend in ("llvm-cpu", "vulkan-spirv"):
        names = pipeline_for(backend)
        assert names.index(PASS[0]) < names.index("vkml-verify-nan-semantics")
    assert PASS[0] in PIPELINE


def test_without_it_iree_cannot_load_the_module_and_vkml_says_so() -> None:
    """What the pass prevents, shown on llvm-cpu: IREE compiles the 40 results into one
    dispatch of 41 bindings and refuses to load it; vkml reports IREE's refusal as its own
    InvocationError (it was an IndexError from IREE's bindings)."""
    text = run_passes(vkml.emit_mlir(*_chain(40)), ())
    vmfb = compile_stablehlo(text, CPU_TARGET.backend, list(CPU_TARGET.flags), None)
    with pytest.raises(InvocationError, match="could not load a module") as info:
        Executable(session(CPU_TARGET.driver), vmfb, "main", 40)
    assert "binding count" in str(info.value)
