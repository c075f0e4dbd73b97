"""vkml's own float64 functions (``vkml.ops.float64``): within their bound of the true value
(mpmath at 160 bits), NumPy's values at the special inputs, and the reference's bits on every
compiled device."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from support.devices import needs_vulkan
from support.numerics import assert_bit_exact

import vkml
from vkml.ops.float64 import FUNCTIONS
from vkml.ops.references.float64 import evaluate

UNARY = sorted(n for n in FUNCTIONS if n != "atan2")
# measured maxima over these samples and 20,000 more per function (docs/contracts.md,
# "float64 functions"): 0.7 (sin, cos) to 2.04 (sigmoid, acosh)
BOUND_ULP = 2.5

_R = np.random.default_rng(35)


def _uniform(low: float, high: float, n: int = 200) -> np.ndarray:
    return _R.uniform(low, high, n)


def _magnitudes(low: int, high: int, n: int = 200) -> np.ndarray:
    return np.sign(_R.uniform(-1, 1, n)) * 10.0 ** _R.uniform(low, high, n)


# worst cases of the argument reduction: x close to a multiple of pi/2 (the first two are
# the closest doubles to multiples of pi/2 known: 6381956970095103 * 2**797, Muller's book),
# and the extremes of the range
HARD_TRIG = np.array(
    [6381956970095103 * 2.0**797, 5261692873635770 * 2.0**499, np.pi, np.pi / 2, 1e22,
     2.0**1023 * 1.9999999999999998, 355.0, 103993.0, 1.5707963267948966, 4.71238898038469]
)  # fmt: skip
SAMPLES = {
    "exp": [_uniform(-745, 709), _uniform(-1, 1)],
    "expm1": [_uniform(-40, 709), _magnitudes(-12, 0)],
    "log": [np.abs(_magnitudes(-300, 300)), _uniform(0.5, 2), _uniform(0.99, 1.01)],
    "log1p": [_uniform(-1, 3), _magnitudes(-15, 0), np.abs(_magnitudes(-5, 300))],
    "sin": [_uniform(-10, 10), _magnitudes(-300, 300), HARD_TRIG],
    "cos": [_uniform(-10, 10), _magnitudes(-300, 300), HARD_TRIG],
    "tan": [_uniform(-10, 10), _magnitudes(-300, 300), HARD_TRIG],
    "atan": [_uniform(-10, 10), _magnitudes(-300, 300)],
    "asin": [_uniform(-1, 1), _magnitudes(-20, 0), _uniform(0.999, 1)],
    "acos": [_uniform(-1, 1), _magnitudes(-20, 0), _uniform(0.999, 1), _uniform(-1, -0.999)],
    "tanh": [_uniform(-25, 25), _magnitudes(-20, 0)],
    "sinh": [_uniform(-710, 710), _magnitudes(-20, 0)],
    "cosh": [_uniform(-710, 710), _uniform(-3, 3)],
    "asinh": [_magnitudes(-300, 300), _uniform(-3, 3)],
    "acosh": [np.abs(_magnitudes(0, 300)) + 1, _uniform(1, 1.01), _uniform(1, 3)],
    "atanh": [_uniform(-1, 1), _magnitudes(-20, 0), _uniform(0.99, 1)],
    "sigmoid": [_uniform(-745, 40), _uniform(-5, 5)],
}
TRUE = {
    "exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log, "log1p": mpmath.log1p,
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "atan": mpmath.atan,
    "asin": mpmath.asin, "acos": mpmath.acos, "tanh": mpmath.tanh, "sinh": mpmath.sinh,
    "cosh": mpmath.cosh, "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh,
    "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
}  # fmt: skip
NUMPY = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos,
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
    "sigmoid": lambda x: np.where(x < 0, np.exp(x) / (1 + np.exp(x)), 1 / (1 + np.exp(-x))),
}  # fmt: skip
SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, 1e-300, -1e-300, 1e-20,
     -1e-20, 22.5, -22.5, 709.7, 709.9, -745.0, -746.0, 710.5, 1e300, -1e300]
)  # fmt: skip


def _ulps(got: float, true: object) -> float:
    """|got - true| in units of the last place of the float nearest ``true``."""
    want = float(true)  # type: ignore[arg-type]
    if math.isinf(want) or math.isinf(got) or want == 0.0:
        return 0.0 if got == want else math.inf
    return float(abs(mpmath.mpf(got) - true) / math.ulp(want))  # type: ignore[operator]


def _max_ulps(name: str, got: np.ndarray, args: list[np.ndarray]) -> tuple[float, tuple]:
    worst, where = 0.0, ()
    with mpmath.workprec(160):
        for g, *xs in zip(got, *args):
            if math.isnan(g) and all(not math.isnan(x) for x in xs):
                return math.inf, tuple(xs)
            true = TRUE[name](*map(mpmath.mpf, xs)) if name != "atan2" else mpmath.atan2(*xs)
            e = _ulps(float(g), true)
            if e > worst:
                worst, where = e, tuple(xs)
    return worst, where


@pytest.mark.parametrize("name", UNARY)
def test_within_the_bound_of_the_true_value(name: str) -> None:
    x = np.concatenate(SAMPLES[name])
    worst, at = _max_ulps(name, evaluate(name, x), [x])
    assert worst <= BOUND_ULP, f"{name}: {worst:.3f} ulp at x = {at}"


def test_atan2_within_the_bound_of_the_true_value() -> None:
    y = np.concatenate([_uniform(-5, 5), _magnitudes(-300, 300)])
    x = np.concatenate([_uniform(-5, 5), _magnitudes(-300, 300)])
    worst, at = _max_ulps("atan2", evaluate("atan2", y, x), [y, x])
    assert worst <= BOUND_ULP, f"atan2: {worst:.3f} ulp at (y, x) = {at}"


@pytest.mark.parametrize("name", UNARY)
def test_special_inputs_give_numpys_values(name: str) -> None:
    """Zeros (with their signs), infinities, NaN and the ends of the range: NumPy's values
    (where NumPy's are correctly rounded: every special input here)."""
    with np.errstate(all="ignore"):
        want = NUMPY[name](SPECIAL)
    got = evaluate(name, SPECIAL)
    close = np.isclose(got, want, rtol=4e-16, atol=0.0, equal_nan=True)
    assert close.all(), [(x, g, w) for x, g, w, c in zip(SPECIAL, got, want, close) if not c]
    same_zero = np.signbit(got[want == 0]) == np.signbit(want[want == 0])
    assert same_zero.all(), f"{name}: signs of zero differ"


def test_atan2_special_inputs_give_numpys_values() -> None:
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, 1e300])
    y, x = (a.ravel() for a in np.meshgrid(values, values))
    got, want = evaluate("atan2", y, x), np.arctan2(y, x)
    assert np.allclose(got, want, rtol=4e-16, atol=0.0, equal_nan=True)
    assert (np.signbit(got[want == 0]) == np.signbit(want[want == 0])).all()


