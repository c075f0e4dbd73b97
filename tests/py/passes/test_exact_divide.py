"""vkml-exact-divide: float32 division in integer arithmetic equals NumPy's bit for bit.

The pass runs only for Vulkan; here it is also forced onto ``cpu`` (``exact_cpu``), whose own
divide is correct, so that any difference is the recipe's. ``cpu`` would flush subnormal
results of float arithmetic, but the recipe's result is integer bits and is compared whole.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import vkml
from vkml.compiler import compile as compile_module
from vkml.compiler.cache import default_cache
from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of
from vkml.dtypes import int32
from vkml.passes import exact_divide, registry, run
from vkml.runtime.vulkan_loader import vulkan_device_reports

F32_MAX = 0x7F7FFFFF
MIN_NORMAL = 0x00800000
GPU_MODEL = "test-inexact-divide"


def _f32(bits: list[int] | np.ndarray) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


def _specials() -> np.ndarray:
    """Values at every boundary a division meets: zeros, infinities, NaNs, the ends of the
    subnormal and normal ranges, and values just off powers of two."""
    positive = [
        0, 1, 2, 3, 0x00400000, 0x007FFFFE, 0x007FFFFF, MIN_NORMAL, MIN_NORMAL + 1, 0x01000000,
        0x3EAAAAAB, 0x3F2AAAAB, 0x3F7FFFFF, 0x3F800000, 0x3F800001, 0x3FBFFFFF, 0x3FFFFFFF,
        0x40000000, 0x40400000, 0x40E00000, 0x41200000, 0x4144B3A6, 0x7E800000, 0x7F000000,
        0x7F7FFFFE, F32_MAX, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FA12345,
    ]  # fmt: skip
    bits = np.array(positive, np.uint32)
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


def _normal_bits(
    significands: np.ndarray, exponents: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """float32 bits of ``±significand * 2**exponent`` (24-bit significands, biased exponents)."""
    signs = rng.integers(0, 2, significands.size, dtype=np.uint32) << 31
    return signs | (exponents.astype(np.uint32) << 23) | (significands.astype(np.uint32) & 0x7FFFFF)


def near_halfway_pairs(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs whose quotient lies less than 2**-22 ULP above or below a rounding
    boundary (a halfway point or a float32), in both quotient binades [1, 2) and [1/2, 1).

    For a divisor significand ``my`` and ``s`` = 24 or 25, ``mx * 2**s = t (mod my)`` with a
    small ``t`` (or ``my - t``) puts ``mx * 2**s / my`` just off an integer, which in units of
    half an ULP is a boundary. ``mx = t / 2**s (mod my)``, lifted into [2**23, 2**24).
    """
    xs: list[int] = []
    ys: list[int] = []
    while len(xs) < count:
        my = int(rng.integers(1 << 23, 1 << 24)) | 1  # odd: 2**s is invertible mod my
        s, t = int(rng.integers(24, 26)), int(rng.choice([1, 2, 3, -1, -2, -3]))
        mx = t * pow(2, -s, my) % my
        if mx < 1 << 23:  # mx < my: one more divisor lifts it into range, residue kept
            mx += my
        if mx < (1 << 24) and (mx < my) == (s == 25):
            xs.append(mx)
            ys.append(my)
    ex = rng.integers(1, 255, count)
    ey = np.clip(ex - rng.integers(-120, 121, count), 1, 254)
    return _normal_bits(np.array(xs), ex, rng), _normal_bits(np.array(ys), ey, rng)


