"""Float ``pow`` gives IEEE 754's values (NumPy's, PyTorch's) at every special operand on every
device: negative bases under integer exponents, signed zeros, infinities, NaN, ``x ** 0`` and
``1 ** y``; elsewhere within its bound, 4·(1 + |y·ln|x||) ULP (docs/contracts.md). IREE's own
lowering gave NaN for ``(-2.0) ** 3``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from support.numerics import ulp_distance

import vkml

VALUES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 1e-30, -1e30,
          2.0**25, 2.0**23 + 1, np.inf, -np.inf, np.nan]  # fmt: skip
DEVICES = ["cpu", "vulkan:0"]


def assert_within_pow_bound(
    got: np.ndarray, want: np.ndarray, a: np.ndarray, b: np.ndarray, what: str
) -> None:
    assert np.array_equal(np.isnan(got), np.isnan(want)), (what, a[np.isnan(got) != np.isnan(want)])
    with np.errstate(all="ignore"):
        t = np.abs(b.astype(np.float64) * np.log(np.abs(a.astype(np.float64))))
    bound = 4 * (1 + np.nan_to_num(t, nan=0.0, posinf=0.0))
    far = ulp_distance(got, want) > bound
    assert not far.any(), (what, list(zip(a[far], b[far], got[far], want[far])))


def _grid(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    pairs = np.array(list(itertools.product(VALUES, VALUES)))
    return pairs[:, 0].astype(dtype), pairs[:, 1].astype(dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_pow_of_special_operands_is_ieee(device: str, dtype: type) -> None:
    try:
        dev = vkml.device(device)
    except vkml.DeviceError:
        pytest.skip("no Vulkan device")
    if not dev.supports("pow", vkml.dtypes.from_numpy(np.dtype(dtype))):
        pytest.skip(f"{device} refuses pow in {np.dtype(dtype)}")
    a, b = _grid(dtype)
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    got = (vkml.tensor(a, device=dev) ** vkml.tensor(b, device=dev)).numpy()
    assert_within_pow_bound(got, want, a, b, f"pow {np.dtype(dtype)} on {device}")
    # where IEEE's value is a zero, an infinity or exactly ±1, the bits too (the sign)
    exact = (want == 0) | np.isinf(want) | (np.abs(want) == 1)
    assert np.array_equal(np.signbit(got[exact]), np.signbit(want[exact])), [
        (x, y, g, w)
        for x, y, g, w in zip(a[exact], b[exact], got[exact], want[exact])
        if np.signbit(g) != np.signbit(w)
    ]
    assert np.array_equal(got[exact], want[exact])


def test_pow_of_special_operands_matches_the_reference_device() -> None:
    a, b = _grid(np.float32)
    got = (vkml.tensor(a) ** vkml.tensor(b)).numpy()
    want = (vkml.tensor(a, device="reference") ** vkml.tensor(b, device="reference")).numpy()
    assert_within_pow_bound(got, want, a, b, "pow cpu against reference")


def test_pow_stays_within_its_bound_over_wide_operands() -> None:
    rng = np.random.default_rng(7)
    a = np.exp(rng.uniform(-40, 40, 4096)).astype(np.float32)
    a[::2] *= -1  # negative bases, under the integer exponents of every other element
    b = rng.uniform(-30, 30, 4096).astype(np.float32)
    b[::2] = np.round(b[::2])
    with np.errstate(all="ignore"):
        want = np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    got = (vkml.tensor(a) ** vkml.tensor(b)).numpy()
    normal = np.abs(want) >= np.finfo(np.float32).tiny  # subnormal results lose bits in exp
    assert_within_pow_bound(got[normal], want[normal], a[normal], b[normal], "wide pow")


INT_BASES = [0, 1, -1, 2, -2, 3, -3, 7, 255, -(2**31), 2**31 - 1]
INT_EXPONENTS = [0, 1, 2, 3, 31, 32, 33, 62, 63, 64, 65, 70, 127, 128, 1000, 2**31 - 1, -1, -2, -3]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32])
def test_integer_pow_is_exact_for_every_exponent(device: str, dtype: type) -> None:
    """IREE's integer ``power`` squares six times: it took the exponent mod 64, so
    ``3 ** 64`` was 1 and ``2 ** 70`` was 64. Integers wrap as NumPy's do, at every exponent,
    and an integer to a negative power is ``1 / x**|y|`` truncated toward zero."""
    try:
        dev = vkml.device(device)
    except vkml.DeviceError:
        pytest.skip("no Vulkan device")
    info = np.iinfo(dtype)
    pairs = [
        (x, y)
        for x, y in itertools.product(INT_BASES, INT_EXPONENTS)
        if info.min <= x <= info.max and info.min <= y <= info.max
    ]
    a = np.array([x for x, _ in pairs], dtype=dtype)
    b = np.array([y for _, y in pairs], dtype=dtype)
    got = (vkml.tensor(a, device=dev) ** vkml.tensor(b, device=dev)).numpy()
    want = (vkml.tensor(a, device="reference") ** vkml.tensor(b, device="reference")).numpy()
    wrong = got != want
    assert not wrong.any(), list(zip(a[wrong], b[wrong], got[wrong], want[wrong]))
    # the reference is NumPy's wrapping power where the exponent is not negative
    whole = b >= 0
    assert np.array_equal(want[whole], np.power(a[whole], b[whole]))


@pytest.mark.parametrize("device", DEVICES)
def test_integer_pow_by_a_python_scalar_is_exact(device: str) -> None:
    try:
        dev = vkml.device(device)
    except vkml.DeviceError:
        pytest.skip("no Vulkan device")
    x = vkml.tensor([2, 3, -1], device=dev)
    assert (x**64).tolist() == [0, 8733086111712066817, 1]
    assert (x**65).tolist() == np.power(np.array([2, 3, -1]), 65).tolist()
    assert (vkml.tensor([2, 3], dtype=vkml.int32, device=dev) ** 70).tolist() == [0, -102221863]
