"""Counter-based random numbers: Threefry-2x32 with 20 rounds, the same bits on every device.

A key is a uint32 tensor of shape (2,). Nothing is stateful: every function takes a key and
returns lazy graph built only from integer ops (add, xor, or, and, shifts, which wrap, and
compares) and IEEE-exact float ops (bitcast, subtraction, division, addition, select), so
``bits``, ``uniform``, ``randint`` and ``permutation`` are bit-identical on every device.
``normal`` also calls log, sqrt and cos, whose results are each device's own approximation
(ULP bounds in the op table): it is bit-identical only where those three functions are.

The generator is Random123's ``threefry2x32`` (20 rounds, rotations 13 15 26 6 17 29 16 24,
parity 0x1BD11BDA), applied as JAX does with ``jax_threefry_partitionable`` (the default
since JAX 0.5): element ``i`` (row-major) of a draw uses the counter ``(0, i)``, ``bits`` is
the xor of the block's two output words, ``split`` returns the two words as the new key.
``key``, ``split``, ``bits`` and ``uniform`` on [0, 1) give JAX's numbers bit for bit (for
seeds in [0, 2**31) JAX's default ``PRNGKey`` agrees; for the others, JAX with x64 does). The shape only arranges the
stream, so a draw of n elements is a prefix of a draw of m > n elements from the same key:
use a key once, then split it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vkml.dtypes import DType, float16, float32, float64, int32, int64, to_dtype, uint32
from vkml.errors import DTypeError, ShapeError
from vkml.frontend import functions as fn, op_functions
from vkml.frontend.creation import arange, full, tensor
from vkml.frontend.host import number_arg, shape_arg
from vkml.frontend.tensor import Tensor

Key = Tensor

ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
PARITY = 0x1BD11BDA  # Threefish's key-schedule constant
ROUNDS = 20
# a draw's element index is the counter's low word
MAX_ELEMENTS = 2**32
# permutation compares every pair: n**2 work, and the reference device holds n**2 int64s
MAX_PERMUTATION = 8192


# -- the block function ----------------------------------------------------------------------
def _xor(a: Any, b: Any) -> Tensor:
    return op_functions.bitwise_xor(a, b)


def _or(a: Any, b: Any) -> Tensor:
    return op_functions.bitwise_or(a, b)


def _and(a: Any, b: Any) -> Tensor:
    return op_functions.bitwise_and(a, b)


def _shl(a: Any, b: Any) -> Tensor:
    return op_functions.left_shift(a, b)


def _shr(a: Any, b: Any) -> Tensor:
    return op_functions.right_shift(a, b)


def _rotl(x: Tensor, r: int) -> Tensor:
    return _or(_shl(x, r), _shr(x, 32 - r))


def threefry2x32(key: Key, c0: Tensor, c1: Tensor) -> tuple[Tensor, Tensor]:
    """Threefry-2x32-20 of the counter words ``(c0, c1)`` (uint32, broadcast) under ``key``.

    Returns:
        The two output words, as Random123's ``threefry2x32(ctr, key)`` gives them.
    """
    k0, k1 = key[0], key[1]
    schedule = (k0, k1, _xor(_xor(k0, k1), PARITY))
    x0, x1 = c0 + k0, c1 + k1
    for r in range(ROUNDS):
        x0 = x0 + x1
        x1 = _xor(_rotl(x1, ROTATIONS[r % 8]), x0)
        if r % 4 == 3:  # key injection i after every fourth round
            i = (r + 1) // 4
            x0 = x0 + schedule[i % 3]
            x1 = x1 + schedule[(i + 1) % 3] + i
    return x0, x1


def _blocks(key: Key, n: int, high: int = 0) -> tuple[Tensor, Tensor]:
    """The two words of the blocks with counters ``(high, 0) .. (high, n - 1)``."""
    c0 = full((n,), high, uint32, key.device)
    c1 = arange(n, dtype=uint32, device=key.device)
    return threefry2x32(key, c0, c1)


def check_key(op: str, key: Any) -> Key:
    """``key`` if it is one key (a uint32 tensor of shape (2,)); else an error naming ``op``
    (``"random.split"``, or a layer that takes a key) and the remedy."""
    if not isinstance(key, Tensor) or key.dtype is not uint32:
        what = f"a {key.dtype} tensor" if isinstance(key, Tensor) else type(key).__name__
        raise DTypeError(
            f"'{op}' needs a key (a uint32 tensor of shape (2,)), got {what}; "
            f"make one with vkml.random.key(seed)"
        )
    if key.shape != (2,):
        raise ShapeError(
            f"'{op}' needs one key of shape (2,), got shape {key.shape}; index the "
            f"result of split to pick a key: keys[0]"
        )
    return key


def _count(op: str, shape: Any) -> tuple[tuple[int, ...], int]:
    dims = shape_arg(f"random.{op}", shape)
    n = math.prod(dims)
    if n > MAX_ELEMENTS:
        raise ValueError(
            f"'random.{op}': {n} elements exceed the 2**32 counters of one key; split it"
        )
    return dims, n


# -- keys ------------------------------------------------------------------------------------
def key(seed: int, device: Any = None) -> Key:
    """A key for ``seed``: the uint32 words ``(seed >> 32, seed & 0xFFFFFFFF)`` of seed mod 2**64.

    The key is data (8 bytes uploaded to ``device``), not a constant in the graph, so graphs
    drawn from different seeds share one compiled executable.

    Args:
        seed: an integer in [-2**63, 2**64).
        device: where the key and everything drawn from it live; default ``vkml.cpu``.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise DTypeError(
            f"'random.key': the seed must be an integer, got {type(seed).__name__} {seed!r:.40}"
        )
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"'random.key': seed {seed} is outside [-2**63, 2**64)")
    seed %= 2**64
    return tensor(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32), device=device)


