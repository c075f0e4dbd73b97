"""vkml.array_api against NumPy: each function on cpu for the values that test its edges
(NaN, ±inf, ±0, negative integers), the namespace's inspection functions, and the
operators the standard adds to tensors. The standard's own suite is `make array-api`."""

from __future__ import annotations

import math

import numpy as np
import pytest

import vkml
import vkml.array_api as xp

SPECIAL = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1e-30, -2.5, 3.0, 0.5], np.float32)
OTHER = np.array([1.0, np.inf, -np.inf, -1.0, 0.0, -0.0, 2.0, np.nan, -0.5], np.float32)
INTS = np.array([-7, -1, 0, 1, 5, 2**31 - 1], np.int32)

# (function, NumPy's, operands): exact results, compared bit for bit (NaN with NaN)
EXACT = [
    ("isnan", np.isnan, (SPECIAL,)),
    ("isinf", np.isinf, (SPECIAL,)),
    ("isfinite", np.isfinite, (SPECIAL,)),
    ("signbit", np.signbit, (SPECIAL,)),
    ("isnan", np.isnan, (INTS,)),
    ("isfinite", np.isfinite, (INTS,)),
    ("signbit", np.signbit, (INTS,)),
    ("copysign", np.copysign, (SPECIAL, OTHER)),
    ("positive", np.positive, (SPECIAL,)),
    ("square", np.square, (SPECIAL,)),
    ("logical_and", np.logical_and, (SPECIAL > 0, OTHER > 0)),
    ("logical_or", np.logical_or, (SPECIAL > 0, OTHER > 0)),
    ("logical_xor", np.logical_xor, (SPECIAL > 0, OTHER > 0)),
    ("logical_not", np.logical_not, (SPECIAL > 0,)),
    ("bitwise_invert", np.invert, (INTS,)),
    ("bitwise_invert", np.invert, (INTS.astype(np.uint32),)),
    ("bitwise_invert", np.invert, (INTS > 0,)),
    ("bitwise_and", np.bitwise_and, (INTS > 0, INTS < 2)),
    ("bitwise_xor", np.bitwise_xor, (INTS, INTS[::-1].copy())),
]


@pytest.mark.parametrize(("name", "expected", "operands"), EXACT, ids=[c[0] for c in EXACT])
def test_exact_functions_match_numpy_bit_for_bit(name, expected, operands) -> None:
    got = getattr(xp, name)(*(xp.asarray(o) for o in operands)).numpy()
    want = expected(*operands)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (name, got, want)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("hypot", np.hypot), ("logaddexp", np.logaddexp), ("log2", np.log2), ("log10", np.log10)],
)
def test_composed_functions_are_within_a_few_ulp_of_numpy(name, expected) -> None:
    a = np.array([3.0, 1e30, 1e-30, 0.0, np.inf, -np.inf, np.nan, 2.0, 100.0], np.float32)
    b = np.array([4.0, 1e30, 3e-30, 0.0, np.nan, -np.inf, 1.0, -2.0, 99.0], np.float32)
    args = (a, b) if name in ("hypot", "logaddexp") else (np.abs(a),)
    got = getattr(xp, name)(*(xp.asarray(x) for x in args)).numpy()
    with np.errstate(all="ignore"):
        want = expected(*args)
    np.testing.assert_array_max_ulp(got, want.astype(np.float32), maxulp=4)


