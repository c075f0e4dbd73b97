"""The GEMM contraction contract (docs/adr/0005-gemm-contraction.md), measured.

f32 accumulation for float32/float16/bfloat16 inputs; run-to-run bit identity on one device;
an error bound against the exact (float64) product, the same bound for every device.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import vkml

# |C - exact| <= BOUND * eps32 * (|A| @ |B|), elementwise. The classical worst case is
# k * eps; measured on cpu and reference up to k = 1024: at most 2.8 eps.
BOUND = 8.0
EPS32 = float(np.finfo(np.float32).eps)


@pytest.mark.parametrize("device", ["cpu", "reference"])
@pytest.mark.parametrize("k", [1, 7, 64, 513])
def test_float32_matmul_error_is_bounded(device: str, k: int) -> None:
    rng = np.random.default_rng(k)
    a = rng.normal(size=(3, 5, k)).astype(np.float32)
    b = rng.normal(size=(k, 9)).astype(np.float32)
    got = (vkml.tensor(a, device=device) @ vkml.tensor(b, device=device)).numpy()
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    err = np.abs(got.astype(np.float64) - exact) / scale
    assert err.max() <= BOUND * EPS32, f"{err.max() / EPS32:.2f} eps"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_matmul_accumulates_in_float32_and_rounds_once(dtype: str) -> None:
    # 1 followed by 255 terms each below half a unit in the last place of 1: a 16-bit
    # accumulator that adds them one by one stays at 1; float32 accumulation keeps them all
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    k = 256
    tiny = float(ml_dtypes.finfo(npdt).eps) / 4
    a = np.ones((1, k), np.float32).astype(npdt)
    b = np.full((k, 1), tiny, np.float32)
    b[0] = 1.0
    b = b.astype(npdt)
    got = (vkml.tensor(a) @ vkml.tensor(b)).numpy()
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(npdt)
    assert got.dtype == np.dtype(npdt)
    assert got.view(np.uint16)[0, 0] == exact.view(np.uint16)[0, 0], (got, exact)
    assert float(got[0, 0]) > 1.0


def test_matmul_is_bit_identical_run_to_run() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(200, 300)).astype(np.float32)
    b = rng.normal(size=(300, 100)).astype(np.float32)
    first = (vkml.tensor(a) @ vkml.tensor(b)).numpy()
    for _ in range(3):
        again = (vkml.tensor(a) @ vkml.tensor(b)).numpy()
        assert np.array_equal(first.view(np.uint32), again.view(np.uint32))
