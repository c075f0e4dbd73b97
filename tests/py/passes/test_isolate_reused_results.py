"""vkml-isolate-reused-results: IREE 3.13 mapped the results of a fused chain of results that
it folds onto other values (integer steps that fold back, float sums equal up to operand
order) onto the wrong values; a result read further is read through a fusion stop of its own, and
the chains come back right."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support.devices import needs_vulkan

import vkml
from vkml.compiler import compile as compiling
from vkml.compiler.target import CPU_TARGET
from vkml.dtypes import int32
from vkml.passes.run import run_passes
from vkml.runtime import Executable, download, session, upload

DEVICES = ["cpu", pytest.param("vulkan:0", marks=needs_vulkan)]

Step = Callable[[vkml.Tensor, vkml.Tensor], vkml.Tensor]
# each step folds back onto an earlier value: a - (a - x) is x, (x ^ a) ^ a is x
STEPS: dict[str, Step] = {
    "subtract": lambda prev, back: (back + 1) - prev,
    "xor": lambda prev, back: vkml.bitwise_xor(prev, back + 1),
    "multiply-add": lambda prev, back: prev * 3 + back,  # no folding: right before too
}


def _chain(n: int, device: str, step: Step) -> list[vkml.Tensor]:
    """``n`` int32 values, each a step from the one before and the one six back."""
    ints = [vkml.tensor(np.int32(3), device=device)]
    for _ in range(n):
        ints.append(step(ints[-1], ints[max(0, len(ints) - 6)]))
    return ints[1:]


@pytest.mark.parametrize("name", DEVICES)
@pytest.mark.parametrize("step", sorted(STEPS))
@pytest.mark.parametrize("n", [6, 24, 72])
def test_chains_of_integer_results_realized_together_are_right(
    name: str, step: str, n: int
) -> None:
    """Found by test_bound_scalar_dispatches's xor chain: 6 results gave [3, 3, 3, 3, 7, 3]
    for [7, 3, 7, 3, 7, 3] on cpu and lavapipe; the subtract chain likewise."""
    got = _chain(n, name, STEPS[step])
    vkml.realize(*got)
    want = _chain(n, "reference", STEPS[step])
    vkml.realize(*want)
    assert [int(t.numpy()) for t in got] == [int(t.numpy()) for t in want]


def _raw_chain(k: int) -> str:
    lines = ["    %c = stablehlo.constant dense<1> : tensor<i32>"]
    lines.append("    %a = stablehlo.add %arg0, %c : tensor<i32>")
    prev = "%arg0"
    for i in range(k):
        lines.append(f"    %x{i} = stablehlo.subtract %a, {prev} : tensor<i32>")
        prev = f"%x{i}"
    types = ", ".join(["tensor<i32>"] * k)
    results = ", ".join(f"%x{i}" for i in range(k))
    return (
        f"module {{\n  func.func @main(%arg0: tensor<i32>) -> ({types}) {{\n"
        + "\n".join(lines)
        + f"\n    return {results} : {types}\n  }}\n}}"
    )


def test_iree_itself_maps_the_chain_onto_wrong_results() -> None:
    """The upstream bug, in plain StableHLO through vkml's compile (whose passes now fusion stop
    it) and without the pass: when this test fails, IREE computes the chain right by itself
    and the pass can go."""
    text = _raw_chain(5)
    sess = session("local-sync")
    arg = upload(sess, np.array(3, np.int32), int32)

    def results(vmfb: bytes) -> list[int]:
        outs = Executable(sess, vmfb, "main", 5).invoke([arg])
        return [int(download(o, int32)) for o in outs]

    assert results(compiling.run_pipeline(text, CPU_TARGET)) == [1, 3, 1, 3, 1]
    unfenced = run_passes(text, ("vkml-pairwise-integer-reductions",))
    assert results(compiling._iree(unfenced, CPU_TARGET, [])) == [3, 3, 3, 3, 1]


def _commuted_sums(device: str) -> list[vkml.Tensor]:
    """The fuzz campaign's float64 case (seed 18), reduced to the five results it needs: two
    of them, ``v12 + v8`` and ``v8 + v12``, are equal up to the order of their operands."""
    dev = vkml.device(device)
    x = vkml.tensor(np.array([-0.0, 1.0]), device=dev)
    a = vkml.tensor(np.array([1.0, 2.5]), device=dev)
    v1 = a + a
    v2 = vkml.where(x < x, x, v1)
    v5 = vkml.where(x < v1, v1, x)
    v6 = vkml.where(v2 < v1, v1, v5)
    v8 = v1 + a
    v9 = v8 + v8
    v11 = vkml.where(v6 < x, x, v9 + v8)
    v12 = v8 + v1
    v13, v14 = v12 + v8, v8 + v12
    v16 = v9 + v8
    v18 = vkml.where(v12 < v16, v16, v5)
    return [v11, v13, v14, v14 + v13, v18]


@pytest.mark.parametrize("name", DEVICES)
def test_float_results_equal_up_to_operand_order_are_right(name: str) -> None:
    """``v8 + v12`` came back as ``v12`` (12.5 for 20.0) on cpu and lavapipe while only integer
    results were stopped: IREE merges the two commuted sums in the fused chain."""
    got = _commuted_sums(name)
    vkml.realize(*got)
    want = _commuted_sums("reference")
    vkml.realize(*want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.array_equal(g.numpy(), w.numpy()), (k, g.numpy(), w.numpy())
