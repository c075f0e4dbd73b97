"""The contract of one value against the reference: bits, or an op's stated bound.

``check_value`` raises ``AssertionError`` naming what differs. The bounds are the ones
docs/contracts.md states, with the exceptions it states:

- bit-exact ops: ``numerics.assert_bit_exact`` (any NaN matches any NaN);
- matmul of integers or bool: bit-exact; of floats: the classical dot-product bound for any
  summation order, ``|got - want| <= 2 K eps sum|a||b| + eps16 |want| + K tiny`` (twice:
  both the device and the reference round), checked where ``sum|a||b|`` is finite. The
  docs' 8-eps relative bound holds only for positive operands; fuzzed ones cancel;
- conv: matmul's bound with ``K`` the taps one output sums (input channels of a group times
  kernel elements) and ``sum|a||b|`` the convolution of the operands' magnitudes;
- ``sin``/``cos``: absolute error at most ``ulp * eps`` of the dtype, for every argument:
  the devices the campaign runs (cpu, lavapipe) compute float64, where sin, cos and tan of
  every float dtype are vkml's own with an exact reduction (docs/contracts.md; a device
  without float64 is promised only ``|x| <= 20``); ``tan`` (sin / cos) the same, or within its
  ULP bound, or within the error of sin and cos divided: ``a (1 + |t|) sqrt(1 + t^2)`` for
  ``t = tan(x)`` and ``a`` the sin/cos bound (near a pole neither of the others holds);
- ``exp`` and what is made of it (``sigmoid``, ``sinh``, ``cosh``, ``expm1``) on Vulkan:
  ``3 + 2|x|`` ULP where that is more than the table's bound (the Vulkan specification's
  accuracy for exp, which lavapipe uses);
- ``gelu``: 64 ULP for ``-10 <= x < -5``, nothing promised below -10;
- every other op: its ``OpDef.ulp``, with NaN in the same places.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np
from support.numerics import assert_bit_exact, assert_within_ulp, ulp_distance

from vkml.dtypes import float64
from vkml.ops.references.convolution import conv as reference_conv
from vkml.ops.registry import OPS

EXP_BASED = ("exp", "sigmoid", "sinh", "cosh", "expm1")


def check_value(
    op: str | None, got: np.ndarray, want: np.ndarray, operands: list[np.ndarray], kind: str,
    what: str, attrs: Mapping[str, Any] | None = None,
) -> None:  # fmt: skip
    """``got`` against ``want``: bit-exact when ``op`` is None (an exact value), else at the
    bound of the one bounded ``op``, whose operands' reference values are ``operands`` and
    whose node's attributes are ``attrs``."""
    if op is None or got.dtype.kind not in "fV":
        assert_bit_exact(got, want, what)
    elif op == "matmul":
        a, b = (x.astype(np.float64) for x in operands)
        with np.errstate(all="ignore"):
            scale = np.matmul(np.abs(a), np.abs(b)).reshape(want.shape)
        _check_contraction(op, got, want, scale, a.shape[-1], what)
    elif op == "conv":
        assert attrs is not None, "a conv's bound needs its attributes"
        a, b = (np.abs(x.astype(np.float64)) for x in operands)
        with np.errstate(all="ignore"):
            scale = reference_conv([a, b], float64, want.shape, attrs)
        _check_contraction(op, got, want, scale, int(np.prod(b.shape[1:])), what)
    elif op in ("sin", "cos", "tan"):
        _check_absolute(op, got, want, operands[0], what)
    else:
        _check_ulp(op, got, want, operands[0].astype(np.float64), kind, what)


def _eps(dtype: np.dtype) -> float:
    return float(ml_dtypes.finfo(dtype).eps)