def split(key: Key, num: int = 2) -> Tensor:
    """``num`` new keys from ``key``, as a (num, 2) uint32 tensor; ``keys[i]`` is key i.

    Key i is the block of counter ``(0, i)``: independent streams for independent uses.
    """
    check_key("random.split", key)
    if (
        isinstance(num, bool)
        or not isinstance(num, (int, np.integer))
        or not 0 <= num <= MAX_ELEMENTS
    ):
        raise ValueError(f"'random.split': num={num!r} must be an integer in [0, 2**32]")
    if num == 0:
        return full((0, 2), 0, uint32, key.device)
    y0, y1 = _blocks(key, int(num))
    return fn.stack([y0, y1], axis=1)


# -- draws -----------------------------------------------------------------------------------
def bits(key: Key, shape: Any) -> Tensor:
    """Raw uint32 random bits of ``shape``: element i is the xor of block ``(0, i)``'s words."""
    check_key("random.bits", key)
    dims, n = _count("bits", shape)
    if n == 0:
        return full(dims, 0, uint32, key.device)
    y0, y1 = _blocks(key, n)
    return fn.reshape(_xor(y0, y1), dims)


def _unit(y0: Tensor, y1: Tensor, dtype: DType) -> Tensor:
    """Uniform floats in [0, 1) of ``dtype`` from the block words: float64 takes the top 52
    bits of ``y0:y1``, the others ``_unit_of_word(y0 ^ y1)``."""
    if dtype is not float64:
        return _unit_of_word(_xor(y0, y1), dtype)
    high, low = fn.astype(y0, int64), fn.astype(y1, int64)
    mantissa = _or(_shl(high, 20), _shr(low, 12))
    return fn.bitcast(_or(mantissa, 0x3FF0000000000000), float64) - 1.0


def _unit_of_word(w: Tensor, dtype: DType) -> Tensor:
    """Random mantissa bits under the exponent of 1.0, minus 1.0 (exact): float32 takes the
    top 23 bits of ``w``, float16 the top 10 of its low 16 bits, bfloat16 the top 7 of its low
    8 bits (JAX's choices: the bits of the dtype's width, at least 8)."""
    if dtype is float32:
        mantissa = _shr(w, 9)
    else:
        kept, width = (10, 16) if dtype is float16 else (7, 8)
        low_bits = _and(w, (1 << width) - 1)
        mantissa = _shl(_shr(low_bits, width - kept), 23 - kept)
    unit = fn.bitcast(_or(mantissa, 0x3F800000), float32) - 1.0
    return fn.astype(unit, dtype)  # exact: at most `kept` significant bits