def _inputs() -> np.ndarray:
    parts = [SPECIAL, _uniform(-10, 10, 300), _magnitudes(-300, 300, 300), HARD_TRIG]
    return np.concatenate(parts)


def _every_function(x: vkml.Tensor, y: vkml.Tensor) -> list[vkml.Tensor]:
    return [getattr(vkml, name)(x) for name in UNARY] + [vkml.atan2(x, y)]


@pytest.mark.parametrize("device", ["cpu", pytest.param("vulkan:0", marks=needs_vulkan)])
def test_every_device_gives_the_reference_bits(device: str) -> None:
    """One module with every function; the cpu device flushes subnormal inputs and results
    to zero (docs/contracts.md), so those elements are left out there."""
    x = _inputs()
    y = np.roll(x, 7)
    want = [
        t.numpy() for t in _every_function(*(vkml.tensor(a, device="reference") for a in (x, y)))
    ]
    got_tensors = _every_function(*(vkml.tensor(a, device=device) for a in (x, y)))
    vkml.realize(got_tensors)
    tiny = np.finfo(np.float64).tiny
    for name, g, w in zip(UNARY + ["atan2"], (t.numpy() for t in got_tensors), want):
        keep = np.ones(x.shape, bool)
        if device == "cpu":
            keep = ~((np.abs(x) < tiny) & (x != 0)) & ~((np.abs(w) < tiny) & (w != 0))
            keep &= ~((np.abs(y) < tiny) & (y != 0)) if name == "atan2" else True
        assert_bit_exact(g[keep], w[keep], f"{name} on {device}")


@pytest.mark.parametrize(
    "device", ["reference", "cpu", pytest.param("vulkan:0", marks=needs_vulkan)]
)
def test_float32_trigonometry_is_computed_in_float64(device: str) -> None:
    """float32 sin, cos and tan are computed in float64 (a reduction for float32 arguments,
    then the float64 kernels) and rounded, where the device computes float64: IREE's own
    reduced the argument in float32 and gave cos(x) 12,015 ULP off for |x| <= 3, sin(1e4) 870
    ULP off and -inf from |x| = 1e15 on, on cpu and lavapipe alike."""
    x = np.concatenate([_uniform(-3, 3, 300), _magnitudes(-30, 38, 300)]).astype(np.float32)
    x = np.concatenate([x, np.float32([np.pi, 1e4, 1e8, 1e15, 1e22, 3e38])])
    for name in ("sin", "cos", "tan"):
        got = getattr(vkml, name)(vkml.tensor(x, device=device)).numpy()
        assert got.dtype == np.float32
        want = evaluate(name, x.astype(np.float64), narrow=True).astype(np.float32)
        assert_bit_exact(got, want, f"float32 {name} on {device}")
        wide = evaluate(name, x.astype(np.float64)).astype(np.float32)  # the full reduction
        assert_bit_exact(want, wide, f"float32 {name}: both reductions")
        truth = NUMPY[name](x.astype(np.float64)).astype(np.float32)
        assert (np.abs(got.astype(np.float64) - truth) <= np.spacing(np.abs(truth))).all()
