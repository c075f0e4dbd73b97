"""vkml-soft-f16: float32 -> float16/bfloat16 on cpu equals NumPy / ml_dtypes bit for bit."""

from __future__ import annotations

import time
from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

import vkml
from vkml.passes.registry import PIPELINE
from vkml.runtime.vulkan_loader import vulkan_device_reports

SIGN = np.uint32(0x80000000)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, np.uint32)


def _rounding_boundaries() -> np.ndarray:
    """Every float16 and bfloat16 rounding boundary, in float32 bits, both signs.

    For each of the 2**15 non-negative float16 values: the value, and the half-way point to the
    next one with its two float32 neighbours (this covers every subnormal step and the
    overflow boundary 65504 / 65520). For each non-negative bfloat16 pattern: the same, which
    is its bits followed by 0, 0x7FFF, 0x8000, 0x8001.
    """
    f16 = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    nxt = np.arange(1, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)
    nxt[-1] = 65536.0  # past the largest finite float16 the next "value" is 2**16
    half = ((f16 + nxt) / 2).astype(np.float32).view(np.uint32)  # exact in float32
    f16_cases = [f16.astype(np.float32).view(np.uint32), half - 1, half, half + 1]
    top = np.arange(0x8000, dtype=np.uint32) << 16
    bf16_cases = [top | low for low in (0, 0x7FFF, 0x8000, 0x8001)]
    positive = np.concatenate(f16_cases + bf16_cases)
    return _bits(np.concatenate([positive, positive | SIGN]))


