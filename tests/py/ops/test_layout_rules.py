"""The rules that record views, concatenate, gathers, cumsum and argsort (vkml/ops/
layout_rules.py), called through ``record`` as the frontend calls them: each infers the
output its public function used to compute, and refuses a malformed call by name, even one
no public spelling makes (they are the last check before a node exists)."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.errors import AxisError, DeviceError, DTypeError, ShapeError
from vkml.frontend.record import record


def node(shape: tuple[int, ...], dtype: object = np.float32, device: str = "cpu") -> object:
    return vkml.tensor(np.zeros(shape, dtype), device=device)._node


def test_views_infer_their_shapes() -> None:
    x = node((2, 3, 4))
    assert record("reshape", x, shape=(6, 4)).shape == (6, 4)
    permuted = record("permute", x, perm=(2, 0, 1))
    assert permuted.shape == (4, 2, 3) and permuted.attrs == (("perm", (2, 0, 1)),)
    assert record("broadcast_to", node((3, 1)), shape=(2, 3, 5)).shape == (2, 3, 5)
    sliced = record(
        "slice", x, start=(0, 1, 0), limit=(2, 3, 4), stride=(1, 1, 3), reverse=(2,)
    )  # fmt: skip
    assert sliced.shape == (2, 2, 2) and dict(sliced.attrs)["reverse"] == (2,)
    joined = record("concatenate", x, node((2, 1, 4), np.int32), axis=1)
    assert joined.shape == (2, 4, 4) and joined.dtype is vkml.float32


@pytest.mark.parametrize(
    ("op", "operands", "params", "error", "words"),
    [
        ("reshape", [(2, 3)], {"shape": (4, 2)}, ShapeError, "6 elements"),
        ("permute", [(2, 3)], {"perm": (0, 0)}, AxisError, "not a permutation"),
        ("broadcast_to", [(2, 3)], {"shape": (3, 3)}, ShapeError, "cannot broadcast"),
        ("slice", [(4,)], {"start": (3,), "limit": (5,), "stride": (1,), "reverse": ()},
         ShapeError, "not a slice"),
        ("concatenate", [(2, 3), (3, 3)], {"axis": 1}, ShapeError, "differ outside axis 1"),
        ("concatenate", [()], {"axis": 0}, ShapeError, "0-d"),
        ("cumsum", [()], {"axis": 0}, ShapeError, "0-d"),
        ("argsort", [(3,)], {"axis": 0, "descending": 1}, DTypeError, "not a bool"),
        ("scatter_add", [(2, 3), (2, 2)], {"axis": 1, "size": 4}, ShapeError, "differ"),
        ("scatter_add", [(2, 3), (2, 3)], {"axis": 1, "size": -1}, ShapeError, "non-negative"),
        ("take_along_axis", [(2, 3), (3, 3)], {"axis": 1}, ShapeError, "every axis but 1"),
        ("matmul", [(2, 3), (4, 2)], {}, ShapeError, "rank >= 2"),
    ],
)  # fmt: skip
def test_a_malformed_call_is_refused_by_name(
    op: str, operands: list[tuple[int, ...]], params: dict, error: type, words: str
) -> None:
    nodes = [node(s, np.int64 if i and op in ("scatter_add", "take_along_axis") else np.float32)
             for i, s in enumerate(operands)]  # fmt: skip
    with pytest.raises(error, match=f"'{op}'.*{words}|{words}"):
        record(op, *nodes, **params)


def test_indices_must_be_integers_and_operands_share_a_device() -> None:
    with pytest.raises(DTypeError, match="'take_along_axis' takes integer indices, got float32"):
        record("take_along_axis", node((2, 3)), node((2, 3)), axis=1)
    with pytest.raises(DeviceError, match="'concatenate' operands are on different devices"):
        record("concatenate", node((2,)), node((2,), device="reference"), axis=0)
