"""Autograd (``vkml/frontend/autograd.py``, the gradient rules in ``vkml/ops``): every op's
gradient rule against float64 central finite differences on reference and cpu, composite cases
and tie/NaN rules against PyTorch 2.13, one invocation per forward+backward, ``.grad``
accumulation, ``no_grad``, errors, and a 100,000-node chain."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import vkml
from vkml.frontend import functions, grad_mode
from vkml.frontend.control import fusion_stop
from vkml.ops.registry import OPS

Fn = Callable[..., vkml.Tensor]
RNG = np.random.default_rng(5)


def signed(*shape: int) -> np.ndarray:
    """Values in +-[0.2, 1.5]: away from the kinks of abs, relu and friends at 0."""
    return RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.2, 1.5, shape)


def positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, shape)


def apart(*shape: int) -> np.ndarray:
    """Distinct values at least 0.1 apart, shuffled: no ties for max, min and amax."""
    values = np.linspace(-1.5, 1.5, int(np.prod(shape)))
    return RNG.permutation(values).reshape(shape)


MASK = np.array([[True, False, True], [False, True, True]])
# repeated, negative and out-of-order indices along axis 1 of a (3, 4) tensor
PICKS = np.array([[0, 3, 3, -1, 1], [2, 2, 0, 1, -4], [-1, 0, 2, 2, 2]])

# (id, the op whose rule it checks, fn of tensors, inputs); fn's output is weighted by fixed
# random weights and summed, so every element of the gradient matters.
CASES: list[tuple[str, str, Fn, list[np.ndarray]]] = [
    ("add-broadcast", "add", lambda a, b: a + b, [signed(3, 1), signed(4)]),
    ("sub-broadcast", "sub", lambda a, b: a - b, [signed(2, 3), signed(3)]),
    ("mul-broadcast", "mul", lambda a, b: a * b, [signed(2, 3), signed(2, 1)]),
    ("div-broadcast", "div", lambda a, b: a / b, [signed(2, 3), positive(3)]),
    ("pow", "pow", lambda a, b: a**b, [positive(2, 3), signed(2, 3)]),
    ("pow-scalar-exponent", "pow", lambda a: a**3.0, [signed(2, 3)]),
    ("maximum", "maximum", lambda a, b: vkml.maximum(a, b), list(apart(2, 2, 3))),
    (
        "minimum-broadcast",
        "minimum",
        lambda a, b: vkml.minimum(a, b),
        [apart(2, 3), apart(3) + 0.05],
    ),
    (
        "where",
        "where",
        lambda a, b: vkml.where(vkml.tensor(MASK, device=a.device), a, b),
        [signed(2, 3), signed(3)],
    ),
    ("neg", "neg", lambda a: -a, [signed(2, 3)]),
    ("abs", "abs", lambda a: abs(a), [signed(2, 3)]),
    ("relu", "relu", lambda a: a.relu(), [signed(2, 3)]),
    ("exp", "exp", lambda a: a.exp(), [signed(2, 3)]),
    ("log", "log", lambda a: a.log(), [positive(2, 3)]),
    ("sqrt", "sqrt", lambda a: a.sqrt(), [positive(2, 3)]),
    ("rsqrt", "rsqrt", lambda a: a.rsqrt(), [positive(2, 3)]),
    ("tanh", "tanh", lambda a: a.tanh(), [signed(2, 3)]),
    ("sin", "sin", lambda a: a.sin(), [signed(2, 3)]),
    ("cos", "cos", lambda a: a.cos(), [signed(2, 3)]),
    ("sigmoid", "sigmoid", lambda a: a.sigmoid(), [signed(2, 3)]),
    ("erf", "erf", lambda a: vkml.erf(a), [signed(2, 3)]),
    ("gelu", "gelu", lambda a: a.gelu(), [signed(2, 3)]),
    ("expm1", "expm1", lambda a: vkml.expm1(a), [signed(2, 3)]),
    ("log1p", "log1p", lambda a: vkml.log1p(a), [positive(2, 3)]),
    ("tan", "tan", lambda a: vkml.tan(a), [signed(2, 3) * 0.3]),
    ("asin", "asin", lambda a: vkml.asin(a), [signed(2, 3) * 0.3]),
    ("acos", "acos", lambda a: vkml.acos(a), [signed(2, 3) * 0.3]),
    ("atan", "atan", lambda a: vkml.atan(a), [signed(2, 3)]),
    ("sinh", "sinh", lambda a: vkml.sinh(a), [signed(2, 3)]),
    ("cosh", "cosh", lambda a: vkml.cosh(a), [signed(2, 3)]),
    ("asinh", "asinh", lambda a: vkml.asinh(a), [signed(2, 3)]),
    ("acosh", "acosh", lambda a: vkml.acosh(a), [positive(2, 3) + 1.5]),
    ("atanh", "atanh", lambda a: vkml.atanh(a), [signed(2, 3) * 0.3]),
    ("floor_divide", "floor_divide", lambda a, b: (a // b) * a, [signed(2, 3) * 3.1, positive(3)]),
    ("remainder", "remainder", lambda a, b: a % b, [signed(2, 3) * 3.1, positive(3)]),
    ("atan2", "atan2", lambda a, b: vkml.atan2(a, b), [signed(2, 3), positive(3)]),
    # piecewise constant: a zero gradient, and finite differences agree away from the jumps
    *[
        (op, op, lambda a, op=op: getattr(a, op)() * a, [signed(2, 3) * 2.5])
        for op in ("floor", "ceil", "trunc", "round", "sign")
    ],
    ("astype-to-float32", "astype", lambda a: a.astype(vkml.float32) * 3.0, [signed(2, 3)]),
    (
        "reshape",
        "reshape",
        lambda a: a.reshape(3, 4) * vkml.arange(4.0, device=a.device),
        [signed(2, 6)],
    ),
    ("permute", "permute", lambda a: a.permute(2, 0, 1), [signed(2, 3, 4)]),
    ("broadcast_to", "broadcast_to", lambda a: a.broadcast_to(2, 3, 4), [signed(3, 1)]),
    ("slice-reversed-strided", "slice", lambda a: a[4:0:-2, 1::3], [signed(5, 6)]),
    ("slice-offset", "slice", lambda a: a[1:3, 2], [signed(4, 3)]),
    (
        "concatenate",
        "concatenate",
        lambda a, b: vkml.concatenate([a, b, a], axis=1),
        [signed(2, 3), signed(2, 2)],
    ),
    ("matmul-batched-broadcast", "matmul", lambda a, b: a @ b, [signed(2, 3, 4), signed(4, 5)]),
    ("matmul-vector", "matmul", lambda a, b: a @ b, [signed(4), signed(2, 4, 3)]),
    (
        "conv-grouped-strided",
        "conv",
        lambda a, b: vkml.conv(a, b, stride=2, padding=(1, (0, 2)), dilation=(1, 2), groups=2),
        [signed(2, 4, 5, 6), signed(4, 2, 2, 2)],
    ),
    (
        "conv-transpose",
        "conv",
        lambda a, b: vkml.conv_transpose(a, b, stride=2, padding=1, output_padding=1),
        [signed(1, 2, 4), signed(2, 3, 3)],
    ),
    ("sum-keepdims", "sum", lambda a: a.sum(axis=(0, 2), keepdims=True), [signed(2, 3, 4)]),
    ("mean", "sum", lambda a: a.mean(axis=1), [signed(2, 3, 4)]),
    ("cumsum", "cumsum", lambda a: a.cumsum(axis=1), [signed(2, 5, 3)]),
    (
        "fusion_stop",
        "fusion_stop",
        lambda a, b: fusion_stop(a * b) * a,
        [signed(2, 3), signed(2, 3)],
    ),
    ("prod", "prod", lambda a: a.prod(axis=1), [signed(2, 3, 4)]),
    # a slice with one zero (the product of the others flows to it) and one with two (none)
    (
        "prod-zeros",
        "prod",
        lambda a: a.prod(axis=1),
        [np.array([[0.5, 0.0, -1.5, 2.0], [0.0, 1.25, 0.0, 0.75], [1.5, -0.5, 0.25, 1.0]])],
    ),
    (
        "take_along_axis",
        "take_along_axis",
        lambda a: vkml.take_along_axis(a, vkml.tensor(PICKS, device=a.device), axis=1),
        [signed(3, 4)],
    ),
    (
        "scatter_add",
        "scatter_add",
        lambda a: functions.scatter_add(a, vkml.tensor(PICKS, device=a.device), 1, 4),
        [signed(3, 5)],
    ),
    # x[i, j]: a position read at run time (index_at), and its transpose place_at
    ("index_at", "index_at", lambda a: a[-2] * a[1, 3], [signed(3, 4)]),
    (
        "place_at",
        "place_at",
        lambda a: functions.place_at(a, vkml.tensor(np.int32(2), device=a.device), 0, 4),
        [signed(1, 5)],
    ),
    # sort is a gather at argsort's positions: its gradient goes back to where each came from
    ("sort", "take_along_axis", lambda a: vkml.sort(a, axis=0, descending=True), [apart(3, 4)]),
    ("amax", "amax", lambda a: a.amax(axis=1), [apart(3, 4)]),
    ("amin-all", "amin", lambda a: a.amin(), [apart(3, 4)]),
]

# float64 floor_divide and remainder do not link on cpu (IREE 3.13 has no float64 fmod): those
# cases run in float32 there.
FLOAT32_ON_CPU = {op for op in OPS if not vkml.cpu.supports(op, vkml.float64)}
NO_GRADIENT = {"eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "argsort", "full"} | {
    "scalar",
    "arange",
    # integer-only ops, and bitcast (bits are not a differentiable function of a value)
    "bitcast",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    # no rule yet: reverse mode through regions comes with the graph builder (issue 10);
    # test_control pins the GradientError
    "cond",
    "while",
    "result",
}


def weighted_loss(fn: Fn, tensors: list[vkml.Tensor]) -> vkml.Tensor:
    out = fn(*tensors)
    weights = np.random.default_rng(11).normal(size=out.shape)
    return (out * vkml.tensor(weights, dtype=out.dtype, device=out.device)).sum()


def finite_differences(fn: Fn, arrays: list[np.ndarray], h: float) -> list[np.ndarray]:
    """Central differences of the weighted loss, in float64 on the reference device."""

    def value(xs: list[np.ndarray]) -> float:
        return weighted_loss(fn, [vkml.tensor(x, device="reference") for x in xs]).item()

    grads = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            up, down = [x.copy() for x in arrays], [x.copy() for x in arrays]
            up[i][j] += h
            down[i][j] -= h
            g[j] = (value(up) - value(down)) / (2 * h)
        grads.append(g)
    return grads


@pytest.mark.parametrize("device", ["reference", "cpu"])
@pytest.mark.parametrize(("name", "op", "fn", "arrays"), CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(
    device: str, name: str, op: str, fn: Fn, arrays: list[np.ndarray]
) -> None:
    float32 = device == "cpu" and op in FLOAT32_ON_CPU
    dtype = vkml.float32 if float32 else vkml.float64
    h = 1e-2 if op == "astype" else 1e-6
    rtol, atol = (1e-4, 1e-5) if float32 or op == "astype" else (1e-6, 1e-8)
    tensors = [vkml.tensor(a, dtype=dtype, device=device) for a in arrays]
    grads = vkml.grad(lambda *xs: weighted_loss(fn, list(xs)), argnums=tuple(range(len(arrays))))(
        *tensors
    )
    vkml.realize(*grads)
    for i, (got, want) in enumerate(zip(grads, finite_differences(fn, arrays, h))):
        assert got.dtype == dtype and got.shape == want.shape, f"{name}: argument {i}"
        np.testing.assert_allclose(
            got.numpy(), want, rtol=rtol, atol=atol, err_msg=f"{name}: argument {i}"
        )


def test_every_differentiable_op_has_a_rule_and_a_finite_difference_case() -> None:
    with_rule = {name for name, d in OPS.items() if d.gradient is not None}
    assert set(OPS) - with_rule == NO_GRADIENT
    assert {op for _, op, _, _ in CASES} == with_rule


# -- against PyTorch -------------------------------------------------------------------------
TORCH_DEVICES = [("reference", vkml.float64, 1e-10), ("cpu", vkml.float32, 1e-4)]


def vkml_grads(fn: Fn, arrays: list[np.ndarray], device: str, dtype: Any) -> list[np.ndarray]:
    """``backward()`` through requires_grad leaves, as a PyTorch user writes it."""
    leaves = [vkml.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    fn(*leaves).backward()
    return [leaf.grad.numpy() for leaf in leaves]


def torch_grads(fn: Callable[..., Any], arrays: list[np.ndarray]) -> list[np.ndarray]:
    torch = pytest.importorskip("torch")
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    fn(*leaves).backward()
    return [leaf.grad.numpy() for leaf in leaves]


def linear_vkml(x: Any, w: Any, b: Any) -> Any:
    # W is (out, in); transposed, then broadcast over the batch: the seed-000 case
    y = x @ w.transpose().broadcast_to((x.shape[0], w.shape[1], w.shape[0])) + b
    return (y.tanh() * y).sum()


def linear_torch(x: Any, w: Any, b: Any) -> Any:
    y = x @ w.T.expand(x.shape[0], w.shape[1], w.shape[0]) + b
    return (y.tanh() * y).sum()


def views_vkml(x: Any) -> Any:
    y = x.permute(2, 0, 1).reshape(4, 6)[::-1, 1::2].expand(5, 4, 3)
    return (y * vkml.arange(3.0, device=x.device, dtype=x.dtype) * y).sum()


def views_torch(x: Any) -> Any:
    import torch

    y = x.permute(2, 0, 1).reshape(4, 6).flip(0)[:, 1::2].expand(5, 4, 3)
    return (y * torch.arange(3.0, dtype=x.dtype) * y).sum()


ONE_HOT = np.eye(4)[[0, 3, 1, 1, 2, 0, 3, 2]]


def mlp_vkml(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    logits = (x @ w1 + b1).relu() @ w2 + b2
    one_hot = vkml.tensor(ONE_HOT, dtype=x.dtype, device=x.device)
    return -(logits.log_softmax(axis=1) * one_hot).sum(axis=1).mean()


def mlp_torch(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    import torch

    logits = (x @ w1 + b1).relu() @ w2 + b2
    return torch.nn.functional.cross_entropy(logits, torch.tensor(ONE_HOT.argmax(1)))


def layer_norm_vkml(x: Any, gamma: Any, beta: Any) -> Any:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2.0).mean(axis=-1, keepdims=True)
    y = (x - mu) * (var + 1e-5).rsqrt() * gamma + beta
    return (y * y.sin()).sum()


def layer_norm_torch(x: Any, gamma: Any, beta: Any) -> Any:
    import torch

    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps=1e-5)
    return (y * y.sin()).sum()


def conv_net_vkml(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
    y = vkml.conv(x, w1, stride=2, padding=1, bias=b1).relu()
    z = vkml.conv_transpose(y, w2, stride=2, output_padding=1, groups=2)
    return (z * z.sin()).sum()


def conv_net_torch(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
    import torch

    y = torch.nn.functional.conv2d(x, w1, b1, stride=2, padding=1).relu()
    z = torch.nn.functional.conv_transpose2d(y, w2, stride=2, output_padding=1, groups=2)
    return (z * z.sin()).sum()


COMPOSITE = [
    (
        "linear-transpose-broadcast",
        linear_vkml,
        linear_torch,
        [signed(2, 5, 4), signed(3, 4), signed(3)],
    ),
    ("view-chain", views_vkml, views_torch, [signed(2, 3, 4)]),
    (
        "softmax-cross-entropy-mlp",
        mlp_vkml,
        mlp_torch,
        [signed(8, 6), signed(6, 10), signed(10), signed(10, 4), signed(4)],
    ),
    ("layer-norm", layer_norm_vkml, layer_norm_torch, [signed(4, 6), signed(6), signed(6)]),
    (
        "conv-net",
        conv_net_vkml,
        conv_net_torch,
        [signed(2, 3, 7, 6), signed(4, 3, 3, 3), signed(4), signed(4, 1, 2, 3)],
    ),
]


@pytest.mark.parametrize(("device", "dtype", "tol"), TORCH_DEVICES, ids=["reference", "cpu"])
@pytest.mark.parametrize(
    ("name", "ours", "theirs", "arrays"), COMPOSITE, ids=[c[0] for c in COMPOSITE]
)
def test_composite_gradient_matches_torch(
    device: str, dtype: Any, tol: float, name: str, ours: Fn, theirs: Any, arrays: list[np.ndarray]
) -> None:
    want = torch_grads(theirs, arrays)
    got = vkml_grads(ours, arrays, device, dtype)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{name}: argument {i} has shape {g.shape}, torch {w.shape}"
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{name}: argument {i}")


NAN = float("nan")
TIES = np.array([[1.0, 3.0, 3.0], [2.0, NAN, 1.0], [0.0, 0.0, 0.0]])

# Where the rule is PyTorch's choice, not calculus: ties, kinks and NaN.
EDGES = [
    (
        "maximum-ties-and-nan",
        lambda a, b: vkml.maximum(a, b),
        lambda a, b: a.maximum(b),
        [np.array([1.0, 2.0, NAN, 1.0, NAN]), np.array([1.0, 1.0, 1.0, NAN, NAN])],
    ),
    (
        "minimum-ties-and-nan",
        lambda a, b: vkml.minimum(a, b),
        lambda a, b: a.minimum(b),
        [np.array([1.0, 2.0, NAN, 1.0, -0.0]), np.array([1.0, 1.0, 1.0, NAN, 0.0])],
    ),
    (
        "relu-at-zero-and-nan",
        lambda a: a.relu(),
        lambda a: a.relu(),
        [np.array([-1.0, 0.0, -0.0, 1.0, NAN])],
    ),
    (
        "abs-at-zero-and-nan",
        lambda a: abs(a),
        lambda a: a.abs(),
        [np.array([-1.0, 0.0, -0.0, 1.0, NAN])],
    ),
    ("amax-ties-and-nan", lambda a: a.amax(axis=1), lambda a: a.amax(dim=1), [TIES]),
    ("amax-all-ties", lambda a: a.amax(), lambda a: a.amax(), [np.array([[1.0, 3.0], [3.0, 3.0]])]),
    ("amin-ties-and-nan", lambda a: a.amin(axis=0), lambda a: a.amin(dim=0), [TIES]),
    (
        "pow-at-zero-base",
        lambda a, b: a**b,
        lambda a, b: a**b,
        [np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 2.0, -1.0, 3.0])],
    ),
    ("sqrt-at-zero", lambda a: a.sqrt(), lambda a: a.sqrt(), [np.array([0.0, 4.0])]),
]


@pytest.mark.parametrize(("device", "dtype", "tol"), TORCH_DEVICES, ids=["reference", "cpu"])
@pytest.mark.parametrize(("name", "ours", "theirs", "arrays"), EDGES, ids=[c[0] for c in EDGES])
def test_tie_and_nan_gradients_match_torch(
    device: str, dtype: Any, tol: float, name: str, ours: Fn, theirs: Any, arrays: list[np.ndarray]
) -> None:
    weights = np.arange(1.0, 6.0)  # distinct weights: a gradient sent to the wrong place shows
    want = torch_grads(
        lambda *xs: (theirs(*xs) * _like(xs[0], weights, theirs(*xs).shape)).sum(), arrays
    )
    got = vkml_grads(
        lambda *xs: (ours(*xs) * _like(xs[0], weights, ours(*xs).shape)).sum(),
        arrays,
        device,
        dtype,
    )
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(
            g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=f"{name}: argument {i}"
        )


def _like(x: Any, weights: np.ndarray, shape: tuple[int, ...]) -> Any:
    values = weights[: int(np.prod(shape))].reshape(shape)
    if isinstance(x, vkml.Tensor):
        return vkml.tensor(values, dtype=x.dtype, device=x.device)
    import torch

    return torch.tensor(values, dtype=x.dtype)


# -- the engine --------------------------------------------------------------------------------
def small_mlp(device: str) -> tuple[vkml.Tensor, list[vkml.Tensor]]:
    rng = np.random.default_rng(0)
    params = [
        vkml.tensor(rng.normal(size=s), dtype="float32", device=device, requires_grad=True)
        for s in [(6, 8), (8,), (8, 3), (3,)]
    ]
    w1, b1, w2, b2 = params
    x = vkml.tensor(rng.normal(size=(5, 6)), dtype="float32", device=device)
    logits = (x @ w1 + b1).gelu() @ w2 + b2
    one_hot = vkml.tensor(np.eye(3)[[0, 2, 1, 1, 0]], dtype="float32", device=device)
    return -(logits.log_softmax() * one_hot).sum(axis=1).mean(), params


def test_forward_and_backward_realize_as_one_invocation() -> None:
    loss, params = small_mlp("cpu")
    assert not loss.is_realized
    vkml.reset_stats()
    loss.backward()
    assert vkml.stats()["invocations"] == 1
    assert loss.is_realized and all(p.grad is not None and p.grad.is_realized for p in params)
    value = loss.item()  # realized with the gradients: no second invocation
    assert vkml.stats()["invocations"] == 1
    ref_loss, ref_params = small_mlp("reference")
    ref_loss.backward()
    assert value == pytest.approx(ref_loss.item(), rel=1e-5)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p.grad.numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_backward_after_the_forward_was_realized_still_reaches_the_leaves() -> None:
    x = vkml.tensor([1.0, 2.0, 3.0], device="reference", requires_grad=True)
    y = (x * x).sum()
    assert y.item() == 14.0  # the realized output keeps its sources
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_grad_accumulates_across_backward_calls_and_has_no_history() -> None:
    x = vkml.tensor([1.0, -2.0], device="reference", requires_grad=True)
    (x * x * x).sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]
    (x * x * x).sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert x.grad.node.src == () and not x.grad.requires_grad
    x.grad = None
    (x * 5.0).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_backward_with_an_explicit_grad_weights_the_output() -> None:
    x = vkml.tensor([[1.0, 2.0], [3.0, 4.0]], device="reference", requires_grad=True)
    (x * x).backward(grad=np.array([[1.0, 0.0], [0.5, -1.0]]))
    assert x.grad.tolist() == [[2.0, 0.0], [3.0, -8.0]]


def test_gradient_takes_the_dtype_and_shape_of_its_source() -> None:
    x = vkml.tensor([1.0, 2.0], dtype="float32", device="reference", requires_grad=True)
    w = vkml.tensor([[3.0], [4.0]], dtype="float64", device="reference", requires_grad=True)
    (x * w).sum().backward()  # float32 * float64 -> float64, (2,) * (2, 1) -> (2, 2)
    assert (x.grad.dtype, x.grad.tolist()) == (vkml.float32, [7.0, 7.0])
    assert (w.grad.dtype, w.grad.tolist()) == (vkml.float64, [[3.0], [3.0]])


def test_requires_grad_follows_the_graph() -> None:
    x = vkml.tensor([1.0, 2.0], device="reference", requires_grad=True)
    c = vkml.tensor([1.0, 2.0], device="reference")
    assert x.requires_grad and x.is_leaf and (x * c).requires_grad
    assert not c.requires_grad and not (c * 2.0).requires_grad
    assert not (x > 1.0).requires_grad and not x.argmax().requires_grad
    assert not x.detach().requires_grad
    copy = vkml.tensor(c, requires_grad=True)  # a new leaf, as torch.tensor(t) copies
    assert copy.is_leaf and not c.requires_grad
    x.requires_grad_(False)
    assert not (x * c).requires_grad


def test_no_grad_makes_constants_and_works_as_a_decorator() -> None:
    x = vkml.tensor([1.0, 2.0], device="reference", requires_grad=True)
    with vkml.no_grad():
        frozen = x * 10.0
    assert not frozen.requires_grad
    (x * x + frozen).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]  # nothing through the no_grad term

    @vkml.no_grad()
    def scaled(t: vkml.Tensor) -> vkml.Tensor:
        return t * 3.0

    assert not scaled(x).requires_grad and (x * 3.0).requires_grad
    with vkml.no_grad():  # a function transform records its own graph, as torch.func.grad
        g = vkml.grad(lambda t: (t * t).sum())(x)
    assert g.tolist() == [2.0, 4.0]


def test_no_grad_is_per_thread() -> None:
    x = vkml.tensor([1.0], device="reference", requires_grad=True)
    inside, release = threading.Event(), threading.Event()

    def hold_no_grad() -> None:
        with vkml.no_grad():
            inside.set()
            release.wait(10)

    other = threading.Thread(target=hold_no_grad)
    other.start()
    try:
        assert inside.wait(10)
        assert (x * 2.0).requires_grad  # another thread's no_grad() does not reach here
    finally:
        release.set()
        other.join()
    assert grad_mode.NO_GRAD_ACTIVE == 0


def test_detach_stops_the_gradient() -> None:
    x = vkml.tensor([3.0], device="reference", requires_grad=True)
    y = x * x
    (y * y.detach()).sum().backward()  # d/dx (x^2 * const 9) = 18 x
    assert x.grad.tolist() == [54.0]


def test_functional_grad_is_lazy_and_takes_argnums() -> None:
    a = vkml.tensor([1.0, 2.0], device="reference")
    b = vkml.tensor([3.0, 4.0], device="reference")
    f = lambda p, q: (p * p * q).sum()
    value, (ga, gb) = vkml.value_and_grad(f, argnums=(0, 1))(a, b)
    assert not ga.is_realized
    vkml.reset_stats()
    vkml.realize(value, ga, gb)
    assert vkml.stats()["invocations"] == 1
    assert (value.item(), ga.tolist(), gb.tolist()) == (19.0, [6.0, 16.0], [1.0, 4.0])
    assert vkml.grad(f, argnums=-1)(a, b).tolist() == [1.0, 4.0]
    assert vkml.grad(lambda p, q: q.sum(), argnums=0)(a, b).tolist() == [0.0, 0.0]
    second = vkml.grad(lambda p: vkml.grad(lambda q: (q * q * q).sum())(p).sum())(a)
    assert second.tolist() == [6.0, 12.0]


def test_backward_of_a_non_scalar_without_grad_is_refused() -> None:
    x = vkml.tensor([1.0, 2.0], device="reference", requires_grad=True)
    with pytest.raises(vkml.ShapeError, match=r"\(2,\).*backward\(grad=\.\.\.\)"):
        (x * 2.0).backward()
    with pytest.raises(vkml.ShapeError, match=r"\(3,\).*\(2,\)"):
        (x * 2.0).backward(grad=np.ones(3))
    with pytest.raises(vkml.ShapeError, match="one-element"):
        vkml.grad(lambda t: t * 2.0)(x)


def test_gradients_of_integer_tensors_are_refused() -> None:
    with pytest.raises(vkml.DTypeError, match="int64"):
        vkml.tensor([1, 2], device="reference", requires_grad=True)
    with pytest.raises(vkml.DTypeError, match="bool"):
        vkml.tensor([True], device="reference").requires_grad_()
    x = vkml.tensor([1.0, 2.0], device="reference", requires_grad=True)
    with pytest.raises(vkml.DTypeError, match="int64"):
        x.argmax().backward()
    with pytest.raises(vkml.DTypeError, match="int32"):
        vkml.grad(lambda t: t.sum())(vkml.tensor([1, 2], dtype="int32"))


def test_backward_without_a_leaf_is_refused() -> None:
    x = vkml.tensor([1.0, 2.0], device="reference")
    with pytest.raises(vkml.GradientError, match="requires_grad"):
        (x * x).sum().backward()


def test_backward_through_a_hundred_thousand_node_chain() -> None:
    x = vkml.tensor(np.float64(1.5), device="reference", requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    y.backward()  # iterative walks: no RecursionError
    want = 1.0
    for _ in range(100_000):
        want *= 1.0001  # the same products in the same order as the gradient chain
    assert x.grad.item() == want
    assert y.item() == pytest.approx(1.5 * want, rel=1e-12)