def _check_contraction(
    op: str, got: np.ndarray, want: np.ndarray, scale: np.ndarray, k: int, what: str
) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    accum = np.float64 if want.dtype == np.float64 else np.float32
    tiny = float(np.finfo(accum).tiny)
    final = _eps(want.dtype) if want.dtype.itemsize == 2 else 0.0
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(all="ignore"):  # inf and NaN entries are masked out by ok
        bound = 2 * k * float(np.finfo(accum).eps) * scale + final * np.abs(w) + k * tiny
        ok = np.isfinite(scale) & (scale < float(ml_dtypes.finfo(want.dtype).max) / 2)
        err = np.where(ok, np.abs(g - w), 0.0)
    bad = np.flatnonzero(err > np.where(ok, bound, 0.0))
    assert bad.size == 0, (
        f"{what}: {op} error {err.flat[bad[0]]:.3g} > bound {bound.flat[bad[0]]:.3g} at "
        f"{bad[0]}: got {got.flat[bad[0]]!r} want {want.flat[bad[0]]!r}"
    )


def _check_absolute(op: str, got: np.ndarray, want: np.ndarray, x: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    x64 = np.broadcast_to(x.astype(np.float64), want.shape)
    promised = np.ones(want.shape, bool)  # every argument: the devices compute float64
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan_g, nan_w = np.isnan(g) & promised, np.isnan(w) & promised
    assert np.array_equal(nan_g, nan_w), f"{what}: NaN positions differ\n{got}\n{want}"
    err = np.where(promised & ~nan_w, np.abs(g - w), 0.0)
    bound = np.full(want.shape, OPS[op].ulp * _eps(want.dtype))
    if op == "tan":
        err = np.where(ulp_distance(got, want) <= OPS[op].ulp, 0.0, err)
        bound = np.maximum(bound, _tan_bound(want))
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, (
        f"{what}: absolute error {err.flat[bad[0]]:.3g} > {bound.flat[bad[0]]:.3g} at {bad[0]}: "
        f"got {got.flat[bad[0]]!r} want {want.flat[bad[0]]!r} for x = {x64.flat[bad[0]]!r}"
    )


def _tan_bound(t: np.ndarray) -> np.ndarray:
    """How far sin(x) / cos(x) may be from tan(x) = t when sin and cos are each within
    ``a = OPS["sin"].ulp`` eps (of the compute dtype) of the truth: ``a (1 + |t|) sqrt(1 + t^2)``
    (``1 / |cos x|`` is ``sqrt(1 + t^2)``), plus the rounding of the result."""
    compute = np.float64 if t.dtype == np.float64 else np.float32
    a = OPS["sin"].ulp * float(np.finfo(compute).eps)
    with np.errstate(all="ignore"):  # inf near a pole: any value is then within the bound
        t64 = np.abs(t.astype(np.float64))
        return a * (1 + t64) * np.sqrt(1 + t64 * t64) + t64 * _eps(t.dtype)


def _check_ulp(
    op: str, got: np.ndarray, want: np.ndarray, x: np.ndarray, kind: str, what: str
) -> None:
    bound = np.full(want.shape, float(OPS[op].ulp))
    x = np.broadcast_to(x, want.shape) if x.shape != want.shape and x.size else x
    if x.shape != want.shape:  # a binary op (pow): the table's bound everywhere
        assert_within_ulp(got, want, OPS[op].ulp, what)
        return
    with np.errstate(invalid="ignore"):
        if kind == "vulkan" and op in EXP_BASED:
            bound = np.maximum(bound, 3 + 2 * np.nan_to_num(np.abs(x), posinf=0.0))
        if op == "gelu":
            bound = np.where(x < -5, 64.0, bound)
            bound = np.where(x < -10, np.inf, bound)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    nan_g, nan_w = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
    assert np.array_equal(nan_g, nan_w), f"{what}: NaN positions differ\n{got}\n{want}"
    d = ulp_distance(got, want).astype(np.float64)
    bad = np.flatnonzero(d > bound)
    assert bad.size == 0, (
        f"{what}: {int(d.flat[bad[0]])} ULP apart (bound {bound.flat[bad[0]]:g}) at {bad[0]}: "
        f"got {got.flat[bad[0]]!r} want {want.flat[bad[0]]!r} for x = {x.flat[bad[0]]!r}"
    )
