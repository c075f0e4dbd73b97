"""The fuzz campaign checks every device against vkml's own reference, which shares vkml's
front end: a bug in what users call before a graph exists (``vkml.tensor``, Python numbers
in arithmetic, ``nn``) gives the same wrong answer on every device and passes. These
hypothesis tests check those entry points against NumPy and PyTorch instead, over the whole
range of each dtype (the first hour of issue 30 found ``vkml.tensor(2**63)`` wrapping and
``nn.cross_entropy`` giving a loss for a label out of range)."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vkml
import vkml.runtime.vulkan_loader

SETTINGS = settings(
    max_examples=25, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
DEVICES = ["cpu"] + (["vulkan:0"] if vkml.runtime.vulkan_loader.vulkan_device_reports() else [])
INTS = {"int32": np.int32, "int64": np.int64, "uint32": np.uint32}


def _in(dtype: type) -> st.SearchStrategy[int]:
    info = np.iinfo(dtype)
    edges = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if info.min else 2, 64, 65])
    return st.integers(int(info.min), int(info.max)) | edges


@SETTINGS
@given(
    data=st.lists(st.integers(-(2**70), 2**70) | st.integers(-5, 5), min_size=1, max_size=4),
    dtype=st.sampled_from([None, "int32", "int64", "uint32", "float32", "float64"]),
)
def test_tensor_of_python_integers_is_numpy_s_or_refused(
    data: list[int], dtype: str | None
) -> None:
    want_dtype = np.dtype(dtype) if dtype else np.dtype(np.int64)  # vkml: ints are int64
    try:
        want = np.array(data, dtype=want_dtype)
    except OverflowError:
        with pytest.raises(OverflowError):
            vkml.tensor(data, dtype=dtype)
        return
    got = vkml.tensor(data, dtype=dtype).numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want), (data, dtype, got, want)


OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
    "mod": operator.mod, "pow": operator.pow, "and": operator.and_, "or": operator.or_,
    "xor": operator.xor, "lt": operator.lt, "eq": operator.eq, "ge": operator.ge,
}  # fmt: skip


def _numpy(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NumPy's value, with vkml's documented rules where NumPy raises or differs: an integer
    to a negative power is 1 / a**|b| truncated (docs/contracts.md)."""
    with np.errstate(all="ignore"):
        if op == "pow":
            out = np.power(a, np.where(b < 0, 0, b))
            one = np.ones_like(a)
            odd = (b % 2) != 0
            recip = np.where(
                a == 1,
                one,
                np.where((a == -1) & (a.dtype.kind == "i"), np.where(odd, -one, one), 0),
            )
            return np.where(b < 0, recip, out).astype(a.dtype)
        return OPS[op](a, b)


@pytest.mark.parametrize("device", DEVICES)
@settings(SETTINGS, max_examples=15)  # each (op, dtype, side) is a module of its own
@given(
    op=st.sampled_from(sorted(OPS)),
    dtype=st.sampled_from(sorted(INTS)),
    data=st.data(),
)
def test_integer_arithmetic_with_python_numbers_is_numpy_s(
    device: str, op: str, dtype: str, data: st.DataObject
) -> None:
    npdt = INTS[dtype]
    values = np.array(data.draw(st.lists(_in(npdt), min_size=1, max_size=6)), dtype=npdt)
    number = data.draw(_in(npdt))
    swap = data.draw(st.booleans())
    x = vkml.tensor(values, device=device)
    got = (OPS[op](number, x) if swap else OPS[op](x, number)).numpy()
    scalar = np.full(values.shape, number, dtype=npdt)
    want = _numpy(op, scalar, values) if swap else _numpy(op, values, scalar)
    assert np.array_equal(got, want), (op, dtype, values, number, swap, got, want)


@SETTINGS
@given(
    labels=st.lists(st.integers(-3, 6) | st.just(-100), min_size=1, max_size=5),
    reduction=st.sampled_from(["mean", "sum", "none"]),
)
def test_cross_entropy_is_torch_s_or_nan_for_a_bad_label(labels: list[int], reduction: str) -> None:
    torch = pytest.importorskip("torch")
    classes = 4
    logits = (
        np.random.default_rng(len(labels)).normal(size=(len(labels), classes)).astype(np.float32)
    )
    got = vkml.nn.cross_entropy(
        vkml.tensor(logits), vkml.tensor(labels), reduction=reduction
    ).numpy()
    bad = [y for y in labels if y != -100 and not 0 <= y < classes]
    if bad:  # PyTorch raises; vkml's loss is NaN where the bad labels are
        if reduction == "none":
            assert np.isnan(got[[y in bad for y in labels]]).all()
        else:
            assert np.isnan(got)
        return
    want = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits), torch.tensor(labels), reduction=reduction
    ).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