def _float_dtype(op: str, dtype: Any) -> DType:
    dt = to_dtype(dtype)
    if not dt.is_float:
        raise DTypeError(
            f"'random.{op}' draws floating-point numbers, not {dt}; see random.randint"
        )
    return dt


def _bounds(dt: DType, low: float, high: float) -> tuple[float, float, float, float]:
    """(low, high, 1 / (high - low), the largest value below high), each rounded to ``dt``."""
    lo, hi = np.asarray(low, dt.numpy), np.asarray(high, dt.numpy)
    with np.errstate(all="ignore"):
        inverse = np.asarray(1, dt.numpy) / (hi - lo)
    if not (
        np.isfinite(lo) and np.isfinite(hi) and lo < hi and np.isfinite(hi - lo) and inverse > 0
    ):
        raise ValueError(
            f"'random.uniform' needs finite low < high whose difference and its reciprocal are "
            f"finite in {dt}, got low={low!r}, high={high!r}"
        )
    below = np.nextafter(hi, np.asarray(-np.inf, dt.numpy))
    return float(lo), float(hi), float(inverse), float(below)


def uniform(
    key: Key, shape: Any, dtype: Any = float32, low: float = 0.0, high: float = 1.0
) -> Tensor:
    """Uniform floats in [low, high): never ``high``.

    ``unit / (1 / (high - low)) + low`` with ``unit`` in [0, 1) (random mantissa bits, as
    JAX) and every constant rounded to ``dtype``; a result that rounds up to ``high`` becomes
    the largest float below it. A division, not a multiplication by the span: compilers may
    fuse a multiply feeding an add into one FMA (one rounding instead of two; IREE's llvm-cpu
    marks them contractable), which none does with a division, so the same IEEE roundings
    happen everywhere and the result is bit-identical on every device. With the default [0, 1) the result is ``unit``.

    Args:
        key: a key (``key``, or a row of ``split``).
        shape: the result's shape.
        dtype: float32, float16, bfloat16 or float64.
        low, high: finite, low < high once rounded to ``dtype``.
    """
    check_key("random.uniform", key)
    dt = _float_dtype("uniform", dtype)
    low = number_arg("random.uniform", "low", low)
    high = number_arg("random.uniform", "high", high)
    lo, hi, inverse, below = _bounds(dt, low, high)
    dims, n = _count("uniform", shape)
    if n == 0:
        return full(dims, lo, dt, key.device)
    unit = fn.reshape(_unit(*_blocks(key, n), dt), dims)
    if (lo, hi) == (0.0, 1.0):
        return unit
    scaled = unit / inverse + lo  # >= lo: unit / inverse >= 0 and rounding is monotonic
    return fn.where(scaled < hi, scaled, below)


