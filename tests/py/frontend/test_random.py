"""``vkml.random`` (``vkml/frontend/random.py``): Threefry-2x32-20 against Random123's published
vectors and an independent pure-Python implementation, bit-identity of every draw between cpu
and reference (normal within its stated bound), JAX compatibility, independence of split keys,
determinism, ranges and rough distributions, and the integer ops the generator is built from.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from vkml.frontend.random import threefry2x32

R = vkml.random
DEVICES = [vkml.reference, vkml.cpu]

# -- an independent Threefry-2x32-20, in Python integers ---------------------------------------
MASK = 0xFFFFFFFF


def threefry_python(k0: int, k1: int, c0: int, c1: int) -> tuple[int, int]:
    """Random123's threefry2x32 with 20 rounds, written from the Threefish paper's schedule."""
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (k0, k1, 0x1BD11BDA ^ k0 ^ k1)
    x0, x1 = (c0 + k0) & MASK, (c1 + k1) & MASK
    for r in range(20):
        x0 = (x0 + x1) & MASK
        rot = rotations[r % 8]
        x1 = (((x1 << rot) | (x1 >> (32 - rot))) & MASK) ^ x0
        if r % 4 == 3:
            s = (r + 1) // 4
            x0 = (x0 + ks[s % 3]) & MASK
            x1 = (x1 + ks[(s + 1) % 3] + s) & MASK
    return x0, x1


# Random123's known-answer vectors (kat_vectors, threefry2x32 20 rounds): key, counter, output
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def test_python_threefry_gives_random123s_known_answers() -> None:
    for key, counter, want in KNOWN_ANSWERS:
        assert threefry_python(*key, *counter) == want


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_threefry_gives_random123s_known_answers(device: vkml.Device) -> None:
    keys = [vkml.tensor(np.array(k, np.uint32), device=device) for k, _, _ in KNOWN_ANSWERS]
    words = [
        threefry2x32(key, *(vkml.tensor(np.array([c], np.uint32), device=device) for c in counter))
        for key, (_, counter, _) in zip(keys, KNOWN_ANSWERS)
    ]
    vkml.realize(*[w for pair in words for w in pair])
    for (y0, y1), (_, _, want) in zip(words, KNOWN_ANSWERS):
        assert (int(y0.numpy()[0]), int(y1.numpy()[0])) == want


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_bits_and_split_follow_the_python_threefry(device: vkml.Device) -> None:
    seed = 0x0123456789ABCDEF
    k0, k1 = seed >> 32, seed & MASK
    bits, keys = R.bits(R.key(seed, device), (2, 5)), R.split(R.key(seed, device), 4)
    vkml.realize(bits, keys)
    blocks = [threefry_python(k0, k1, 0, i) for i in range(10)]
    assert bits.numpy().reshape(-1).tolist() == [a ^ b for a, b in blocks]
    assert keys.numpy().tolist() == [list(b) for b in blocks[:4]]


def test_key_holds_the_seeds_two_words_modulo_2_to_64() -> None:
    assert R.key(42).numpy().tolist() == [0, 42]
    assert R.key(2**40 + 5).numpy().tolist() == [256, 5]
    assert R.key(-1).numpy().tolist() == [MASK, MASK]
    k = R.key(7, device="reference")
    assert k.dtype == vkml.uint32 and k.shape == (2,) and k.device is vkml.reference


# -- bit-identity between devices ----------------------------------------------------------------
def exact_draws(key: vkml.Tensor) -> dict[str, vkml.Tensor]:
    """Every draw that promises the same bits on every device."""
    ks = R.split(key, 8)
    return {
        "bits": R.bits(ks[0], (3, 1000)),
        "split": R.split(ks[1], 5),
        "uniform": R.uniform(ks[2], (3000,)),
        "uniform_bounded": R.uniform(ks[2], (3000,), low=-2.5, high=7.0),
        "uniform_f16": R.uniform(ks[3], (3000,), vkml.float16, low=-1.0, high=3.0),
        "uniform_bf16": R.uniform(ks[3], (3000,), vkml.bfloat16),
        "uniform_f64": R.uniform(ks[3], (3000,), vkml.float64, low=1.0, high=1.5),
        "randint": R.randint(ks[4], (3000,), -3, 17),
        "randint_int32_range": R.randint(ks[4], (3000,), -(2**31), 2**31),
        "randint_uint32_range": R.randint(ks[5], (3000,), 0, 2**32, vkml.uint32),
        "randint_int64_low": R.randint(ks[5], (3000,), -(2**63), -(2**63) + 1000, vkml.int64),
        "permutation": R.permutation(ks[6], 777),
    }


Draws = Callable[[vkml.Tensor], dict[str, vkml.Tensor]]


def draw_on(device: vkml.Device, seed: int, draws: Draws = exact_draws) -> dict[str, np.ndarray]:
    out = draws(R.key(seed, device))
    vkml.realize(*out.values())
    return {name: t.numpy() for name, t in out.items()}


def test_exact_draws_are_bit_identical_on_cpu_and_reference() -> None:
    cpu, ref = draw_on(vkml.cpu, 2024), draw_on(vkml.reference, 2024)
    for name in ref:
        assert_bit_exact(cpu[name], ref[name], name)


def normal_draws(key: vkml.Tensor) -> dict[str, vkml.Tensor]:
    ks = R.split(key, 3)
    return {
        "float32": R.normal(ks[0], (20000,)),
        "float16": R.normal(ks[1], (5000,), vkml.float16),
        "bfloat16": R.normal(ks[2], (5000,), vkml.bfloat16, mean=1.0, std=3.0),
    }


def test_normal_on_cpu_is_within_its_stated_bound_of_reference() -> None:
    """|cpu - reference| <= 64 eps32 (1 + |z|) in float32 (docs/random.md), plus one rounding
    to the dtype for float16 and bfloat16."""
    cpu, ref = draw_on(vkml.cpu, 5, normal_draws), draw_on(vkml.reference, 5, normal_draws)
    eps32 = 2.0**-23
    for name in ref:
        got, want = cpu[name].astype(np.float64), ref[name].astype(np.float64)
        assert np.isfinite(got).all() and cpu[name].dtype == ref[name].dtype
        rounding = (
            float(ml_dtypes.finfo(ref[name].dtype).eps) * np.abs(want) if name != "float32" else 0
        )
        bound = 64 * eps32 * (1 + np.abs(want)) * (3.0 if name == "bfloat16" else 1.0) + rounding
        assert (np.abs(got - want) <= bound).all(), f"{name}: {np.abs(got - want).max():.3g}"


def test_float64_normal_is_the_same_bits_on_cpu_and_reference() -> None:
    z = R.normal(R.key(1, "reference"), (1000,), vkml.float64).numpy()
    assert z.dtype == np.float64 and abs(z.mean()) < 0.15 and abs(z.var() - 1) < 0.15
    assert_bit_exact(R.normal(R.key(1), (1000,), vkml.float64).numpy(), z, "float64 normal")


def test_same_bits_as_jax_for_key_split_bits_and_uniform() -> None:
    jax = pytest.importorskip("jax")
    k = jax.random.PRNGKey(31337)
    ours = R.key(31337)
    assert np.array_equal(np.asarray(k), ours.numpy())
    assert np.array_equal(np.asarray(jax.random.split(k, 6)), R.split(ours, 6).numpy())
    assert np.array_equal(np.asarray(jax.random.bits(k, (4, 50))), R.bits(ours, (4, 50)).numpy())
    for dtype in ("float32", "float16", "bfloat16"):
        want = np.asarray(jax.random.uniform(k, (999,), dtype=dtype))
        assert_bit_exact(R.uniform(ours, (999,), dtype).numpy(), want, f"uniform {dtype}")


def test_float64_uniform_and_64_bit_seeds_match_jax_with_x64(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    # a separate process: x64 is a process-wide JAX setting
    seed, out = 2**40 + 5, tmp_path / "jax.npz"
    script = (
        "import jax, numpy as np, sys; k = jax.random.PRNGKey(int(sys.argv[1])); "
        "np.savez(sys.argv[2], key=np.asarray(k), "
        "u=np.asarray(jax.random.uniform(k, (500,), dtype='float64')))"
    )
    env = {**os.environ, "JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, "-c", script, str(seed), str(out)], env=env, check=True)
    want = np.load(out)
    assert np.array_equal(R.key(seed).numpy(), want["key"])
    assert_bit_exact(R.uniform(R.key(seed), (500,), vkml.float64).numpy(), want["u"], "float64")


# -- streams ------------------------------------------------------------------------------------
def test_split_keys_give_independent_streams() -> None:
    key = R.key(0)
    keys = R.split(key, 3)
    streams = [R.bits(k, (4096,)) for k in (key, keys[0], keys[1], keys[2])]
    vkml.realize(*streams)
    values = [s.numpy() for s in streams]
    assert len({tuple(k) for k in keys.numpy().tolist()}) == 3
    for i in range(4):
        for j in range(i + 1, 4):
            assert (values[i] == values[j]).sum() <= 1, (i, j)
            a, b = values[i] / 2.0**32, values[j] / 2.0**32
            assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(a.size)  # 4 standard errors


def test_same_seed_gives_the_same_numbers_and_reuses_the_executable() -> None:
    first = R.uniform(R.key(11), (256,)).numpy()
    vkml.reset_stats()
    again = R.uniform(R.key(11), (256,)).numpy()
    other_seed = R.uniform(R.key(12), (256,)).numpy()
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other_seed)
    # the seed is data, not structure: a new seed compiles nothing
    assert vkml.stats()["compiles"] == 0


def test_a_draw_is_a_prefix_of_a_longer_draw_and_shape_only_arranges_it() -> None:
    key = R.key(3)
    short, long, matrix = R.bits(key, (7,)), R.bits(key, (20,)), R.bits(key, (4, 5))
    vkml.realize(short, long, matrix)
    assert np.array_equal(short.numpy(), long.numpy()[:7])
    assert np.array_equal(matrix.numpy(), long.numpy().reshape(4, 5))


# -- ranges and distributions ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_uniform_stays_in_low_high_and_never_returns_high(dtype: str) -> None:
    np_dtype = vkml.dtypes.to_dtype(dtype).numpy
    step = float(ml_dtypes.finfo(np_dtype).eps)
    # [1, 1 + 2 steps): most draws round to 1 + 2 steps = high and must come back below it
    cases = [(0.0, 1.0), (-3.0, -2.0), (1.0, 1.0 + 2 * step), (-1e4, 1e4)]
    outs = [R.uniform(R.key(9), (20000,), dtype, lo, hi) for lo, hi in cases]
    vkml.realize(*outs)
    for (lo, hi), out in zip(cases, outs):
        x = out.numpy()
        assert x.dtype == np_dtype
        low, high = np.asarray(lo, np_dtype), np.asarray(hi, np_dtype)
        assert (x >= low).all() and (x < high).all(), (lo, hi, x.min(), x.max())
    assert len(np.unique(outs[2].numpy())) >= 2


def test_uniform_and_normal_have_the_right_mean_and_variance() -> None:
    n = 100_000
    keys = R.split(R.key(77), 2)
    u, z = R.uniform(keys[0], (n,), low=-1.0, high=3.0), R.normal(keys[1], (n,), mean=2.0, std=0.5)
    vkml.realize(u, z)
    u64, z64 = u.numpy().astype(np.float64), z.numpy().astype(np.float64)
    # four standard errors: var(U[-1,3]) = 16/12, var(sample variance) ~ (mu4 - sigma^4) / n
    assert abs(u64.mean() - 1.0) < 4 * math.sqrt(16 / 12 / n)
    assert abs(u64.var() - 16 / 12) < 4 * math.sqrt((256 / 80 - (16 / 12) ** 2) / n)
    assert abs(z64.mean() - 2.0) < 4 * 0.5 / math.sqrt(n)
    assert abs(z64.var() - 0.25) < 4 * 0.25 * math.sqrt(2 / n)
    assert abs(((z64 - 2.0) / 0.5 > 1.96).mean() - 0.025) < 4 * math.sqrt(0.025 * 0.975 / n)


def test_randint_covers_low_to_high_evenly() -> None:
    n, low, high = 100_000, -3, 7
    x = R.randint(R.key(5), (n,), low, high).numpy()
    assert x.dtype == np.int32 and x.min() == low and x.max() == high - 1
    counts = np.bincount(x - low, minlength=high - low)
    expected = n / (high - low)
    assert (np.abs(counts - expected) < 5 * math.sqrt(expected)).all(), counts


def test_randint_reaches_the_ends_of_a_full_range() -> None:
    x = R.randint(R.key(6), (50_000,), 0, 2**32, vkml.uint32).numpy()
    assert x.dtype == np.uint32 and x.max() > 2**32 - 2**20 and x.min() < 2**20
    y = R.randint(R.key(6), (50_000,), -(2**31), 2**31).numpy()
    assert y.min() < -(2**31) + 2**20 and y.max() > 2**31 - 2**20
    assert np.array_equal(x.view(np.int32) ^ np.int32(-(2**31)), y)  # the same bits, offset


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_permutation_is_a_permutation(device: vkml.Device) -> None:
    keys = R.split(R.key(8, device), 2)
    perms = [R.permutation(keys[0], 1000), R.permutation(keys[1], 1000), R.permutation(keys[0], 1)]
    vkml.realize(*perms)
    a, b, one = (p.numpy() for p in perms)
    assert a.dtype == np.int64 and np.array_equal(np.sort(a), np.arange(1000))
    assert np.array_equal(np.sort(b), np.arange(1000)) and not np.array_equal(a, b)
    assert (a == np.arange(1000)).sum() < 10  # a fixed point has probability 1/n
    assert one.tolist() == [0] and R.permutation(keys[0], 0).shape == (0,)


def test_permutation_is_the_rank_of_the_bits_with_ties_broken_by_index() -> None:
    key = R.key(10)
    bits, perm = R.bits(key, (300,)), R.permutation(key, 300)
    vkml.realize(bits, perm)
    assert np.array_equal(np.argsort(perm.numpy()), np.argsort(bits.numpy(), kind="stable"))


# -- bad input -----------------------------------------------------------------------------------
def test_bad_keys_and_arguments_are_refused_with_the_remedy() -> None:
    key = R.key(0)
    with pytest.raises(vkml.DTypeError, match=r"random.uniform.*key.*float32 tensor.*random.key"):
        R.uniform(vkml.tensor([0.0, 1.0]), (3,))
    with pytest.raises(vkml.ShapeError, match=r"shape \(3, 2\).*keys\[0\]"):
        R.bits(R.split(key, 3), (3,))
    with pytest.raises(vkml.DTypeError, match="seed must be an integer"):
        R.key(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside"):
        R.key(2**64)
    with pytest.raises(vkml.DTypeError, match="draws floating-point"):
        R.uniform(key, (3,), vkml.int32)
    with pytest.raises(vkml.DTypeError, match="draws integers"):
        R.randint(key, (3,), 0, 5, vkml.float32)
    with pytest.raises(ValueError, match="low < high"):
        R.uniform(key, (3,), low=1.0, high=1.0)
    with pytest.raises(ValueError, match="low < high"):
        R.randint(key, (3,), 0, 2**31 + 1)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        R.randint(key, (3,), 0, 2**33, vkml.int64)
    with pytest.raises(ValueError, match="sort vkml.random.bits"):
        R.permutation(key, 10_000)


def test_draws_of_no_elements_have_the_right_shape_and_dtype() -> None:
    key = R.key(0)
    outs = [
        R.bits(key, (0, 3)),
        R.uniform(key, (2, 0)),
        R.randint(key, (0,), 0, 3),
        R.split(key, 0),
    ]
    assert [(o.shape, o.dtype.name) for o in outs] == [
        ((0, 3), "uint32"), ((2, 0), "float32"), ((0,), "int32"), ((0, 2), "uint32"),
    ]  # fmt: skip


# -- the integer ops ---------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_shifts_by_amounts_outside_the_width_give_zero_or_the_sign(device: vkml.Device) -> None:
    x = vkml.tensor(np.array([[-8], [8]], np.int32), device=device)
    amounts = vkml.tensor(np.array([[1, 31, 32, 40, -1]], np.int32), device=device)
    left, right = vkml.left_shift(x, amounts), vkml.right_shift(x, amounts)
    u = vkml.tensor(np.array([0x80000000], np.uint32), device=device)
    logical = vkml.right_shift(u, vkml.tensor(np.array([31, 32], np.uint32), device=device))
    vkml.realize(left, right, logical)
    assert left.numpy().tolist() == [[-16, 0, 0, 0, 0], [16, 0, 0, 0, 0]]
    assert right.numpy().tolist() == [[-4, -1, -1, -1, -1], [4, 0, 0, 0, 0]]
    assert logical.numpy().tolist() == [1, 0]  # uint32: logical, no sign fill


def test_bitwise_ops_and_bitcast_refuse_what_they_do_not_define() -> None:
    f = vkml.tensor([1.0, 2.0])
    with pytest.raises(vkml.DTypeError, match="'bitwise_xor' needs integer operands.*bitcast"):
        vkml.bitwise_xor(f, 1)
    with pytest.raises(vkml.DTypeError, match="'left_shift' needs integer"):
        vkml.left_shift(vkml.tensor([True]), 1)
    with pytest.raises(vkml.DTypeError, match="'bitcast'.*float32 \\(32 bits\\) to int64"):
        vkml.bitcast(f, vkml.int64)
    bits = vkml.bitcast(f, vkml.uint32)
    assert bits.numpy().tolist() == [0x3F800000, 0x40000000]
    assert vkml.bitcast(bits, "float32").numpy().tolist() == [1.0, 2.0]
