"""vkml.linalg: the compositions' values against NumPy on every device, their gradients
against PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.devices import needs_vulkan

import vkml
from vkml import linalg

R = np.random.default_rng(37)
A = R.standard_normal((2, 3, 3)).astype(np.float32)
B = R.standard_normal((3, 4)).astype(np.float32)
V = R.standard_normal((4, 3)).astype(np.float32)
W = R.standard_normal((4, 3)).astype(np.float32)
DEVICES = ["reference", "cpu", pytest.param("vulkan:0", marks=needs_vulkan)]

CASES = {
    "matmul": (lambda a, b, v, w: linalg.matmul(a, b), lambda: A @ B),
    "matrix_transpose": (lambda a, b, v, w: linalg.matrix_transpose(a), lambda: A.swapaxes(-1, -2)),
    "vecdot": (lambda a, b, v, w: linalg.vecdot(v, w), lambda: (V * W).sum(-1)),
    "tensordot": (lambda a, b, v, w: linalg.tensordot(a, b, axes=1), lambda: np.tensordot(A, B, 1)),
    "outer": (lambda a, b, v, w: linalg.outer(v[0], w[1]), lambda: np.outer(V[0], W[1])),
    "cross": (lambda a, b, v, w: linalg.cross(v, w), lambda: np.cross(V, W)),
    "cross-axis0": (lambda a, b, v, w: linalg.cross(a[0], a[1], axis=0), lambda: np.cross(A[0], A[1], axis=0)),
    "diagonal": (lambda a, b, v, w: linalg.diagonal(b, offset=1), lambda: np.diagonal(B, 1, -2, -1)),
    "diagonal-below": (lambda a, b, v, w: linalg.diagonal(a, offset=-1), lambda: np.diagonal(A, -1, -2, -1)),
    "trace": (lambda a, b, v, w: linalg.trace(a), lambda: np.trace(A, axis1=-2, axis2=-1)),
    "matrix_power-0": (lambda a, b, v, w: linalg.matrix_power(a, 0), lambda: np.linalg.matrix_power(A, 0)),
    "matrix_power-5": (lambda a, b, v, w: linalg.matrix_power(a, 5), lambda: np.linalg.matrix_power(A, 5)),
    "vector_norm": (lambda a, b, v, w: linalg.vector_norm(v, axis=1), lambda: np.linalg.norm(V, axis=1)),
    "vector_norm-all": (lambda a, b, v, w: linalg.vector_norm(a), lambda: np.linalg.norm(A.ravel())),
    "vector_norm-1": (lambda a, b, v, w: linalg.vector_norm(v, axis=0, ord=1), lambda: np.linalg.norm(V, 1, axis=0)),
    "vector_norm-inf": (lambda a, b, v, w: linalg.vector_norm(v, axis=1, ord=math.inf), lambda: np.linalg.norm(V, np.inf, axis=1)),
    "vector_norm--inf": (lambda a, b, v, w: linalg.vector_norm(v, axis=1, ord=-math.inf), lambda: np.linalg.norm(V, -np.inf, axis=1)),
    "vector_norm-0": (lambda a, b, v, w: linalg.vector_norm(v * (v > 0), axis=1, ord=0), lambda: np.linalg.norm(V * (V > 0), 0, axis=1)),
    "vector_norm-3": (lambda a, b, v, w: linalg.vector_norm(v, axis=1, ord=3), lambda: np.linalg.norm(V, 3, axis=1)),
    "matrix_norm": (lambda a, b, v, w: linalg.matrix_norm(a), lambda: np.linalg.norm(A, "fro", axis=(-2, -1))),
    **{f"matrix_norm-{o}": (lambda a, b, v, w, o=o: linalg.matrix_norm(a, ord=o), lambda o=o: np.linalg.norm(A, o, axis=(-2, -1)))
       for o in (1, -1, math.inf, -math.inf)},
    "matrix_norm-keepdims": (lambda a, b, v, w: linalg.matrix_norm(a, ord=1, keepdims=True),
                             lambda: np.linalg.norm(A, 1, axis=(-2, -1), keepdims=True)),
}  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
def test_values_match_numpy(device: str) -> None:
    tensors = [vkml.tensor(x, device=device) for x in (A, B, V, W)]
    outs = {name: f(*tensors) for name, (f, _) in CASES.items()}
    vkml.realize(list(outs.values()))
    for name, (_, want) in CASES.items():
        got, expected = outs[name].numpy(), np.asarray(want(), np.float32)
        assert got.shape == expected.shape, (name, got.shape, expected.shape)
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5, err_msg=name)


def test_the_sums_are_the_same_bits_on_every_device() -> None:
    """trace, the norms and vecdot are pairwise sums of exact products: the reference's bits."""
    fns = [lambda v, a: linalg.trace(a), lambda v, a: linalg.vector_norm(v, ord=1),
           lambda v, a: linalg.matrix_norm(a, ord=math.inf), lambda v, a: linalg.vecdot(v, v)]  # fmt: skip
    want = [
        f(vkml.tensor(V, device="reference"), vkml.tensor(A, device="reference")).numpy()
        for f in fns
    ]
    got = [f(vkml.tensor(V), vkml.tensor(A)).numpy() for f in fns]
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()


def test_norm_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = vkml.tensor(A.astype(np.float64), requires_grad=True)
    (
        linalg.vector_norm(x, axis=-1).sum() + linalg.matrix_norm(x).sum() + linalg.trace(x).sum()
    ).backward()
    t = torch.tensor(A.astype(np.float64), requires_grad=True)
    (torch.linalg.vector_norm(t, dim=-1).sum() + torch.linalg.matrix_norm(t).sum()
     + torch.diagonal(t, dim1=-2, dim2=-1).sum()).backward()  # fmt: skip
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_integer_trace_and_vecdot_keep_their_dtype() -> None:
    m = vkml.tensor(np.arange(9, dtype=np.int32).reshape(3, 3))
    assert linalg.trace(m).dtype == vkml.int32 and int(linalg.trace(m).item()) == 12
    assert linalg.vecdot(m, m).dtype == vkml.int32
