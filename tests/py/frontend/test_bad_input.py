"""Bad input raises a specific vkml error that is also the built-in a user would catch, with a
message naming the values involved; the graph stays usable afterwards. Empty and 0-d tensors
are not bad input: they work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import vkml
from vkml.errors import (
    AxisError,
    DataError,
    DeviceError,
    DTypeError,
    GradientError,
    IndexingError,
    ShapeError,
    ValueRangeError,
    VkmlError,
)

A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
B = np.array([1.0, 2.0], np.float32)


@dataclass
class Operands:
    """Two pending (unrealized) cpu tensors with known values: ``a`` (2, 3) and ``b`` (2,)."""

    a: vkml.Tensor
    b: vkml.Tensor

    def assert_still_usable(self) -> None:
        assert not self.a.is_realized and not self.b.is_realized
        np.testing.assert_array_equal(self.a.numpy(), A * 2)
        np.testing.assert_array_equal(self.b.numpy(), B * 2)
        np.testing.assert_array_equal((self.a + 1.0).numpy(), A * 2 + 1)


@pytest.fixture
def ops() -> Operands:
    return Operands(vkml.tensor(A) * 2.0, vkml.tensor(B) * 2.0)


@dataclass(frozen=True)
class Bad:
    """One bad call: the vkml error and built-in it raises and what its message must name."""

    call: Callable[[Operands], Any]
    error: type[VkmlError]
    builtin: type[Exception]
    names: tuple[str, ...]


BAD: dict[str, Bad] = {
    "add-shape-mismatch": Bad(
        lambda o: o.a + o.b, ShapeError, ValueError, ("'add'", "(2, 3)", "(2,)")
    ),
    "matmul-inner-dims": Bad(
        lambda o: o.a @ o.a, ShapeError, ValueError, ("'matmul'", "(2, 3) @ (2, 3)", "3 != 2")
    ),
    "sum-axis": Bad(
        lambda o: vkml.sum(o.a, axis=2), AxisError, IndexError, ("'sum'", "axis 2", "(2, 3)")
    ),
    "mean-axis": Bad(
        lambda o: o.a.mean(axis=-3), AxisError, IndexError, ("'mean'", "axis -3", "(2, 3)")
    ),
    "amax-axis": Bad(
        lambda o: vkml.amax(o.a, axis=5), AxisError, ValueError, ("'amax'", "axis 5", "(2, 3)")
    ),
    "argmax-axis": Bad(
        lambda o: o.a.argmax(axis=2), AxisError, IndexError, ("'argmax'", "axis 2", "(2, 3)")
    ),
    "softmax-axis": Bad(
        lambda o: vkml.softmax(o.a, axis=3), AxisError, ValueError, ("axis 3", "(2, 3)")
    ),
    "repeated-axis": Bad(
        lambda o: o.a.sum(axis=(1, -1)),
        AxisError,
        ValueError,
        ("'sum'", "axis 1", "repeated", "(1, -1)"),
    ),
    "reshape": Bad(
        lambda o: o.a.reshape(4, 2), ShapeError, ValueError, ("'reshape'", "(2, 3)", "(4, 2)")
    ),
    "broadcast-to": Bad(
        lambda o: vkml.broadcast_to(o.a, (3, 3)),
        ShapeError,
        ValueError,
        ("'broadcast_to'", "(2, 3)", "(3, 3)"),
    ),
    "squeeze-non-1": Bad(
        lambda o: o.a.squeeze(0),
        ShapeError,
        ValueError,
        ("'squeeze'", "axis 0", "(2, 3)", "length 2"),
    ),
    "dtype-name": Bad(
        lambda o: vkml.tensor([1], dtype="complex64"),
        DTypeError,
        TypeError,
        ("'complex64'", "float32", "int64"),
    ),
    "string-data": Bad(lambda o: vkml.tensor("abc"), DataError, TypeError, ("str", "'abc'")),
    "ragged-data": Bad(
        lambda o: vkml.tensor([[1, 2], [3]]), DataError, TypeError, ("list", "ragged")
    ),
    "object-data": Bad(lambda o: vkml.tensor([object()]), DataError, TypeError, ("object",)),
    # integers that do not fit the dtype raise as NumPy's and PyTorch's do; vkml.tensor
    # wrapped them silently (2**63 became -2**63)
    "int-past-int64": Bad(
        lambda o: vkml.tensor(2**63),
        ValueRangeError,
        OverflowError,
        ("9223372036854775808", "int64"),
    ),
    "int-past-any-dtype": Bad(
        lambda o: vkml.tensor([1, 2**70]), ValueRangeError, OverflowError, (str(2**70), "int64")
    ),
    "int-past-int32": Bad(
        lambda o: vkml.tensor(2**40, dtype=vkml.int32),
        ValueRangeError,
        OverflowError,
        ("1099511627776", "int32", "[-2147483648, 2147483647]"),
    ),
    "list-past-int32": Bad(
        lambda o: vkml.tensor([1, 3_000_000_000], dtype=vkml.int32),
        ValueRangeError,
        OverflowError,
        ("3000000000", "int32", "dtype=vkml.int64"),
    ),
    "negative-uint32": Bad(
        lambda o: vkml.tensor(-1, dtype=vkml.uint32),
        ValueRangeError,
        OverflowError,
        ("-1", "uint32", "[0, 4294967295]"),
    ),
    "array-past-int32": Bad(
        lambda o: vkml.tensor(np.array([5, -(2**40)]), dtype=vkml.int32),
        ValueRangeError,
        OverflowError,
        ("-1099511627776", "int32", "astype"),
    ),
    "nan-to-int": Bad(
        lambda o: vkml.tensor([1.0, float("nan")], dtype=vkml.int64),
        ValueRangeError,
        OverflowError,
        ("nan", "int64"),
    ),
    "float-past-uint32": Bad(
        lambda o: vkml.tensor(np.array([1e10], np.float32), dtype=vkml.uint32),
        ValueRangeError,
        OverflowError,
        ("10000000000.0", "uint32"),
    ),
    # a newcomer's first hour (issue 30): each message names the value and the remedy
    "torch-style-shape": Bad(
        lambda o: vkml.ones(2, 3), DTypeError, TypeError, ("dtype=3", "vkml.ones((2, 3))")
    ),
    "concatenate-without-list": Bad(
        lambda o: vkml.concatenate(o.a, o.a),
        DTypeError,
        TypeError,
        ("one tensor", "vkml.concatenate([a, b]"),
    ),
    "to-a-dtype": Bad(
        lambda o: o.a.to(vkml.int32),
        DeviceError,
        ValueError,
        ("is a dtype", "x.astype(vkml.int32)"),
    ),
    "full-negative-uint32": Bad(
        lambda o: vkml.full((2,), -1, dtype=vkml.uint32),
        ValueRangeError,
        OverflowError,
        ("-1", "uint32", "dtype=vkml.int64"),
    ),
    "ambiguous-truth": Bad(lambda o: bool(o.a), ShapeError, ValueError, ("6 elements", "x.any()")),
    "setitem-leaf-requiring-grad": Bad(
        lambda o: o.a.requires_grad_().__setitem__(0, 1.0),
        GradientError,
        RuntimeError,
        ("leaf", "requires grad", "x.at[index].set(value)"),
    ),
    "numpy-out": Bad(lambda o: np.sum(o.a, out=np.zeros(())), TypeError, TypeError, ("out=",)),
    "index-out-of-range": Bad(
        lambda o: o.a[2], IndexingError, IndexError, ("index 2", "axis 0", "size 2")
    ),
    "negative-index-out-of-range": Bad(
        lambda o: o.a[:, -4], IndexingError, IndexError, ("index -4", "axis 1", "size 3")
    ),
    "too-many-indices": Bad(
        lambda o: o.a[0, 0, 0], IndexingError, IndexError, ("too many indices", "(2, 3)", "3")
    ),
    "float-index-list": Bad(
        lambda o: o.a[[0.5, 1.0]], IndexingError, IndexError, ("integers or bools", "float64")
    ),
    "item-multi-element": Bad(
        lambda o: o.a.item(), ShapeError, ValueError, ("item()", "(2, 3)", "6 elements")
    ),
    "mean-of-int": Bad(
        lambda o: vkml.tensor([1, 2]).mean(), DTypeError, TypeError, ("'mean'", "int64")
    ),
    "bool-arithmetic": Bad(
        lambda o: vkml.tensor([True]) + vkml.tensor([True]),
        DTypeError,
        TypeError,
        ("'add'", "bool"),
    ),
    "unknown-device": Bad(
        lambda o: vkml.device("vulkan:7"),
        DeviceError,
        ValueError,
        ("'vulkan:7'", "cpu", "reference"),
    ),
}


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_bad_input_raises_specific_error_naming_values(case: Bad, ops: Operands) -> None:
    with pytest.raises(case.error) as info:
        case.call(ops)
    assert isinstance(info.value, case.builtin)
    message = str(info.value)
    for name in case.names:
        assert name in message, f"{name!r} missing from {message!r}"
    ops.assert_still_usable()


def test_numpy_reductions_and_none_comparisons_work() -> None:
    """np.sum(t) called t.sum(out=None, dtype=None): 'unexpected keyword argument'; x == None
    tried to make a tensor of None."""
    t = vkml.tensor(A)
    assert np.sum(t).item() == A.sum()
    np.testing.assert_array_equal(np.mean(t, axis=0).numpy(), A.mean(axis=0))
    assert np.sum(t, dtype=np.float64).dtype == vkml.float64
    assert np.max(t).item() == 6.0 and np.argmin(t).item() == 0
    assert (t == None) is False and (t != None) is True


@pytest.mark.parametrize("op", ["matmul", "add"])
def test_mixed_devices_message_is_exact(op: str, ops: Operands) -> None:
    on_reference = vkml.tensor(np.ones((3, 2), np.float32), device=vkml.reference)
    call = {"matmul": lambda: vkml.matmul(ops.a, on_reference), "add": lambda: ops.a + on_reference}
    with pytest.raises(DeviceError) as info:
        call[op]()
    assert isinstance(info.value, ValueError)
    assert str(info.value) == f"'{op}' operands are on different devices: cpu and reference"
    ops.assert_still_usable()
    np.testing.assert_array_equal(on_reference.numpy(), np.ones((3, 2), np.float32))


def test_unknown_device_lists_every_device_present() -> None:
    with pytest.raises(DeviceError) as info:
        vkml.device("vulkan:7")
    from vkml.runtime.vulkan_loader import vulkan_device_reports

    present = ["cpu", "reference", *(f"vulkan:{r.index}" for r in vulkan_device_reports())]
    assert str(info.value) == f"unknown device 'vulkan:7'; devices present: {', '.join(present)}"


# -- empty and 0-d tensors work -----------------------------------------------------------------
DEVICES = ["cpu", "reference"]


def _exact(got: vkml.Tensor, want: np.ndarray) -> None:
    """``got`` has ``want``'s shape, dtype and bits (so -0.0 and +0.0 differ)."""
    value = got.numpy()
    assert (got.shape, value.shape, value.dtype) == (want.shape, want.shape, want.dtype)
    assert value.tobytes() == want.tobytes(), (value, want)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_tensors_are_created(device: str) -> None:
    _exact(vkml.tensor([], device=device), np.zeros((0,), np.float32))
    _exact(vkml.zeros((0, 3), device=device), np.zeros((0, 3), np.float32))
    _exact(vkml.tensor(np.zeros((0, 3), np.int32), device=device), np.zeros((0, 3), np.int32))
    _exact(vkml.arange(0, device=device), np.zeros((0,), np.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_zero_d_tensors_are_created(device: str) -> None:
    _exact(vkml.full((), 2.5, device=device), np.array(2.5, np.float32))
    _exact(vkml.tensor(3.5, device=device), np.array(3.5, np.float32))
    _exact(vkml.tensor(np.int32(7), device=device), np.array(7, np.int32))
    assert vkml.tensor(3.5, device=device).item() == 3.5


@pytest.mark.parametrize("device", DEVICES)
def test_empty_tensor_arithmetic(device: str) -> None:
    empty = vkml.tensor(np.zeros((0, 3), np.float32), device=device)
    _exact(empty + 1.0, np.zeros((0, 3), np.float32))
    _exact(empty * vkml.ones((1, 3), device=device), np.zeros((0, 3), np.float32))
    _exact(
        vkml.zeros((0,), device=device) - vkml.zeros((0,), device=device),
        np.zeros((0,), np.float32),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_zero_d_arithmetic_on_lazy_scalar(device: str) -> None:
    _exact(vkml.full((), 2.0, device=device) + 1.0, np.array(3.0, np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_zero_d_arithmetic_on_uploaded_scalar(device: str) -> None:
    x = vkml.tensor(3.5, device=device)
    _exact(x * 2.0, np.array(7.0, np.float32))
    _exact(x + vkml.tensor([1.0, 2.0], device=device), np.array([4.5, 5.5], np.float32))
    _exact(x.sum(), np.array(3.5, np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_sum_over_empty_axis_is_positive_zero(device: str) -> None:
    # as NumPy: an empty sum is +0.0, so 1 / sum is +inf, not -inf
    _exact(vkml.zeros((0, 3), device=device).sum(axis=0), np.zeros((3,), np.float32))
    _exact(
        vkml.tensor(np.zeros((0, 3), np.float32), device=device).sum(axis=0),
        np.zeros((3,), np.float32),
    )
    _exact(vkml.zeros((0,), device=device).sum(), np.array(0.0, np.float32))
    _exact(
        vkml.zeros((2, 0), device=device).sum(axis=1, keepdims=True), np.zeros((2, 1), np.float32)
    )


@pytest.mark.parametrize("device", DEVICES)
def test_reshape_of_zero_d(device: str) -> None:
    _exact(vkml.full((), 2.0, device=device).reshape(1, 1), np.array([[2.0]], np.float32))
    _exact(vkml.tensor([2.0], device=device).reshape(()), np.array(2.0, np.float32))
    _exact(vkml.tensor(3.5, device=device).reshape(1), np.array([3.5], np.float32))