def test_statistics_match_numpy() -> None:
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5
    x = xp.asarray(data)
    np.testing.assert_allclose(xp.var(x, axis=(0, 2), correction=1).numpy(),
                               data.var(axis=(0, 2), ddof=1), rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(xp.std(x, axis=1, keepdims=True).numpy(),
                               data.std(axis=1, keepdims=True), rtol=1e-6)  # fmt: skip
    ints = xp.asarray(np.array([[1, -2], [3, 4]], np.int32))
    total = xp.sum(ints, axis=0)
    assert total.dtype == xp.int64 and total.numpy().tolist() == [4, 2]
    assert xp.count_nonzero(ints - 1).item() == 3
    big = xp.asarray(np.array([2**31, 2**31 + 5], np.uint32))
    assert (
        xp.sum(big, dtype=xp.uint32).dtype is xp.uint32 and xp.sum(big, dtype=xp.uint32).item() == 5
    )
    assert xp.vecdot(big, xp.asarray(np.array([1, 1], np.uint32))).dtype is xp.uint32
    assert xp.all(xp.asarray([True, True])).item() and not xp.any(xp.asarray([False])).item()
    assert xp.all(xp.zeros((0, 2), dtype=xp.bool), axis=0).numpy().tolist() == [True, True]
    assert not xp.any(xp.zeros((0,), dtype=xp.bool)).item()


def test_creation_and_manipulation_match_numpy() -> None:
    m = np.arange(12).reshape(3, 4)
    x = xp.asarray(m)
    assert np.array_equal(xp.eye(3, 4, k=1, dtype=xp.int64).numpy(), np.eye(3, 4, k=1, dtype=int))
    assert np.array_equal(xp.tril(x, k=-1).numpy(), np.tril(m, k=-1))
    assert np.array_equal(xp.triu(x, k=1).numpy(), np.triu(m, k=1))
    for got, want in zip(xp.meshgrid(xp.arange(3), xp.arange(2)), np.meshgrid(range(3), range(2))):
        assert np.array_equal(got.numpy(), want)
    got_ij = xp.meshgrid(xp.arange(3), xp.arange(2), indexing="ij")
    assert [g.shape for g in got_ij] == [(3, 2), (3, 2)]
    assert np.array_equal(xp.flip(x, axis=1).numpy(), np.flip(m, axis=1))
    assert np.array_equal(xp.roll(x, 5).numpy(), np.roll(m, 5))
    assert np.array_equal(xp.roll(x, (1, -1), axis=(0, 1)).numpy(), np.roll(m, (1, -1), (0, 1)))
    assert np.array_equal(xp.moveaxis(x, 0, 1).numpy(), np.moveaxis(m, 0, 1))
    assert np.array_equal(xp.tile(x, (2, 1, 2)).numpy(), np.tile(m, (2, 1, 2)))
    assert np.array_equal(xp.repeat(x, 2, axis=1).numpy(), np.repeat(m, 2, axis=1))
    counts = np.arange(m.shape[1]) % 3
    got = xp.repeat(x, xp.asarray(counts), axis=1).numpy()  # counts realized, x gathered
    assert np.array_equal(got, np.repeat(m, counts, axis=1))
    assert np.array_equal(xp.repeat(x, xp.asarray([2])).numpy(), np.repeat(m, [2]))
    with pytest.raises(vkml.ShapeError, match="non-negative"):
        xp.repeat(x, xp.asarray([-1]))
    assert np.array_equal(xp.concat([x, x], axis=None).numpy(), np.concatenate([m, m], None))
    assert xp.unstack(x, axis=1)[0].numpy().tolist() == [0, 4, 8]
    assert xp.squeeze(xp.expand_dims(x, axis=-1), axis=2).shape == (3, 4)
    with pytest.raises(ValueError, match="not of size 1"):
        xp.squeeze(x, axis=0)
    assert [t.numpy().tolist() for t in xp.nonzero(xp.asarray([0, 3, 0, 1]))] == [[1, 3]]
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(4, 3)
    got = xp.tensordot(xp.asarray(a, dtype=xp.float64), xp.asarray(b, dtype=xp.float64),
                       axes=([1, 2], [1, 0]))  # fmt: skip
    assert np.array_equal(got.numpy(), np.tensordot(a, b, axes=([1, 2], [1, 0])))
    v = xp.vecdot(xp.asarray(a, dtype=xp.float64), xp.asarray(a, dtype=xp.float64))
    assert np.array_equal(v.numpy(), np.sum(a * a, axis=-1))


def test_asarray_shares_or_copies_as_asked() -> None:
    t = xp.asarray([1.0, 2.0])
    assert t.dtype is xp.float32 and xp.asarray(t) is t and xp.asarray(t, copy=True) is t
    assert xp.asarray(t, dtype=xp.float64).dtype is xp.float64
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(t, dtype=xp.float64, copy=False)
    with pytest.raises(ValueError, match="DLPack"):
        xp.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="64-byte aligned"):
        xp.asarray(np.arange(8, dtype=np.float32)[1::2], copy=False)  # strided: not shareable
    raw = np.zeros(16 * 4 + 64, np.uint8)  # float32s from a 64-byte boundary: shareable
    host = raw[-raw.ctypes.data % 64 :][: 16 * 4].view(np.float32)
    shared = xp.asarray(host, copy=False)
    host[0] = 5.0  # the tensor is a view of the array's memory
    assert shared.numpy()[0] == 5.0
    assert xp.asarray(True).dtype is xp.bool and xp.asarray(3).dtype is xp.int64


def test_inspection_functions() -> None:
    assert vkml.tensor([1.0]).__array_namespace__() is xp is vkml.array_api
    assert vkml.tensor([1.0]).__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ValueError, match="api_version"):
        vkml.tensor([1.0]).__array_namespace__(api_version="2019.01")
    assert xp.__array_api_version__ == "2023.12"
    info = xp.__array_namespace_info__()
    assert info.default_device() is vkml.cpu and vkml.reference in info.devices()
    assert info.default_dtypes()["real floating"] is xp.float32
    assert set(info.dtypes(kind="integral")) == {"int32", "int64", "uint32"}
    assert xp.finfo(xp.float32).eps == float(np.finfo(np.float32).eps)
    assert xp.finfo(vkml.float16).max == 65504.0
    assert (xp.iinfo(xp.uint32).min, xp.iinfo(xp.uint32).max) == (0, 2**32 - 1)
    assert xp.isdtype(xp.float32, ("integral", "real floating")) and not xp.isdtype(
        xp.bool, "numeric"
    )
    assert xp.result_type(xp.int32, xp.uint32) is xp.int64
    assert xp.result_type(xp.asarray([1], dtype=xp.int32), 7) is xp.int32
    assert xp.can_cast(xp.int32, xp.int64) and not xp.can_cast(xp.int64, xp.float64)
    with pytest.raises(vkml.DTypeError, match="promotes no"):
        xp.result_type(xp.bool, xp.int32)
    assert math.isnan(xp.nan) and xp.newaxis is None


