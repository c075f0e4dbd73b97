"""Chains of bit-exact ops on Vulkan against the reference device, bit for bit.

The per-op test (test_vulkan_device.py) compiles one op at a time, where a driver has nothing
to rearrange. Here each program is a short chain of the patterns a shader compiler rewrites
when it may treat float arithmetic as real arithmetic: constants reassociated, ``x - x`` and
``x * 0`` folded to 0, ``x + 0`` dropped, casts cancelled (ADR 0009). Each program compiles on
its own, so that no other root shares its values and every rewrite that needs a value used
once can fire. Skipped, with the way to enable it, where no Vulkan device exists.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support.devices import needs_vulkan
from support.numerics import assert_bit_exact, assert_within_ulp

import vkml

pytestmark = needs_vulkan

N = 4096
_RNG = np.random.default_rng(9)
UNIT = _RNG.random(N).astype(np.float32)  # [0, 1): sums with 0.5 and 0.25 round often
NORMAL = _RNG.normal(0, 4, N).astype(np.float32)
OTHER = _RNG.normal(0, 4, N).astype(np.float32)
# no subnormals: the contract lets a device flush them (docs/contracts.md)
SPECIAL = np.resize(
    np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 3.4e38, -3.4e38, 2.5, -7.0, 1e-30],
             np.float32), N)  # fmt: skip
# integers that float32 cannot hold: a round trip through float32 must round them
WIDE_INTS = np.resize(np.array([16777217, -16777217, 16777219, 2**31 - 65, 123456789, 3, -5],
                               np.int32), N)  # fmt: skip

Program = Callable[[vkml.Tensor, vkml.Tensor], vkml.Tensor]

# name -> (program of x and y, x, y). Each entry names the rewrite it guards against.
CHAINS: dict[str, tuple[Program, np.ndarray, np.ndarray]] = {
    # (a + #b) + #c -> a + (b + c)
    "(x + 0.5) - 0.25": (lambda x, y: (x + 0.5) - 0.25, UNIT, OTHER),
    "(x - 0.5) + 0.25": (lambda x, y: (x - 0.5) + 0.25, UNIT, OTHER),
    "x + 0.1 + 0.2 + 0.3": (lambda x, y: x + 0.1 + 0.2 + 0.3, NORMAL, OTHER),
    # (a + b) + #c -> (a + c) + b
    "(x + y) + 0.5": (lambda x, y: (x + y) + 0.5, NORMAL, OTHER),
    # (a + b) - a -> b and a + (b - a) -> b
    "(x + y) - x": (lambda x, y: (x + y) - x, NORMAL, OTHER),
    "x + (y - x)": (lambda x, y: x + (y - x), NORMAL, OTHER),
    "(y - x) + x": (lambda x, y: (y - x) + x, NORMAL, OTHER),
    # (a * #b) * #c -> a * (b * c); a * #b / #c
    "(x * 1.1) * 1.3": (lambda x, y: (x * 1.1) * 1.3, NORMAL, OTHER),
    "x * 1.1 / 1.3": (lambda x, y: x * 1.1 / 1.3, NORMAL, OTHER),
    "x / 3.0": (lambda x, y: x / 3.0, NORMAL, OTHER),
    "1.0 / x": (lambda x, y: 1.0 / x, NORMAL, OTHER),
    # a - a -> 0 and a + (-a) -> 0 (wrong for inf and NaN)
    "x - x": (lambda x, y: x - x, SPECIAL, OTHER),
    "x + (-x)": (lambda x, y: x + (-x), SPECIAL, OTHER),
    "(x + 1) - (x + 1)": (lambda x, y: (x + 1.0) - (x + 1.0), SPECIAL, OTHER),
    "x - x.T.T": (lambda x, y: x.reshape(64, 64) - x.reshape(64, 64).T.T, SPECIAL, OTHER),
    "sum(x - x)": (lambda x, y: (x - x).reshape(64, 64).sum(axis=1), SPECIAL, OTHER),
    # a * 0 -> 0 (wrong for inf, NaN and negative a), a + 0 -> a (wrong for -0.0)
    "x * 0.0": (lambda x, y: x * 0.0, SPECIAL, OTHER),
    "(x * x) * 0.0": (lambda x, y: (x * x) * 0.0, SPECIAL, OTHER),
    "x + 0.0": (lambda x, y: x + 0.0, SPECIAL, OTHER),
    # NVIDIA's driver (H200) rewrote -(c - m) as m - c: +0.0 where the negation gives -0.0
    "-(-1 - max(x, y))": (lambda x, y: -((-1.0) - vkml.maximum(x, y)), SPECIAL, SPECIAL),
    "-(x + y)": (lambda x, y: -(x + y), SPECIAL, SPECIAL),
    "0.0 - x": (lambda x, y: 0.0 - x, SPECIAL, OTHER),
    "x - 0.0": (lambda x, y: x - 0.0, SPECIAL, OTHER),
    "x * 1.0": (lambda x, y: x * 1.0, SPECIAL, OTHER),
    "x * -1.0": (lambda x, y: x * -1.0, SPECIAL, OTHER),
    # a * b + c -> fma(a, b, c) (ADR 0007)
    "x * a + b": (lambda x, y: x * 0.17677669 - 0.08838835, UNIT, OTHER),
    "x * y + x * 0.5": (lambda x, y: x * y + x * 0.5, NORMAL, OTHER),
    # a sum's last add, then a value it added: (a + b) - a -> b once the loads are shared
    "sum of 2 rows - row 0": (
        lambda x, y: x.reshape(2, -1).sum(axis=0) - x.reshape(2, -1)[0], NORMAL, OTHER),
    # compares of a sum: (a + b) < a -> b < 0; (a + #b) < #c -> a < c - b
    "(x + y) < x": (lambda x, y: vkml.where((x + y) < x, 1.0, 0.0), NORMAL * 1e6, OTHER),
    "(x + 0.5) < 0.75": (lambda x, y: vkml.where((x + 0.5) < 0.75, 1.0, 0.0), UNIT, OTHER),
    # select of a compare -> a NaN-dropping fmax
    "where(x > y, x, y)": (lambda x, y: vkml.where(x > y, x, y), SPECIAL, SPECIAL[::-1].copy()),
    # casts: f2i(i2f(a)) -> a, i2f(f2i(a)) -> trunc(a) (which keeps -0.0)
    "int32 -> float32 -> int32": (
        lambda x, y: x.astype(vkml.float32).astype(vkml.int32), WIDE_INTS, OTHER),
    "float32 -> int32 -> float32": (
        lambda x, y: x.astype(vkml.int32).astype(vkml.float32), NORMAL, OTHER),
    # values IREE folds into literals that vkml never emitted as one: a constant through a
    # view, a sum over no elements, a product over an empty contraction; then a * 0 -> 0
    "x * zeros.reshape": (lambda x, y: x * _zeros(x, (1, N)).reshape(N), SPECIAL, OTHER),
    "x * zeros.T": (
        lambda x, y: x.reshape(64, 64) * _zeros(x, (64, 64)).T, SPECIAL, OTHER),
    "x * zeros[0]": (lambda x, y: x * _zeros(x, (2, N))[0], SPECIAL, OTHER),
    "x * zeros broadcast": (
        lambda x, y: x.reshape(64, 64) * _zeros(x, (64, 1)), SPECIAL, OTHER),
    "x * sum of nothing": (lambda x, y: x * _zeros(x, (0,)).sum(), SPECIAL, OTHER),
    "x * empty matmul": (
        lambda x, y: x.reshape(64, 64) * (_zeros(x, (64, 0)) @ _zeros(x, (0, 64))),
        SPECIAL, OTHER),
    "x + zeros.reshape": (lambda x, y: x + _zeros(x, (1, N)).reshape(N), SPECIAL, OTHER),
    "zeros.reshape - x": (lambda x, y: _zeros(x, (1, N)).reshape(N) - x, SPECIAL, OTHER),
    "mean of nothing / x": (lambda x, y: _zeros(x, (1, 0)).mean() / x, SPECIAL, OTHER),
}  # fmt: skip


def _zeros(like: vkml.Tensor, shape: tuple[int, ...]) -> vkml.Tensor:
    return vkml.zeros(shape, dtype=like.dtype, device=like.device)


@pytest.fixture(scope="module")
def vulkan() -> vkml.Device:
    return vkml.device("vulkan:0")


def _both(
    vulkan: vkml.Device, program: Program, *arrays: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    want = program(*(vkml.tensor(a, device=vkml.reference) for a in arrays)).numpy()
    got = program(*(vkml.tensor(a, device=vulkan) for a in arrays)).numpy()
    return got, want


@pytest.mark.parametrize("name", list(CHAINS))
def test_chain_matches_reference_on_vulkan(vulkan: vkml.Device, name: str) -> None:
    program, x, y = CHAINS[name]
    got, want = _both(vulkan, program, x, y)
    assert_bit_exact(got, want, f"{name} on {vulkan}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_mean_of_nothing_is_nan(vulkan: vkml.Device, dtype: type) -> None:
    # fuzz seed 21: IREE folds the empty sum to 0.0, and lavapipe then folds 0.0 / n to 0.0
    empty = np.zeros((1, 0), dtype)
    for program in (lambda e: e.mean(), lambda e: e.sum() / 0.0):
        got, want = _both(vulkan, program, empty)
        assert np.isnan(want)
        assert_bit_exact(got, want, f"the mean of a {dtype.__name__} (1, 0) on {vulkan}")


def test_square_of_a_square_root_keeps_nan(vulkan: vkml.Device) -> None:
    # sqrt(a) * sqrt(a) -> |a| turns the NaN of a negative a into a number
    got, want = _both(vulkan, lambda x: x.sqrt() * x.sqrt(), NORMAL)
    assert np.isnan(want).sum() > 1000
    assert_within_ulp(got, want, 4, f"sqrt(x) * sqrt(x) on {vulkan}")


# -- seeded random elementwise graphs ------------------------------------------------------------

CONSTANTS = (0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 3.0, 0.1, -7.5, 1000.0)


def random_graph(seed: int, device: vkml.Device) -> list[vkml.Tensor]:
    """5 to 15 bit-exact ops over 1 to 3 inputs and constants; returns the values no op used.

    Only those are realized: a value that is also a result has a second use, which keeps a
    driver from rewriting the op that reads it.
    """
    rng = np.random.default_rng(seed)
    inputs = []
    for _ in range(rng.integers(1, 4)):
        a = rng.normal(0, 4, N).astype(np.float32)
        a[:12] = SPECIAL[:12]  # ±inf, NaN, ±0 at the front: those are what folding breaks
        rng.shuffle(a[:64])
        inputs.append(a)
    values = [vkml.tensor(a, device=device) for a in inputs]
    used = [False] * len(values)
    for _ in range(rng.integers(5, 16)):
        i = int(rng.integers(len(values)))
        j = i if rng.random() < 0.15 else int(rng.integers(len(values)))  # x op x too
        x, y = values[i], values[j]
        c = float(CONSTANTS[rng.integers(len(CONSTANTS))])
        kind = rng.integers(7)
        if kind == 0:
            op = ("add", "sub", "mul", "div")[rng.integers(4)]
            out = _arith(op, x, y)
        elif kind in (1, 2):
            op = ("add", "sub", "mul", "div")[rng.integers(4)]
            out = _arith(op, x, c) if rng.random() < 0.7 else _arith(op, c, x)
        elif kind == 3:
            out = -x
        elif kind == 4:
            out = vkml.maximum(x, y) if rng.random() < 0.5 else vkml.minimum(x, c)
        elif kind == 5:
            out = vkml.where(x > y, x, y + c)
        else:
            out = x.astype(vkml.float16).astype(vkml.float32)
        used[i] = used[j] = True
        values.append(out)
        used.append(False)
    return [v for v, u in zip(values, used) if not u]


def _arith(op: str, x: vkml.Tensor | float, y: vkml.Tensor | float) -> vkml.Tensor:
    return {"add": vkml.add, "sub": vkml.subtract, "mul": vkml.multiply, "div": vkml.divide}[op](
        x, y
    )


@pytest.mark.parametrize("seed", range(12))
def test_random_graph_matches_reference_on_vulkan(vulkan: vkml.Device, seed: int) -> None:
    want = random_graph(seed, vkml.reference)
    got = random_graph(seed, vulkan)
    vkml.realize(*got)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"seed {seed}, result {k} on {vulkan}")


def test_vulkan_modules_negate_floats_on_the_sign_bit() -> None:
    """No float ``negate`` in a Vulkan module: a driver cannot push a negation it never sees
    into the subtraction before it (the rewrite that lost -0.0 on an H200)."""
    from vkml.compiler.lower import lower_to_mlir
    from vkml.graph.walk import toposort

    x = vkml.tensor(np.ones(8, np.float32), device=vkml.reference)
    out = -((-1.0) - x)
    roots = [out.node]
    vulkan_text = lower_to_mlir(toposort(roots), roots, output_args=True, fence_float_ops=True)
    cpu_text = lower_to_mlir(toposort(roots), roots)
    assert "stablehlo.negate" not in vulkan_text
    assert "stablehlo.negate" in cpu_text  # cpu's modules are unchanged
