"""vkml-bound-bool-fusion: IREE copies boolean producers into every reader; a long chain of
booleans that each feed several later ones is stored where the copies would grow."""

from __future__ import annotations

import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from vkml.dialect.fusion_stops import FUSION_STOPS
from vkml.dialect.ir import compile_stablehlo, ir, parse_module
from vkml.passes import bound_bool_fusion
from vkml.passes.run import run_passes

PASS = (bound_bool_fusion.ARGUMENT,)


def _cond_chain(n: int, device: vkml.Device) -> list[vkml.Tensor]:
    """x[k+1] = x[k] != y[k] if x[k][0] else x[k] == y[k], y[k+1] = x[k]: each value is read
    by the next condition and by both arms, so IREE's copies of it triple each step."""
    x = vkml.tensor(np.array([True, False, True]), device=device)
    y = vkml.tensor(np.array([True, True, False]), device=device)
    out = []
    for _ in range(n):
        x, y = vkml.cond(x[0], lambda u, v: u != v, lambda u, v: u == v, x, y), x
        out.append(x)
    return out


def _largest_shared_cone(text: str) -> int:
    """The largest cone of boolean producers (counted as IREE's fusion copies them) of a
    boolean value that more than one op reads, in ``text``'s function."""
    with ir.Context() as context:
        module = parse_module(text, context)
        block = module.body.operations[0].regions[0].blocks[0]
        cone: dict[ir.Value, int] = {}
        largest = 0
        for op in block.operations:
            results = list(op.results)
            if not results or not str(results[0].type).endswith("i1>"):
                continue
            if op.name in FUSION_STOPS:  # IREE fuses nothing across these
                continue
            size = 1 + sum(cone.get(v, 0) for v in op.operands)
            cone[results[0]] = size
            readers = sum(1 for u in results[0].uses if u.owner.name != "func.return")
            if readers > 1:
                largest = max(largest, size)
        return largest


def test_a_chain_of_conditions_on_booleans_has_bounded_cones() -> None:
    text = vkml.emit_mlir(*_cond_chain(30, vkml.cpu))
    assert _largest_shared_cone(text) > 10**6  # about 3^n copies without the pass
    assert _largest_shared_cone(run_passes(text, PASS)) <= bound_bool_fusion.LIMIT


def test_the_fences_keep_the_graph_in_one_queue_submission() -> None:
    """IREE's stream IR of the chain after every vkml pass: one execution region and one host
    wait (the result's). A ``stablehlo.optimization_barrier`` in each fusion stop's place gives
    20 of each here, every one a host round trip on a GPU (~1 ms on an H200)."""
    text = vkml.emit_mlir(*_cond_chain(40, vkml.cpu), passes=True)
    assert text.count("compute_barrier.end") >= 10
    stream = compile_stablehlo(text, "llvm-cpu", ["--compile-to=stream"], timeout=300).decode()
    assert stream.count("stream.cmd.execute") == 1
    assert stream.count("stream.timepoint.await") == 1


def test_small_cones_are_left_as_they_are() -> None:
    x = vkml.tensor(np.array([0.5, -1.0, 2.0], np.float32))
    mask = (x > 0) & (x < 1)
    text = vkml.emit_mlir(vkml.where(mask, x, 0.0), vkml.where(mask, 1.0, x))
    assert run_passes(text, PASS) == run_passes(text, ())


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_long_chain_of_conditions_on_booleans_compiles_in_seconds(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the fuzz campaign: 144 chained ``vkml.cond`` of bools ran IREE's compiler past
    its 600 s limit (20 of them: 118 s), nearly all of it in its elementwise fusion. With the
    pass, seconds; a limit of 120 s turns a regression into a CompileError, not a hang."""
    monkeypatch.setenv("VKML_COMPILE_TIMEOUT", "120")
    got = _cond_chain(60, vkml.device(name))
    vkml.realize(*got)
    want = _cond_chain(60, vkml.reference)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"value {k}")
