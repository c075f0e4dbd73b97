"""Matmuls whose operands are computed in the same module, on every device, exactly.

IREE 3.13 fuses a widening elementwise producer of a matmul operand (``f16 -> f32`` and
anything after it, such as Vulkan's float fence) into the matmul's dispatch; its SPIR-V
``BaseDistribute`` pipeline then writes that operand to workgroup memory and reads it in
other invocations with no barrier in between. On lavapipe the first row of a small float16
matmul came back with terms missing (``[[1, 2]] @ [[0..4], [5..9]]`` gave ``[0, 1, 2, 3, 4]``).
The operands here are small integers, so every product and sum is exact in float32 and the
result must equal NumPy's float64 matmul rounded once to the result's dtype. (A bool cast to
an integer that a matmul consumed, IREE folded into the matmul as a signed i1: true was -1.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import vkml
from vkml.runtime.vulkan_loader import vulkan_device_reports

DEVICES = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
# the operand race is in IREE's SPIR-V: the whole table on cpu (a 26 s compile of data-tiled
# matmuls) runs with make test-exhaustive
SWEEP_DEVICES = [
    pytest.param(d, marks=pytest.mark.exhaustive) if d == "cpu" else d for d in DEVICES
]

# (batch, m, k, n): one workgroup or a few, odd and even, and one larger than a tile
SHAPES = [(1, 2, 2, 5), (2, 3, 5, 2), (3, 5, 5, 5), (1, 4, 4, 4), (2, 17, 9, 33), (1, 100, 200, 50)]
BROADCAST = (3, 4, 5, 3)  # the right operand (k, n) broadcast over the batch

Operand = Callable[[vkml.Tensor], vkml.Tensor]

# how each operand is made inside the module, from integer-valued data of its dtype
OPERANDS: dict[str, tuple[str, Operand]] = {
    "float16": ("float16", lambda t: t),
    "bfloat16": ("bfloat16", lambda t: t),
    "float16 negated": ("float16", lambda t: -t),
    "float16 as float32": ("float16", lambda t: t.astype(vkml.float32)),
    "float16 as float32, negated": ("float16", lambda t: -t.astype(vkml.float32)),
    "bfloat16 as float32, doubled": ("bfloat16", lambda t: t.astype(vkml.float32) * 2.0),
    "int32 as float32": ("int32", lambda t: t.astype(vkml.float32)),
    "float32 negated": ("float32", lambda t: -t),
    "bool as float32": ("bool", lambda t: t.astype(vkml.float32)),
    "bool as int32": ("bool", lambda t: t.astype(vkml.int32)),
    "int32 nonzero, as int32": ("int32", lambda t: (t != 0).astype(vkml.int32)),
    "float16 where a mask": ("float16", lambda t: vkml.where(t > 0, t, -t)),
    "float16 transposed twice, times one": (
        "float16",
        lambda t: t.transpose(-2, -1).transpose(-2, -1) * 1.0,
    ),
}


def _supports(device: vkml.Device, dtype: str) -> bool:
    return device.supports("astype", vkml.dtypes.to_dtype(dtype))


@pytest.mark.parametrize("device", SWEEP_DEVICES)
def test_matmul_of_operands_computed_in_the_module_is_exact(device: str) -> None:
    dev = vkml.device(device)
    rng = np.random.default_rng(5)
    cases, tensors = [], []
    for name, (dtype, make) in OPERANDS.items():
        if not _supports(dev, dtype):
            continue
        for batch, m, k, n in SHAPES:
            a = rng.integers(-4, 5, size=(batch, m, k))
            b = rng.integers(-4, 5, size=(batch, k, n))
            ta, tb = _operand(make, a, dtype, dev), _operand(make, b, dtype, dev)
            want = make_numpy(name, a) @ make_numpy(name, b)
            cases.append((name, (batch, m, k, n), want))
            tensors.append(ta @ tb)
        batch, m, k, n = BROADCAST
        a = rng.integers(-4, 5, size=(batch, m, k))
        b = rng.integers(-4, 5, size=(k, n))
        cases.append((name, "broadcast", make_numpy(name, a) @ make_numpy(name, b)))
        tensors.append(_operand(make, a, dtype, dev) @ _operand(make, b, dtype, dev))
    vkml.realize(*tensors)
    wrong = []
    for (name, shape, want), t in zip(cases, tensors):
        got = t.numpy()
        want = want.astype(got.dtype).astype(np.float64)  # one rounding, of the exact sum
        got = got.astype(np.float64)
        if not np.array_equal(got, want):
            rows = sorted({int(r) for r in np.argwhere(got != want)[:, 1]})
            wrong.append(f"{name} {shape}: {int((got != want).sum())} wrong, rows {rows[:8]}")
    assert not wrong, f"{device}:\n" + "\n".join(wrong)


def _operand(make: Operand, x: np.ndarray, dtype: str, dev: vkml.Device) -> vkml.Tensor:
    return make(vkml.tensor(x.astype(vkml.dtypes.to_dtype(dtype).numpy), device=dev))


def make_numpy(name: str, x: np.ndarray) -> np.ndarray:
    """The operand ``name`` makes from the integers ``x``, in float64 (all exact)."""
    x = x.astype(np.float64)
    if name.startswith("bool") or "nonzero" in name:
        return (x != 0).astype(np.float64)
    if "mask" in name:
        return np.abs(x)
    if "negated" in name:
        return -x
    if "doubled" in name:
        return 2.0 * x
    return x


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("device", DEVICES)
def test_a_one_element_product_of_a_value_with_itself_compiles(device: str, dtype: str) -> None:
    """IREE turns a 1 x 1 x 1 matmul into a multiply, which it cannot do on 16-bit operands
    with a float32 result ("failed to legalize 'stablehlo.multiply'"); found by fuzzing."""
    x = vkml.tensor(np.array([3.0], np.float32), device=device).astype(vkml.dtypes.to_dtype(dtype))
    assert float((x @ x).numpy()) == 9.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("device", DEVICES)
def test_a_16_bit_outer_product_is_exact(device: str, dtype: str) -> None:
    """A contraction over one element is an outer product, which IREE makes an elementwise
    multiply of broadcasts; for bfloat16 operands its lavapipe code staged the widened row in
    workgroup memory and read it in other invocations with no barrier, and vkml's race check
    refused the module (fuzz sitting 16). Small integers: every product is exact."""
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4, 1)
    got = vkml.tensor(x, device=device).astype(vkml.dtypes.to_dtype(dtype))
    out = (got @ got.reshape(3, 1, 4)).numpy().astype(np.float64)
    assert np.array_equal(out, x @ x.reshape(3, 1, 4))


@pytest.mark.parametrize("wide", ["int64", "float64"])
@pytest.mark.parametrize("device", DEVICES)
def test_uint32_operands_widened_to_64_bits_are_zero_extended(device: str, wide: str) -> None:
    """IREE 3.13's llvm-cpu folded a ``uint32 -> int64`` (or ``float64``) widening into the
    matmul that read it as a signed one: 4294967295 was -1. Found by the fuzz campaign
    (``y @ y.T`` of a uint32 ``x + x`` as int64); ``FunctionBuilder.convert`` now
    zero-extends by hand. Every term is exact in float64: the right operand is 0, 1 or 2."""
    dev = vkml.device(device)
    if not _supports(dev, wide):
        pytest.skip(f"{device} has no {wide}")
    rng = np.random.default_rng(7)
    a = rng.integers(2**31 - 8, 2**32, size=(3, 5, 4), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 3, size=(3, 4, 6))
    x = vkml.tensor(a, device=dev).astype(wide)
    got = [
        x @ vkml.tensor(b, dtype=wide, device=dev),
        vkml.tensor(b.transpose(0, 2, 1), dtype=wide, device=dev) @ x.transpose(-2, -1),
    ]
    want = [
        a.astype(wide) @ b.astype(wide),
        b.transpose(0, 2, 1).astype(wide) @ a.astype(wide).transpose(0, 2, 1),
    ]
    if wide == "int64":  # the campaign's product of the value with itself (wrapping, exact)
        got.append(x @ x.transpose(-2, -1))
        want.append(a.astype(np.int64) @ a.astype(np.int64).transpose(0, 2, 1))
    vkml.realize(*got)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.array_equal(g.numpy(), w), f"product {k} on {device}"