def subnormal_ties(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Quotients ``m * 2**(-149 - j)`` (j = 1..24), whose last j bits fall below the smallest
    subnormal: for ``m = odd * 2**(j-1)`` (half of them) the quotient is an exact tie."""
    j = rng.integers(1, 25, count)
    m = rng.integers(1, 1 << 24, count)
    m = np.where(rng.integers(0, 2, count) == 1, (m | 1) << (j - 1), m) & 0xFFFFFF
    m = np.maximum(m, 1)
    x = m.astype(np.float64) * 2.0 ** (-119)  # exact in float32: m has at most 24 bits
    y = 2.0 ** (j + 30).astype(np.float64)
    signs = np.where(rng.integers(0, 2, count) == 1, -1.0, 1.0)
    return (signs * x).astype(np.float32).view(np.uint32), y.astype(np.float32).view(np.uint32)


def division_cases() -> tuple[np.ndarray, np.ndarray]:
    """(x bits, y bits): every pair of specials (1/3, 2/3, x/x among them), random bit
    patterns, random normal operands whose quotients span overflow to underflow, near-halfway
    quotients, subnormal ties and exact quotients of integers."""
    rng = np.random.default_rng(20261207)
    px, py = np.meshgrid(_specials(), _specials())
    n = 1 << 16
    random_x, random_y = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64).astype(np.uint32)
    ex = rng.integers(1, 255, n)
    wide_x = _normal_bits(rng.integers(0, 1 << 23, n), ex, rng)
    wide_y = _normal_bits(
        rng.integers(0, 1 << 23, n), np.clip(ex - rng.integers(-160, 161, n), 1, 254), rng
    )
    half_x, half_y = near_halfway_pairs(rng, n)
    tie_x, tie_y = subnormal_ties(rng, n // 4)
    ints = rng.integers(1, 1 << 12, n // 4).astype(np.float32)
    xs = [px.ravel(), random_x, wide_x, half_x, tie_x, (ints * 3).view(np.uint32), random_x]
    ys = [py.ravel(), random_y, wide_y, half_y, tie_y, ints.view(np.uint32), random_x]
    return np.concatenate(xs), np.concatenate(ys)


@pytest.fixture
def compile_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Callable[[tuple[str, ...]], None]]:
    """``compile_with(names)`` makes every later compile (cpu's too) run the passes ``names``,
    in a fresh cache: the cache key does not see which pipeline a backend runs."""

    def use(names: tuple[str, ...]) -> None:
        monkeypatch.setattr(compile_module, "pipeline_for", lambda backend, loop_cap=None: names)
        # a directory per pipeline, named by a digest (the names joined outgrow a file name)
        digest = hashlib.sha256("-".join(names).encode()).hexdigest()[:16]
        monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path / digest))
        vkml.cpu.clear_executables()
        default_cache().clear_memory()

    yield use
    vkml.cpu.clear_executables()
    default_cache().clear_memory()


@pytest.fixture
def exact_cpu(compile_with: Callable[[tuple[str, ...]], None]) -> vkml.Device:
    """``cpu``, compiling with the Vulkan pipeline (vkml-exact-divide included)."""
    compile_with(registry.pipeline_for("vulkan-spirv"))
    return vkml.cpu


def _divide_bits(device: vkml.Device, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    q = vkml.tensor(_f32(x), device=device) / vkml.tensor(_f32(y), device=device)
    return q.numpy().view(np.uint32)


def _assert_bits_equal(x: np.ndarray, y: np.ndarray, got: np.ndarray, want: np.ndarray) -> None:
    """Equal bits, where any NaN matches any NaN (the NaN rule has its own test)."""
    nan = np.isnan(_f32(want))
    assert np.array_equal(np.isnan(_f32(got)), nan), "NaN positions differ"
    bad = np.flatnonzero((got != want) & ~nan)
    shown = ", ".join(
        f"0x{x[i]:08X} / 0x{y[i]:08X} = 0x{got[i]:08X} (want 0x{want[i]:08X})" for i in bad[:6]
    )
    assert bad.size == 0, f"{bad.size} of {got.size} quotients differ: {shown}"


def _reference_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _divide_bits(vkml.reference, x, y)


def test_near_halfway_pairs_lie_near_a_rounding_boundary() -> None:
    x, y = near_halfway_pairs(np.random.default_rng(1), 512)
    # float64 holds the quotient to 2**-52 relative, far finer than the 2**-47 offsets built in
    q = np.abs(_f32(x).astype(np.float64) / _f32(y).astype(np.float64))
    half_ulps = q / 2.0 ** (np.floor(np.log2(q)) - 24)  # in units of half a float32 ULP
    offset = np.abs(half_ulps - np.round(half_ulps))
    assert offset.max() < 3 * 2.0**-23 and np.count_nonzero(offset) == offset.size


def test_exact_divide_equals_reference_bit_for_bit_on_cpu(exact_cpu: vkml.Device) -> None:
    x, y = division_cases()
    _assert_bits_equal(x, y, _divide_bits(exact_cpu, x, y), _reference_bits(x, y))


@pytest.mark.skipif(
    not vulkan_device_reports(), reason="no Vulkan device (lavapipe: mesa-vulkan-drivers)"
)
def test_exact_divide_equals_reference_bit_for_bit_on_vulkan() -> None:
    assert exact_divide.ARGUMENT in registry.pipeline_for("vulkan-spirv")
    x, y = division_cases()
    _assert_bits_equal(x, y, _divide_bits(vkml.device("vulkan:0"), x, y), _reference_bits(x, y))


# (x, y, x / y) as float32 bits
SPECIAL_QUOTIENTS = [
    (0x7FA00001, 0x3F800000, 0x7FE00001),  # a signalling NaN comes back quiet, payload kept
    (0xFFC00002, 0x7FC00005, 0xFFC00002),  # two NaNs: x's, sign included
    (0x3F800000, 0xFF800003, 0xFFC00003),  # a NaN divisor: its own sign, not x's
    (0x00000000, 0x80000000, 0xFFC00000),  # 0 / 0: x86's default NaN
    (0xFF800000, 0x7F800000, 0xFFC00000),  # inf / inf
    (0x3F800000, 0x80000000, 0xFF800000),  # 1 / -0 = -inf
    (0x80000000, 0xC0A00000, 0x00000000),  # -0 / -5 = +0
    (0x80000001, 0x7F800000, 0x80000000),  # -tiny / inf = -0
    (0xFF800000, 0x00000001, 0xFF800000),  # -inf / tiny = -inf
    (F32_MAX, 0x3F000000, 0x7F800000),  # overflow to inf
    (F32_MAX, 0x3F800001, 0x7F7FFFFD),  # just below: finite
    (0x00000001, 0x40000000, 0x00000000),  # 2**-150: a tie, to even (zero)
    (0x00000003, 0x40000000, 0x00000002),  # 1.5 * 2**-149: a tie, to even (2)
    (0x00000001, 0x00000001, 0x3F800000),  # subnormal operands are read, not flushed
    (MIN_NORMAL, 0x40000000, 0x00400000),  # a subnormal result is kept
    (0x3F800000, 0x40400000, 0x3EAAAAAB),  # 1 / 3
    (0x40000000, 0x40400000, 0x3F2AAAAB),  # 2 / 3
]


def test_special_operands_give_ieee_and_x86_results(exact_cpu: vkml.Device) -> None:
    x, y, want = (np.array(column, np.uint32) for column in zip(*SPECIAL_QUOTIENTS))
    got = _divide_bits(exact_cpu, x, y)
    assert [f"0x{v:08X}" for v in got.tolist()] == [f"0x{v:08X}" for v in want.tolist()]


@pytest.mark.parametrize("dtype", [vkml.float16, vkml.bfloat16])
def test_16_bit_division_equals_reference(exact_cpu: vkml.Device, dtype: vkml.DType) -> None:
    # computed as float32 division, then rounded by vkml-soft-f16
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 1 << 16, (2, 1 << 16), dtype=np.uint16).view(dtype.numpy)
    got, want = (
        (vkml.tensor(x, device=d) / vkml.tensor(y, device=d)).numpy()
        for d in (exact_cpu, vkml.reference)
    )
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


@pytest.mark.parametrize("dtype", [vkml.int32, vkml.uint32, vkml.int64])
def test_integer_true_division_equals_reference(exact_cpu: vkml.Device, dtype: vkml.DType) -> None:
    # both operands are converted to float32, then divided
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype.numpy)
    x, y = rng.integers(info.min, info.max, (2, 1 << 14), dtype=dtype.numpy, endpoint=True)
    y[:8] = [0, 1, 3, 7, 0, 0, 3, 3]
    x[:8] = [0, 1, 1, 2, 5, info.min, info.max, info.min]
    got, want = (
        (vkml.tensor(x, device=d) / vkml.tensor(y, device=d)).numpy()
        for d in (exact_cpu, vkml.reference)
    )
    assert got.dtype == want.dtype == np.float32
    _assert_bits_equal(x, y, got.view(np.uint32), want.view(np.uint32))


def _inexact_divide(module: ir.Operation) -> None:
    """A model of a GPU's divide: every float32 ``stablehlo.divide`` left in ``module`` is
    off by -3..+3 ULP (an integer added to its bits, cycling along the first axis) where the
    quotient is normal."""
    for op in find_ops(module, exact_divide._is_f32_divide):
        t = tensor_type_of(op.operands[0].type)
        b = FunctionBuilder("inexact")
        x, y = b.arg(t), b.arg(t)
        bits = b.bitcast(b.binary("divide", x, y), int32)
        step = b.binary("remainder", b.iota(t.shape, 0, int32), b.constant(7, int32, t.shape))
        error = b.binary("subtract", step, b.constant(3, int32, t.shape))
        magnitude = b.binary("and", bits, b.constant(0x7FFFFFFF, int32, t.shape))
        normal = b.binary(
            "and",
            b.compare("GE", magnitude, b.constant(MIN_NORMAL + 3, int32, t.shape)),
            b.compare("LE", magnitude, b.constant(F32_MAX - 3, int32, t.shape)),
        )
        off = b.select(normal, b.binary("add", bits, error), bits)
        b.ret([b.bitcast(off, t.dtype)])
        replace_with_function_body(op, b.module_text())


def test_a_divide_off_by_3_ulp_does_not_reach_the_result(
    monkeypatch: pytest.MonkeyPatch, compile_with: Callable[[tuple[str, ...]], None]
) -> None:
    model = ModuleType(GPU_MODEL)
    model.run = _inexact_divide  # type: ignore[attr-defined]
    monkeypatch.setitem(registry.PASSES, GPU_MODEL, model)
    x, y = division_cases()
    want = _reference_bits(x, y)
    # the model bites: the pipeline without the pass returns its errors
    compile_with((*registry.PIPELINE, GPU_MODEL))
    assert np.count_nonzero(_divide_bits(vkml.cpu, x, y) != want) > x.size // 2
    # the exact pipeline leaves the model no float divide to get wrong
    compile_with((*registry.pipeline_for("vulkan-spirv"), GPU_MODEL))
    _assert_bits_equal(x, y, _divide_bits(vkml.cpu, x, y), want)


def test_rewritten_divide_computes_with_integers_only() -> None:
    text = """func.func @f(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
  %q = stablehlo.divide %a, %b : tensor<5xf32>
  return %q : tensor<5xf32>
}"""
    rewritten = run.run_passes(text, (exact_divide.ARGUMENT,))
    float_ops = [
        line.strip() for line in rewritten.splitlines()
        if "f32" in line and "stablehlo.bitcast_convert" not in line
        and not line.strip().startswith(("func.func", "return"))
    ]  # fmt: skip
    assert float_ops == []
    assert "stablehlo.divide" not in rewritten and "tensor<5xi32>" in rewritten


def test_only_vulkan_compiles_run_the_pass() -> None:
    vulkan = registry.pipeline_for("vulkan-spirv")
    assert exact_divide.ARGUMENT in vulkan and vulkan[-1] == "vkml-verify-nan-semantics"
    assert registry.pipeline_for("llvm-cpu") == registry.PIPELINE
    assert exact_divide.ARGUMENT not in registry.PIPELINE
    x, y = vkml.tensor(np.ones(4, np.float32)), vkml.tensor(np.ones(4, np.float32))
    assert "stablehlo.divide %arg0, %arg1 : tensor<4xf32>" in vkml.emit_mlir(x / y, passes=True)


@pytest.mark.exhaustive
def test_every_float32_divided_by_and_into_a_few_values_equals_numpy(
    exact_cpu: vkml.Device,
) -> None:
    # 1/3 and 31/3 are never exact, 1 +- 1 ULP put every quotient next to its operand, the
    # smallest subnormals and the largest float reach both ends of the exponent range
    partners = [0x40400000, 0x3F800001, 0x3F7FFFFF, 0x00000003, F32_MAX, 0x4144B3A6]
    size = 1 << 26
    began = time.perf_counter()
    for start in range(0, 1 << 32, size):
        every = np.arange(start, start + size, dtype=np.uint64).astype(np.uint32)
        for partner in partners:
            fixed = np.full(size, partner, np.uint32)
            for x, y in ((every, fixed), (fixed, every)):
                with np.errstate(all="ignore"):
                    want = (_f32(x) / _f32(y)).view(np.uint32)
                _assert_bits_equal(x, y, _divide_bits(exact_cpu, x, y), want)
        print(f"to 0x{start + size - 1:08X} ok, {time.perf_counter() - began:.0f} s")