def test_tensor_operators_of_the_standard() -> None:
    x = vkml.tensor([[1, 2], [3, 4]], dtype="int32")
    assert ((x & 6) | 1).numpy().tolist() == [[1, 3], [3, 5]]
    assert (x ^ x).numpy().max() == 0 and (~x).numpy().tolist() == [[-2, -3], [-4, -5]]
    assert (1 << x).numpy().tolist() == [[2, 4], [8, 16]] and (x >> 1).numpy()[1, 1] == 2
    b = x > 2
    assert (b & True).numpy().tolist() == [[False, False], [True, True]]
    assert (~b).numpy().tolist() == [[True, True], [False, False]]
    assert x.mT.numpy().tolist() == [[1, 3], [2, 4]]
    assert x.to_device(vkml.reference).device is vkml.reference
    with pytest.raises(vkml.DTypeError, match="integer operands"):
        ~vkml.tensor([1.5])


def test_set_functions_realize_and_match_numpy() -> None:
    data = np.array([[3.0, 1.0, np.nan], [1.0, np.nan, 3.0]], np.float32)
    x = xp.asarray(data)
    values, counts = xp.unique_counts(x)
    assert values.numpy()[:2].tolist() == [1.0, 3.0] and np.isnan(values.numpy()[2:]).all()
    assert counts.numpy().tolist() == [2, 2, 1, 1]  # each NaN is its own value
    everything = xp.unique_all(xp.asarray([5, 2, 5, 7]))
    assert everything.values.numpy().tolist() == [2, 5, 7]
    assert everything.indices.numpy().tolist() == [1, 0, 3]
    assert everything.inverse_indices.numpy().tolist() == [1, 0, 1, 2]
    assert xp.unique_inverse(x).inverse_indices.shape == (2, 3)


def test_searchsorted_is_numpys() -> None:
    sorted_ = np.array([1.0, 2.0, 2.0, 5.0], np.float32)
    values = np.array([[0.0, 2.0], [2.5, 9.0]], np.float32)
    for side in ("left", "right"):
        got = xp.searchsorted(xp.asarray(sorted_), xp.asarray(values), side=side)
        assert got.dtype is xp.int64
        assert got.numpy().tolist() == np.searchsorted(sorted_, values, side=side).tolist()


def test_searchsorted_reads_x1_through_a_sorter() -> None:
    unsorted = np.array([5.0, 1.0, 2.0, 2.0], np.float32)
    values = np.array([0.0, 2.0, 9.0], np.float32)
    x1 = xp.asarray(unsorted)
    got = xp.searchsorted(x1, xp.asarray(values), side="right", sorter=xp.argsort(x1))
    assert (
        got.numpy().tolist()
        == np.searchsorted(unsorted, values, "right", np.argsort(unsorted)).tolist()
    )


def test_sort_and_argsort_are_stable_and_place_nan_as_numpy_and_torch() -> None:
    data = np.stack([SPECIAL, OTHER])
    x = xp.asarray(data)
    for axis in (0, 1, -1):
        assert (
            xp.argsort(x, axis=axis).numpy().tolist()
            == np.argsort(data, axis, kind="stable").tolist()
        )
        np.testing.assert_array_equal(xp.sort(x, axis=axis).numpy(), np.sort(data, axis))
    # descending keeps equal elements in order (a stable sort of the reversed order): NaN first
    down = xp.argsort(xp.asarray(OTHER), descending=True).numpy().tolist()
    assert down == [7, 1, 6, 0, 4, 5, 8, 3, 2]
    assert xp.sort(xp.asarray(INTS), descending=True, stable=False).numpy().tolist() == sorted(
        INTS.tolist(), reverse=True
    )
    assert xp.argsort(x).dtype is xp.int64 and xp.sort(xp.asarray(3.0)).numpy() == 3.0


def test_real_number_helpers() -> None:
    x = xp.asarray([1.5, -2.0])
    assert xp.conj(x) is x and xp.real(x) is x and xp.imag(x).numpy().tolist() == [0.0, 0.0]
    assert xp.clip(x) is x and xp.clip(x, max=0.0).numpy().tolist() == [0.0, -2.0]
