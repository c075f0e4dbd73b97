"""vkml-pairwise-extremes: float amax/amin are the pairwise tree of select_max/select_min
(the same bits as the reference, NaN and signed zeros included), except, on llvm-cpu, one whose
value is only compared, which stays a native reduce and must compare exactly as the tree."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.passes.pipelines import options_for, pipeline_for
from vkml.passes.run import run_passes

REFERENCE = vkml.device("reference")


def _kept(text: str, backend: str) -> int:
    """How many float max/min reduces the backend's pipeline leaves in ``text``."""
    after = run_passes(text, pipeline_for(backend), options_for(backend))
    return sum(
        line.count("stablehlo.reduce(")
        for line in after.splitlines()
        if "f32>, tensor<f32>" in line
    )


def _rows() -> np.ndarray:
    """Rows whose extremes are a tie of +0.0 and -0.0 (in both orders), a NaN, ±inf, and
    ordinary values, long enough for several levels of the tree."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 1000)).astype(np.float32)
    x[0] = -np.abs(x[0])
    x[0, [3, 700]] = [0.0, -0.0]
    x[1] = -np.abs(x[1])
    x[1, [3, 700]] = [-0.0, 0.0]
    x[2, 500] = np.nan
    x[3, 10] = np.inf
    x[4, 999] = -np.inf
    x[5] = np.abs(x[5])
    x[5, [1, 998]] = [0.0, -0.0]
    x[6, 0] = np.nan
    x[6, 1] = -np.nan
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_extremes_are_the_references_bits(dtype: str) -> None:
    x = _rows().astype(dtype)
    for device in ("cpu",):
        t, r = vkml.tensor(x, device=device), vkml.tensor(x, device=REFERENCE)
        for name in ("amax", "amin"):
            got, want = getattr(t, name)(axis=1).numpy(), getattr(r, name)(axis=1).numpy()
            assert got.tobytes() == want.tobytes(), (name, got, want)
        assert np.array_equal(t.argmax(axis=1).numpy(), r.argmax(axis=1).numpy())
        assert np.array_equal(t.argmin(axis=1).numpy(), r.argmin(axis=1).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_compared_extreme_compares_as_the_tree_does(dtype: str) -> None:
    """Every comparison of a native extreme with values around its ties (±0.0, a NaN, ±inf)
    gives what the reference's tree gives."""
    x = _rows().astype(dtype)
    t, r = vkml.tensor(x), vkml.tensor(x, device=REFERENCE)
    ops = ("__lt__", "__le__", "__eq__", "__ne__", "__ge__", "__gt__")
    for name in ("amax", "amin"):
        for c in (0.0, -0.0, 0.5, -0.5, np.inf, -np.inf, np.nan):
            # one module per extreme and constant, six reduces each compared once
            got = [getattr(getattr(t, name)(axis=1), op)(c) for op in ops]
            if dtype == "float32":
                assert _kept(vkml.emit_mlir(*got), "llvm-cpu") == len(ops)  # each native
            vkml.realize(*got)
            for op, g in zip(ops, got):
                want = getattr(getattr(r, name)(axis=1), op)(c).numpy()
                assert np.array_equal(g.numpy(), want), (name, op, c, g.numpy(), want)


def test_cpu_keeps_only_a_compared_float32_extreme_native() -> None:
    x = vkml.tensor(np.ones((4, 1000), np.float32))
    m = x.amax(axis=1)
    compared = vkml.emit_mlir(m < 1.0)
    kept_too = vkml.emit_mlir(m < 1.0, m)  # its value is returned too
    assert _kept(compared, "llvm-cpu") == 1
    assert _kept(kept_too, "llvm-cpu") == 0
    assert _kept(compared, "vulkan-spirv") == 0  # lavapipe caps the loop; drivers' NaNs
    assert "stablehlo.reduce" not in run_passes(compared)  # the default: the tree everywhere


def test_a_total_order_comparison_gets_the_tree() -> None:
    """A total order tells -0.0 from +0.0, so which of two tied extremes the reduce returns
    would show: such a comparison reads the tree's."""
    text = """func.func @main(%a: tensor<5xf32>) -> tensor<i1> {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%a init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %c = stablehlo.compare GT, %r, %z, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %c : tensor<i1>
}"""
    assert _kept(text, "llvm-cpu") == 0
    assert _kept(text.replace("TOTALORDER", "FLOAT"), "llvm-cpu") == 1
