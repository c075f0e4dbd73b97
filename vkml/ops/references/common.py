"""The reference device's interpreter: every op in NumPy, implementing vkml's contracts.

It is the oracle the compiled devices are checked against, so it is written for clarity and
exactness, not speed: sums follow the published pairwise tree, float16/bfloat16 arithmetic is
done in float32 and rounded once (as the emitters do), and NaN follows PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import DType, bfloat16, float32, from_numpy, promote_types

Reference = Callable[[Sequence[np.ndarray], DType, tuple[int, ...], Mapping[str, Any]], np.ndarray]


def compute_dtype(dtype: DType) -> np.dtype:
    return float32.numpy if dtype.is_float and dtype.bits == 16 else dtype.numpy


def scalar(value: float | bool, dtype: np.dtype) -> np.ndarray:
    """``value`` as a 0-d array of ``dtype``, rounded the way the MLIR literal is."""
    if dtype.kind in "iub":
        return np.array(int(value) if dtype.kind != "b" else bool(value)).astype(dtype)
    return np.array(value, dtype=np.float64).astype(dtype)


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """NumPy ``astype`` except that a cast to bool means nonzero, and float64 -> bfloat16
    rounds once (ml_dtypes goes through float32 and can round twice)."""
    if dtype.kind == "b" and x.dtype.kind != "b":
        return x != 0
    if x.dtype == np.float64 and dtype == bfloat16.numpy:
        return _round_to_odd_f32(x).astype(dtype)
    return x.astype(dtype)


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """float64 to the float32 neighbour toward zero, lowest bit set when inexact."""
    with np.errstate(all="ignore"):
        nearest = x.astype(np.float32)
        back = nearest.astype(np.float64)
        bits = nearest.view(np.uint32).copy()
        bits = np.where(np.abs(back) > np.abs(x), bits - np.uint32(1), bits)
        bits = np.where(back != x, bits | np.uint32(1), bits)
    return bits.astype(np.uint32).view(np.float32)


def finish(y: np.ndarray, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
    """``y`` as the op's result: cast to ``dtype`` once, broadcast to ``shape``, C-ordered."""
    y = cast(np.asarray(y), dtype.numpy)
    if y.shape != shape:
        y = np.broadcast_to(y, shape)
    return np.array(y, order="C")


