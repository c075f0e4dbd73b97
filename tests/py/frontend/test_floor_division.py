"""floor_divide and remainder (``//``, ``%``) give NumPy's values bit for bit: signs of
zero, infinite and zero divisors, NaN, integer division by zero (0) and MIN // -1 (MIN), on
every device for the dtypes it runs them for."""

from __future__ import annotations

import numpy as np
import pytest

import vkml

FLOATS_A = [7.5, -7.5, 7.5, -7.5, 1e10, 0.0, -0.0, 5.0, np.inf, 3.0, np.nan, 1.0, -1e-30, 6.0]
FLOATS_B = [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 3.0, 0.0, 2.0, np.inf, 1.0, -np.inf, 3.0, 0.1]
INTS_A = [7, -7, 7, -7, 0, 5, -(2**31), -(2**31), 9, -9, 2**31 - 1]
INTS_B = [2, 2, -2, -2, 3, 0, -1, 1, 3, 3, -1]


def _cases(device: str) -> list[tuple[np.ndarray, np.ndarray]]:
    ints = [(np.array(INTS_A, d), np.array(INTS_B, d)) for d in (np.int32, np.int64)]
    uints = [(np.abs(np.array(INTS_A[:6], np.int64)).astype(np.uint32),
              np.abs(np.array(INTS_B[:6], np.int64)).astype(np.uint32))]  # fmt: skip
    floats = [(np.array(FLOATS_A, d), np.array(FLOATS_B, d)) for d in (np.float32, np.float16)]
    floats.append((np.array(FLOATS_A), np.array(FLOATS_B)))
    runs = vkml.device(device).supports
    return (
        ints
        + uints
        + [(a, b) for a, b in floats if runs("remainder", vkml.dtypes.from_numpy(a.dtype))]
    )


@pytest.mark.parametrize("device", ["cpu", "reference", "vulkan:0"])
def test_floor_divide_and_remainder_are_numpys_bit_for_bit(device: str) -> None:
    if device.startswith("vulkan") and not any(
        d.name.startswith("vulkan") for d in vkml.array_api.__array_namespace_info__().devices()
    ):
        pytest.skip("no Vulkan device")
    for a, b in _cases(device):
        x, y = vkml.tensor(a, device=device), vkml.tensor(b, device=device)
        with np.errstate(all="ignore"):
            want_q, want_r = np.floor_divide(a, b), np.remainder(a, b)
        got_q, got_r = (x // y).numpy(), (x % y).numpy()
        assert got_q.tobytes() == want_q.tobytes(), (a.dtype, got_q, want_q)
        assert got_r.tobytes() == want_r.tobytes(), (a.dtype, got_r, want_r)


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_integer_division_over_the_whole_range_is_numpys(device: str, dtype: type) -> None:
    """Values across the dtype's whole range, not just small ones. On lavapipe MIN % 3 was 2
    (IREE's SPIR-V remainder took MIN for its own magnitude), and an unsigned divide of eight
    or more elements did not compile."""
    try:
        dev = vkml.device(device)
    except vkml.DeviceError:
        pytest.skip("no Vulkan device")
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    edges = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7]
    if info.min < 0:
        edges += [-1, -2, -3, -7]
    n = 256 - len(edges) ** 2
    a = np.concatenate([np.repeat(edges, len(edges)), rng.integers(info.min, info.max, n, dtype)])
    b = np.concatenate([np.tile(edges, len(edges)), rng.integers(info.min, info.max, n, dtype)])
    a, b = a.astype(dtype), b.astype(dtype)
    for n in (256, 64):  # IREE tiles these sizes differently
        u, v = a[:n], b[:n]
        x, y = vkml.tensor(u, device=dev), vkml.tensor(v, device=dev)
        with np.errstate(all="ignore"):
            want_q, want_r = np.floor_divide(u, v), np.remainder(u, v)
        for got, want in (((x // y).numpy(), want_q), ((x % y).numpy(), want_r)):
            wrong = got != want
            assert not wrong.any(), list(zip(u[wrong], v[wrong], got[wrong], want[wrong]))[:5]


def test_vulkan_refuses_float_floor_division_rather_than_answer_wrong() -> None:
    """SPIR-V's float remainder is x - y * trunc(x / y): lavapipe gave fmod(1e10, 3) = 0."""
    try:
        gpu = vkml.device("vulkan:0")
    except vkml.DeviceError:
        pytest.skip("no Vulkan device")
    x = vkml.tensor([1e10], device=gpu)
    with pytest.raises(vkml.UnsupportedOperatorError, match="'remainder'.*float32.*vulkan"):
        (x % 3.0).numpy()
    assert (vkml.tensor([7], device=gpu) % 3).item() == 1


def test_python_scalars_divide_either_side() -> None:
    x = vkml.tensor([7, -7], dtype="int32")
    assert (x // 2).numpy().tolist() == [3, -4] and (x % 2).numpy().tolist() == [1, 1]
    assert (20 // x).numpy().tolist() == [2, -3] and (20 % x).numpy().tolist() == [6, -1]