def _mantissas(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` 23-bit mantissas: for every number of dropped bits d (1..23), kept bits
    0, 1, all ones, all ones - 1 and random ones, followed by dropped bits 0, 1, half - 1,
    half, half + 1 and all ones; the rest random."""
    rows = []
    for d in range(1, 24):
        top = (1 << (23 - d)) - 1
        kept = np.concatenate([[0, 1, top, max(top - 1, 0)], rng.integers(0, top + 1, 4)])
        half = 1 << (d - 1)
        dropped = np.array([0, 1, half - 1, half, half + 1, (1 << d) - 1])
        rows.append(((kept[:, None] << d) | dropped[None, :]).ravel())
    structured = np.concatenate(rows).astype(np.uint32)
    rest = rng.integers(0, 1 << 23, count - structured.size, dtype=np.uint32)
    return np.concatenate([structured, rest])


def stratified_patterns() -> np.ndarray:
    """2**24 float32 bit patterns: every sign and exponent (so ±0, subnormals, ±inf and NaNs
    with many payloads) times a spread of mantissas, plus every rounding boundary."""
    boundaries = _rounding_boundaries()
    per_exponent = ((1 << 24) - boundaries.size) // 512
    mantissas = _mantissas(per_exponent, np.random.default_rng(20240613))
    sign_exp = np.arange(512, dtype=np.uint32) << 23
    grid = (sign_exp[:, None] | mantissas[None, :]).ravel()
    return _bits(np.concatenate([boundaries, grid]))


def numpy_f16_bits(bits: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return bits.view(np.float32).astype(np.float16).view(np.uint16)


def ml_dtypes_bf16_bits(bits: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return bits.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


def cpu_narrow_bits(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float16 bits, bfloat16 bits) of ``bits`` narrowed on vkml.cpu in one invocation."""
    x = vkml.tensor(bits.view(np.float32), device=vkml.cpu)
    f16, bf16 = x.astype(vkml.float16), x.astype(vkml.bfloat16)
    vkml.realize(f16, bf16)
    return f16.numpy().view(np.uint16), bf16.numpy().view(np.uint16)


def assert_same_bits(bits: np.ndarray, got: np.ndarray, want: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(got != want)
    shown = ", ".join(f"0x{bits[i]:08X} -> 0x{got[i]:04X} (want 0x{want[i]:04X})" for i in bad[:8])
    assert bad.size == 0, f"{what}: {bad.size} of {bits.size} differ: {shown}"


def test_stratified_sample_covers_every_class() -> None:
    bits = stratified_patterns()
    assert bits.size == 1 << 24
    exponent, mantissa = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    assert set(np.unique(exponent).tolist()) == set(range(256))
    x = bits.view(np.float32)
    for special in (0.0, 65504.0, 65520.0, np.inf, 2.0**-24, 2.0**-25, 2.0**-14):
        for signed in (special, -special):
            assert np.any(bits == np.float32(signed).view(np.uint32)), signed
    assert np.any(bits == np.float32(-0.0).view(np.uint32))
    nan = (exponent == 0xFF) & (mantissa != 0)
    assert np.any(nan & (bits >= SIGN)) and np.any(nan & (bits < SIGN))
    assert np.any(nan & ((mantissa >> 13) == 0)) and np.any(nan & (mantissa < 0x400000))
    assert np.isfinite(x[~nan & (exponent != 0xFF)]).all()


def test_f32_narrowing_equals_numpy_and_ml_dtypes_on_stratified_sample() -> None:
    bits = stratified_patterns()
    f16, bf16 = cpu_narrow_bits(bits)
    assert_same_bits(bits, f16, numpy_f16_bits(bits), "float32 -> float16 vs NumPy")
    assert_same_bits(bits, bf16, ml_dtypes_bf16_bits(bits), "float32 -> bfloat16 vs ml_dtypes")


@pytest.mark.parametrize(
    ("f32", "f16", "bf16"),
    [
        (0x7FC00000, 0x7E00, 0x7FC0),  # the default quiet NaN
        (0xFFC00000, 0xFE00, 0xFFC0),  # its negative: the sign survives both narrowings
        (0xFFFFFFFF, 0xFFFF, 0xFFC0),  # all payload bits set
        (0x7FA00000, 0x7D00, 0x7FC0),  # signalling NaN: to float16 it stays signalling
        (0xFF800001, 0xFC01, 0xFFC0),  # payload only in the dropped bits: still a NaN
        (0xFF812345, 0xFC09, 0xFFC0),  # float16 keeps the top 10 payload bits
    ],
)
def test_nan_keeps_sign_and_follows_the_documented_payload_rule(
    f32: int, f16: int, bf16: int
) -> None:
    bits = np.array([f32], np.uint32)
    got16, got_bf16 = cpu_narrow_bits(bits)
    assert (int(got16[0]), int(got_bf16[0])) == (f16, bf16)


def test_float16_add_rounds_ties_to_even_and_overflows_to_infinity() -> None:
    # 2049 is exactly half-way between float16 2048 and 2050: ties to even gives 2048, and
    # 2051 gives 2052; the sum is computed in float32, then narrowed once
    a = vkml.tensor([2048.0, 2048.0, 65504.0, -65504.0], dtype=vkml.float16)
    b = vkml.tensor([1.0, 3.0, 16.0, -16.0], dtype=vkml.float16)
    assert (a + b).tolist() == [2048.0, 2052.0, np.inf, -np.inf]


def test_bfloat16_arithmetic_keeps_the_sign_of_nan_like_the_reference() -> None:
    # IREE's own f32 -> bf16 conversion returns +NaN (0x7FC0) for every NaN
    data = np.array([0xFFC00000, 0x7FC00000], np.uint32).view(np.float32)
    results = []
    for device in (vkml.cpu, vkml.reference):
        x = vkml.tensor(data, device=device).astype(vkml.bfloat16)
        results.append((x * 2.0).numpy().view(np.uint16).tolist())
    assert results == [[0xFFC0, 0x7FC0], [0xFFC0, 0x7FC0]]


@pytest.mark.parametrize("device", ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else []))
def test_float16_and_bfloat16_convert_into_each_other_like_ml_dtypes_on_all_patterns(
    device: str,
) -> None:
    """All 2**16 patterns each way, NaN bits included, and widened again in the same module
    (where IREE's codegen dropped the bfloat16 rounding of f16 -> bf16 -> f32)."""
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    dev = vkml.device(device)
    for source, target in ((np.float16, ml_dtypes.bfloat16), (ml_dtypes.bfloat16, np.float16)):
        x = patterns.view(source)
        with np.errstate(invalid="ignore"):
            want = x.astype(target)
        t = vkml.tensor(x, device=dev).astype(vkml.dtypes.to_dtype(np.dtype(target)))
        wide = t.astype(vkml.float32)
        vkml.realize(t, wide)
        what = f"{np.dtype(source).name} -> {np.dtype(target).name} on {device}"
        assert_same_bits(patterns, t.numpy().view(np.uint16), want.view(np.uint16), what)
        with np.errstate(invalid="ignore"):
            wide_want = want.astype(np.float32)
        finite = np.isfinite(wide_want)
        np.testing.assert_array_equal(wide.numpy()[finite], wide_want[finite], err_msg=what)
        assert np.isnan(wide.numpy()[~finite & np.isnan(wide_want)]).all(), what


def test_pipeline_leaves_no_f32_to_16_bit_convert() -> None:
    x = vkml.tensor(np.ones((3, 4), np.float32))
    text = vkml.emit_mlir(x.astype(vkml.float16), (x * 2).astype(vkml.bfloat16), passes=True)
    converts = [line for line in text.splitlines() if "stablehlo.convert" in line]
    assert not [c for c in converts if "f32>) -> tensor<3x4xf16>" in c]
    assert not [c for c in converts if "f32>) -> tensor<3x4xbf16>" in c]
    assert "ui16>) -> tensor<3x4xf16>" in text and "ui16>) -> tensor<3x4xbf16>" in text
    assert "vkml-soft-f16" in PIPELINE


def _chunks(size: int) -> Iterator[np.ndarray]:
    for start in range(0, 1 << 32, size):
        yield np.arange(size, dtype=np.uint32) + np.uint32(start)


@pytest.mark.exhaustive
def test_f32_narrowing_equals_numpy_and_ml_dtypes_on_all_patterns() -> None:
    began = time.perf_counter()
    size = 1 << 26
    for i, bits in enumerate(_chunks(size)):
        f16, bf16 = cpu_narrow_bits(bits)
        assert_same_bits(bits, f16, numpy_f16_bits(bits), "float32 -> float16 vs NumPy")
        assert_same_bits(bits, bf16, ml_dtypes_bf16_bits(bits), "float32 -> bfloat16 vs ml_dtypes")
        print(f"chunk {i + 1}/{(1 << 32) // size} ok, {time.perf_counter() - began:.0f} s")


def test_float64_to_float16_rounds_once_like_the_reference() -> None:
    # each value lies just past a float16 half-way point by less than a float32 ulp, so going
    # through float32 lands exactly on the tie and rounds the other way
    data = np.array([1 + 2**-11 + 2**-40, 65519.999999, 2**-25 + 2**-60], np.float64)
    got = vkml.tensor(data, device=vkml.cpu).astype(vkml.float16).numpy()
    want = vkml.tensor(data, device=vkml.reference).astype(vkml.float16).numpy()
    assert got.view(np.uint16).tolist() == want.view(np.uint16).tolist()
    assert want.view(np.uint16).tolist() == data.astype(np.float16).view(np.uint16).tolist()


def test_float64_to_bfloat16_rounds_once() -> None:
    # 1 + 2**-8 is a bfloat16 tie; the extra 2**-40 puts it above: one rounding goes up
    data = np.array(
        [1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-8, 3.0e38, 1e300], np.float64
    )
    got = vkml.tensor(data, device=vkml.cpu).astype(vkml.bfloat16).numpy().view(np.uint16)
    want = vkml.tensor(data, device=vkml.reference).astype(vkml.bfloat16).numpy().view(np.uint16)
    assert got.tolist() == want.tolist()
    assert [hex(v) for v in want.tolist()] == ["0x3f81", "0xbf81", "0x3f80", "0x7f62", "0x7f80"]