def arith(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Reference:
    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        cdt = compute_dtype(dtype)
        with np.errstate(all="ignore"):
            return finish(fn(cast(xs[0], cdt), cast(xs[1], cdt)), dtype, shape)

    return ref


def power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x ** y``; for integers a negative exponent truncates 1 / x**|y| toward zero."""
    if x.dtype.kind not in "iu":
        return np.power(x, y)
    x, y = np.broadcast_arrays(x, y)
    negative = y < 0
    out = np.power(x, np.where(negative, 0, y))
    if negative.any():
        one = np.ones((), x.dtype)
        odd = (np.abs(y) % 2) == 1
        minus_one = np.where(odd, -one if x.dtype.kind == "i" else one, one)
        recip = np.where(
            x == 1, one, np.where(x == -1 if x.dtype.kind == "i" else False, minus_one, 0)
        )
        out = np.where(negative, recip, out)
    return out.astype(x.dtype)


def compare(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Reference:
    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        common = promote_types(from_numpy(xs[0].dtype), from_numpy(xs[1].dtype)).numpy
        with np.errstate(all="ignore"):
            return finish(fn(xs[0].astype(common), xs[1].astype(common)), dtype, shape)

    return ref


def unary(fn: Callable[[np.ndarray], np.ndarray]) -> Reference:
    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        cdt = compute_dtype(dtype)
        with np.errstate(all="ignore"):
            return finish(fn(cast(xs[0], cdt)), dtype, shape)

    return ref


_erf64 = np.frompyfunc(math.erf, 1, 1)


def rsqrt(x: np.ndarray) -> np.ndarray:
    return np.array(1, x.dtype) / np.sqrt(x)


def integral(fn: Callable[[np.ndarray], np.ndarray]) -> Reference:
    """A rounding function (floor, ceil, trunc, rint) of floats; integers are their own value
    (NumPy would return float64 for them)."""
    as_float = unary(fn)

    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        if not dtype.is_float:
            return finish(xs[0], dtype, shape)
        return as_float(xs, dtype, shape, attrs)

    return ref


def sign(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """1, -1, 0 for either zero (+0.0), NaN for NaN."""
    x = cast(xs[0], dtype.numpy)
    if dtype.kind == "uint":  # no -1 to spell: NumPy 2.5 refuses a Python -1 next to uint32
        return finish(np.where(x > 0, 1, 0).astype(dtype.numpy), dtype, shape)
    with np.errstate(invalid="ignore"):
        y = np.where(x > 0, 1, np.where(x < 0, -1, np.where(x != x, x, 0)))
    return finish(y.astype(dtype.numpy), dtype, shape)


def erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erf64(x.astype(np.float64)), np.float64).astype(x.dtype)


def sigmoid(x: np.ndarray) -> np.ndarray:
    one = np.array(1, x.dtype)
    return one / (one + np.exp(-x))


_erfc64 = np.frompyfunc(math.erfc, 1, 1)


def gelu(x: np.ndarray) -> np.ndarray:
    scaled = x * scalar(-math.sqrt(0.5), x.dtype)
    erfc = np.asarray(_erfc64(scaled.astype(np.float64)), np.float64).astype(x.dtype)
    return (x * scalar(0.5, x.dtype)) * erfc


def select_max(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x if (x >= y or x is NaN) else y`` elementwise (NumPy's scalar rule, spelled out:
    NumPy's SIMD maximum may break ties between -0.0 and +0.0 the other way)."""
    with np.errstate(all="ignore"):
        keep = (x >= y) | (x != x)
    return np.where(keep, x, y)


def select_min(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        keep = (x <= y) | (x != x)
    return np.where(keep, x, y)


def relu(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    x = cast(xs[0], dtype.numpy)
    zero = np.zeros((), dtype.numpy)
    return finish(np.where(x <= zero, zero, x), dtype, shape)


def where(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return finish(
        np.where(cast(xs[0], np.dtype(bool)), cast(xs[1], dtype.numpy), cast(xs[2], dtype.numpy)),
        dtype,
        shape,
    )


def cond(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """The arm ``xs[0]`` chooses, evaluated on ``xs[1:]`` (the other is not run)."""
    on_true, on_false = attrs["regions"]
    return (on_true if bool(xs[0]) else on_false)(list(xs[1:]))[0]


def while_loop(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> Any:
    """The body region applied while the condition region holds; one array per carried value."""
    keep_going, body = attrs["regions"]
    values = list(xs)
    while bool(keep_going(values)[0]):
        values = body(values)
    return tuple(values)


def identity(
    xs: Sequence[Any], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """The operand itself (a fence: nothing to compute)."""
    out: np.ndarray = xs[0]
    return out


def result(
    xs: Sequence[Any], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    """Result ``index`` of a node with several."""
    out: np.ndarray = xs[0][attrs["index"]]
    return out


def astype(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    with np.errstate(all="ignore"):
        return finish(xs[0], dtype, shape)


def bitcast(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return np.array(xs[0].view(dtype.numpy), order="C")


def bitwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Reference:
    def ref(
        xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
    ) -> np.ndarray:
        return finish(fn(cast(xs[0], dtype.numpy), cast(xs[1], dtype.numpy)), dtype, shape)

    return ref


def shift(left: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``x << y`` or ``x >> y`` with StableHLO's rule for an amount outside ``[0, bits)``: the
    result is 0, or -1 for an arithmetic right shift of a negative ``x`` (written out rather
    than left to NumPy's C shifts, whose out-of-range behaviour is the platform's)."""

    def fn(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(x, y)
        inside = (y >= 0) & (y < 8 * x.dtype.itemsize)
        amount = np.where(inside, y, 0).astype(x.dtype)
        shifted = np.left_shift(x, amount) if left else np.right_shift(x, amount)
        fill = np.where((x < 0) & (not left), -1, 0).astype(x.dtype)
        return np.where(inside, shifted, fill)

    return fn


def full(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return finish(scalar(attrs["value"], dtype.numpy), dtype, shape)


def arange(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    cdt = compute_dtype(dtype)
    i = np.arange(shape[0]).astype(cdt)
    with np.errstate(all="ignore"):
        y = i * scalar(attrs["step"], cdt) + scalar(attrs["start"], cdt)
    if attrs.get("stop") is not None and shape[0] > 1:
        y[-1] = scalar(attrs["stop"], cdt)
    return finish(y, dtype, shape)


def reshape(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return xs[0].reshape(shape)


def permute(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return np.array(np.transpose(xs[0], attrs["perm"]), order="C")


def broadcast_to(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return np.array(np.broadcast_to(xs[0], shape), order="C")


def strided_slice(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    x = np.flip(xs[0], axis=tuple(attrs["reverse"])) if attrs["reverse"] else xs[0]
    index = tuple(
        slice(lo, hi, st) for lo, hi, st in zip(attrs["start"], attrs["limit"], attrs["stride"])
    )
    return np.array(x[index], order="C")


def concatenate(
    xs: Sequence[np.ndarray], dtype: DType, shape: tuple[int, ...], attrs: Mapping[str, Any]
) -> np.ndarray:
    return np.concatenate([cast(x, dtype.numpy) for x in xs], axis=attrs["axis"])
