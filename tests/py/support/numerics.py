"""Comparison helpers for checking a device against the reference: bits and ULPs."""

from __future__ import annotations

import numpy as np

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered_bits(x: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped to integers whose order is the float order (for ULPs)."""
    size = x.dtype.itemsize
    raw = x.view(_INT[size]).astype(np.int64)
    sign_mask = np.int64(1) << (8 * size - 1)
    with np.errstate(over="ignore"):
        return np.where(raw < 0, -(raw & (sign_mask - 1)), raw)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (NaN pairs count 0)."""
    both_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    d = np.abs(ordered_bits(a) - ordered_bits(b))
    return np.where(both_nan, 0, d)


def assert_bit_exact(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bit patterns, except that any NaN matches any NaN (payloads are not promised)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype.kind in "fV":
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        nan_g, nan_w = np.isnan(g64), np.isnan(w64)
        assert np.array_equal(nan_g, nan_w), f"{what}: NaN positions differ\n{got}\n{want}"
        size = got.dtype.itemsize
        gb = np.where(nan_g, 0, got.view(_UINT[size]))
        wb = np.where(nan_w, 0, want.view(_UINT[size]))
        bad = np.flatnonzero(gb != wb)
        assert bad.size == 0, (
            f"{what}: {bad.size} elements differ in bits, first at {bad[0]}: "
            f"got {got.flat[bad[0]]!r} want {want.flat[bad[0]]!r}"
        )
    else:
        assert np.array_equal(got, want), f"{what}: values differ\n{got}\n{want}"


def assert_within_ulp(got: np.ndarray, want: np.ndarray, ulp: int, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    )
    nan_g = np.isnan(got.astype(np.float64))
    nan_w = np.isnan(want.astype(np.float64))
    assert np.array_equal(nan_g, nan_w), f"{what}: NaN positions differ\n{got}\n{want}"
    d = ulp_distance(got, want)
    worst = int(d.max()) if d.size else 0
    assert worst <= ulp, (
        f"{what}: {worst} ULP apart (bound {ulp}) at {int(d.argmax())}: "
        f"got {got.flat[d.argmax()]!r} want {want.flat[d.argmax()]!r}"
    )
