"""floor, ceil, trunc, round and sign: bit-exact against NumPy's rules on every device, at
the values where rounding functions go wrong (ties, signed zeros, NaN, infinities, the
largest values that still have a fraction, subnormals), with integers unchanged and a zero
gradient."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.runtime.vulkan_loader import vulkan_device_reports

OPS = ("floor", "ceil", "trunc", "round", "sign")
NUMPY = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.rint}
DEVICES = ["cpu", "reference"] + (["vulkan:0"] if vulkan_device_reports() else [])


def _edges(dtype: str) -> np.ndarray:
    info = np.finfo(dtype)
    frac = 2.0 ** (info.nmant - 1)  # the largest magnitude with a half: x + 0.5
    values = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999997,
        -0.49999997,
        1.0,
        -1.0,
        frac + 0.5,
        -(frac + 0.5),
        2.0 * frac,
        float(info.max),
        -float(info.max),
        float(info.smallest_subnormal),
        -float(info.smallest_subnormal),
        np.inf,
        -np.inf,
        np.nan,
        3.7,
        -3.7,
        1e6 + 0.25,
    ]
    with np.errstate(over="ignore"):  # 1e6 + 0.25 is inf in float16, as it should be
        return np.array(values, np.float64).astype(dtype)


def _want(op: str, x: np.ndarray) -> np.ndarray:
    if op == "sign":
        with np.errstate(invalid="ignore"):
            return np.where(x > 0, 1, np.where(x < 0, -1, np.where(x != x, x, 0))).astype(x.dtype)
    return NUMPY[op](x)


def _flushed(x: np.ndarray) -> np.ndarray:
    """``x`` as ``cpu`` reads it: float32/float64 subnormals are ±0 there (docs/contracts.md)."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(
        np.uint16 if a.dtype.itemsize == 2 else np.uint32 if a.dtype.itemsize == 4 else np.uint64
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("op", OPS)
def test_rounding_of_float_edges_is_numpys_bit_for_bit(op: str, dtype: str, device: str) -> None:
    dev = vkml.device(device)
    if not dev.supports(op, vkml.dtypes.to_dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    x = _edges(dtype)
    got = getattr(vkml, op)(vkml.tensor(x, device=dev)).numpy()
    flushes = device == "cpu" and dtype in ("float32", "float64")
    want = _want(op, _flushed(x) if flushes else x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(
        _bits(got), _bits(want), err_msg=f"{op} {dtype} on {device}: {x} -> {got}"
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64"])
@pytest.mark.parametrize("op", OPS)
def test_integers_keep_their_dtype_and_value_except_under_sign(
    op: str, dtype: str, device: str
) -> None:
    dev = vkml.device(device)
    if not dev.supports(op, vkml.dtypes.to_dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    info = np.iinfo(dtype)
    x = (
        np.array([info.min, -7, -1, 0, 1, 7, info.max], np.int64)
        .clip(info.min, info.max)
        .astype(dtype)
    )
    got = getattr(vkml, op)(vkml.tensor(x, device=dev)).numpy()
    want = np.sign(x) if op == "sign" else x
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", OPS)
def test_bool_is_refused_with_the_remedy(op: str) -> None:
    with pytest.raises(vkml.DTypeError, match=f"'{op}' does not accept bool"):
        getattr(vkml, op)(vkml.tensor([True, False]))


@pytest.mark.parametrize("op", OPS)
def test_gradient_is_zero_as_in_pytorch(op: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.array([-2.5, -0.5, 0.0, 0.7, 3.0], np.float32)
    t = vkml.tensor(x, requires_grad=True)
    (getattr(t, op)() * 3.0).sum().backward()
    tt = torch.tensor(x, requires_grad=True)
    (getattr(torch, op)(tt) * 3.0).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())


def test_method_and_function_are_the_same_op() -> None:
    x = vkml.tensor(np.array([-1.5, 2.5], np.float32))
    for op in OPS:
        np.testing.assert_array_equal(getattr(x, op)().numpy(), getattr(vkml, op)(x).numpy())
        assert (
            getattr(vkml, op).__doc__
            and getattr(vkml.Tensor, op).__doc__ == getattr(vkml, op).__doc__
        )