def normal(
    key: Key, shape: Any, dtype: Any = float32, mean: float = 0.0, std: float = 1.0
) -> Tensor:
    """Normal floats by Box–Muller: ``sqrt(-2 log(1 - u1)) * cos(2 pi u2)``, then ``* std + mean``.

    ``u1``, ``u2`` are uniforms in [0, 1) from the two words of block ``(0, i)`` (23-bit, as
    ``uniform``; float64 takes 52-bit ones from blocks ``(0, i)`` and ``(1, i)``), so
    ``1 - u1`` is in (0, 1] and the logarithm is finite. float16/bfloat16 compute in float32
    and round once. The integer part is exact everywhere, but log, sqrt and cos are each
    device's own approximation (op table: 4, 2 and 8 ULP): the result is bit-identical only
    between devices whose log, sqrt and cos agree (and, with ``mean``/``std``, that both
    round or both fuse ``z * std + mean``); in float32 cpu stays within
    ``64 * 2**-23 * (1 + |z|)`` of reference. float64's log and cos are vkml's own, the same
    bits on every device (``vkml.ops.float64``), so float64 normals are bit-identical on
    ``cpu``, ``reference`` and a Vulkan device with float64.
    """
    check_key("random.normal", key)
    dt = _float_dtype("normal", dtype)
    mean = number_arg("random.normal", "mean", mean)
    std = number_arg("random.normal", "std", std)
    dims, n = _count("normal", shape)
    if n == 0:
        return full(dims, mean, dt, key.device)
    y0, y1 = _blocks(key, n)
    if dt is float64:
        u1 = _unit(y0, y1, float64)
        u2 = _unit(*_blocks(key, n, high=1), float64)
    else:
        u1, u2 = _unit_of_word(y0, float32), _unit_of_word(y1, float32)
    radius = ((1.0 - u1).log() * -2.0).sqrt()
    z = radius * (u2 * (2 * math.pi)).cos()
    z = fn.reshape(fn.astype(z, dt), dims)
    if (mean, std) == (0.0, 1.0):
        return z
    return z * std + mean


def randint(key: Key, shape: Any, low: int, high: int, dtype: Any = int32) -> Tensor:
    """Integers in [low, high), ``low + floor(w * (high - low) / 2**64)`` for the 64 random
    bits ``w = y0:y1`` of each block: integer ops only (exact everywhere), bias below 2**-32.

    Args:
        low, high: Python integers, ``high - low`` in [1, 2**32], both bounds within ``dtype``
            (``high`` may be its maximum + 1).
        dtype: int32, int64 or uint32.
    """
    check_key("random.randint", key)
    dt = to_dtype(dtype)
    if not dt.is_integer:
        raise DTypeError(f"'random.randint' draws integers, not {dt}; see random.uniform")
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise DTypeError(f"'random.randint': {name}={v!r} is not an integer")
    low, high = int(low), int(high)
    info = np.iinfo(dt.numpy)
    if not (info.min <= low < high <= int(info.max) + 1 and high - low <= 2**32):
        raise ValueError(
            f"'random.randint': need {int(info.min)} <= low < high <= {int(info.max) + 1} "
            f"(for {dt}) and high - low <= 2**32, got low={low}, high={high}"
        )
    dims, n = _count("randint", shape)
    if n == 0:
        return full(dims, low, dt, key.device)
    span = high - low
    y0, y1 = (fn.astype(y, int64) for y in _blocks(key, n))
    # the products wrap modulo 2**64 in int64; `>> 32 & mask` reads their high words unsigned
    carry = _and(_shr(y1 * span, 32), 0xFFFFFFFF)
    offset = _and(_shr(y0 * span + carry, 32), 0xFFFFFFFF)
    return fn.reshape(fn.astype(offset + low, dt), dims)


def permutation(key: Key, n: int) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64): element i is the rank of sort key i.

    Sort key i is ``bits[i] * n + i`` (distinct, so the ranks are a permutation even when two
    bits tie); its rank counts the smaller keys, comparing all n**2 pairs, so ``n`` is at most
    ``MAX_PERMUTATION`` (8192). For larger n, sort on the host:
    ``np.argsort(vkml.random.bits(key, (n,)).numpy(), kind="stable")``.
    """
    check_key("random.permutation", key)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_PERMUTATION:
        raise ValueError(
            f"'random.permutation': n={n!r} must be an integer in [0, {MAX_PERMUTATION}] (it "
            f"compares all n**2 pairs); for larger n sort vkml.random.bits(key, (n,)) on the host"
        )
    n = int(n)
    index = arange(n, dtype=int64, device=key.device)
    if n <= 1:
        return index
    sort_key = fn.astype(bits(key, (n,)), int64) * n + index
    smaller = fn.reshape(sort_key, (1, n)) < fn.reshape(sort_key, (n, 1))
    return op_functions.sum(smaller, axis=1)


__all__ = ["Key", "bits", "key", "normal", "permutation", "randint", "split", "uniform"]
