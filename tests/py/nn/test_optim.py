"""Optimisers (``vkml/nn/optim.py``): SGD, Adam and AdamW steps against PyTorch 2.13, one
invocation per step with a compile-cache hit from step 2, parameters rebound to fresh data
nodes (graphs never grow), ``.grad`` semantics with and without a closure, bad input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import vkml
from vkml import nn

RNG = np.random.default_rng(23)
X = RNG.normal(size=(16, 5)).astype(np.float32)
Y = RNG.integers(0, 3, 16).astype(np.int64)
TOL = {"rtol": 2e-5, "atol": 2e-6}


def mlp(device: vkml.Device = vkml.cpu, seed: int = 0) -> nn.Sequential:
    keys = vkml.random.split(vkml.random.key(seed, device=device), 2)
    return nn.Sequential(nn.Linear(5, 7, key=keys[0]), nn.ReLU(), nn.Linear(7, 3, key=keys[1]))


def ce_of(model: nn.Module, x: vkml.Tensor, y: vkml.Tensor) -> Callable[[], vkml.Tensor]:
    """The closure of a step: the cross-entropy of ``model`` on ``(x, y)``."""
    return lambda: nn.cross_entropy(model(x), y)


def torch_twin(model: nn.Sequential) -> Any:
    torch = pytest.importorskip("torch")
    twin = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    state = {k: torch.from_numpy(v) for k, v in model.state_dict().items()}
    twin.load_state_dict(state)
    return twin


def train_both(
    make_vkml: Callable[[list[vkml.Tensor]], nn.Optimizer],
    make_torch: Callable[[Any], Any],
    steps: int = 3,
) -> None:
    """``steps`` steps of the same optimiser in vkml and PyTorch; compare loss and weights."""
    torch = pytest.importorskip("torch")
    model = mlp()
    twin = torch_twin(model)
    opt, topt = make_vkml(model.parameters()), make_torch(twin.parameters())
    x, y = vkml.tensor(X), vkml.tensor(Y)
    xt, yt = torch.from_numpy(X), torch.from_numpy(Y)
    for step in range(steps):
        loss = opt.step(lambda: nn.cross_entropy(model(x), y))
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(twin(xt), yt)
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tloss.item(), **TOL, err_msg=f"loss, step {step}")
        for name, value in model.state_dict().items():
            want = twin.state_dict()[name].numpy()
            np.testing.assert_allclose(value, want, **TOL, err_msg=f"{name}, step {step + 1}")


@pytest.mark.parametrize("momentum, weight_decay, nesterov", [
    (0.0, 0.0, False), (0.9, 0.0, False), (0.9, 0.01, True), (0.5, 0.1, False),
])  # fmt: skip
def test_sgd_steps_match_torch(momentum: float, weight_decay: float, nesterov: bool) -> None:
    torch = pytest.importorskip("torch")
    train_both(
        lambda p: nn.SGD(
            p, lr=0.1, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov
        ),
        lambda p: torch.optim.SGD(
            p, lr=0.1, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov
        ),
    )


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
def test_adam_steps_match_torch(weight_decay: float) -> None:
    torch = pytest.importorskip("torch")
    train_both(
        lambda p: nn.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=weight_decay),
        lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=weight_decay),
        steps=4,
    )


def test_adamw_steps_match_torch() -> None:
    torch = pytest.importorskip("torch")
    train_both(
        lambda p: nn.AdamW(p, lr=0.01, weight_decay=0.1),
        lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1),
        steps=4,
    )


def test_adam_bias_corrections_track_one_minus_beta_to_the_t() -> None:
    model = mlp()
    opt = nn.Adam(model.parameters(), betas=(0.9, 0.999))
    x, y = vkml.tensor(X), vkml.tensor(Y)
    for _ in range(50):
        opt.step(lambda: nn.cross_entropy(model(x), y))
    np.testing.assert_allclose(opt.shared["bias_correction1"].item(), 1 - 0.9**50, rtol=1e-6)
    np.testing.assert_allclose(opt.shared["bias_correction2"].item(), 1 - 0.999**50, rtol=1e-6)


def test_step_is_one_invocation_and_hits_the_cache_from_step_two() -> None:
    model = mlp(seed=1)
    opt = nn.Adam(model.parameters(), lr=0.01)
    deltas = []
    for step in range(5):
        x = vkml.tensor(RNG.normal(size=(16, 5)).astype(np.float32))  # new data every step
        y = vkml.tensor(RNG.integers(0, 3, 16))
        before = vkml.stats()
        opt.step(ce_of(model, x, y))
        after = vkml.stats()
        deltas.append(
            {k: after[k] - before[k] for k in ("invocations", "compiles", "cache_hits_memory")}
        )
    assert all(d["invocations"] == 1 for d in deltas)
    assert deltas[1:] == [{"invocations": 1, "compiles": 0, "cache_hits_memory": 1}] * 4


def test_step_rebinds_parameters_to_fresh_leaves_without_history() -> None:
    model = mlp(seed=2)
    params = model.parameters()
    opt = nn.SGD(params, lr=0.1, momentum=0.9)
    x, y = vkml.tensor(X), vkml.tensor(Y)
    before = [p.numpy() for p in params]
    loss = opt.step(lambda: nn.cross_entropy(model(x), y))
    assert model.parameters() == params  # the same tensor objects, new values
    for p, old in zip(params, before):
        assert p.node.op == "data" and p.node.src == () and p.node.computed and p.is_leaf
        assert not np.array_equal(p.numpy(), old)
    for buf in (s["momentum_buffer"] for s in opt.state):
        assert buf.node.op == "data" and buf.node.src == ()
    assert loss is not None and loss.node.src == () and loss.is_realized


def test_lr_change_takes_effect_without_recompiling() -> None:
    model = mlp(seed=3)
    opt = nn.SGD(model.parameters(), lr=0.1)
    x, y = vkml.tensor(X), vkml.tensor(Y)
    opt.step(lambda: nn.cross_entropy(model(x), y))
    opt.lr = 0.0
    weights = [p.numpy() for p in model.parameters()]
    before = vkml.stats()["compiles"]
    opt.step(lambda: nn.cross_entropy(model(x), y))
    assert vkml.stats()["compiles"] == before
    assert all(np.array_equal(p.numpy(), w) for p, w in zip(model.parameters(), weights))


def test_step_without_closure_uses_grad_from_backward() -> None:
    model = mlp(seed=4)
    params = model.parameters()
    opt = nn.SGD(params, lr=0.5)
    x, y = vkml.tensor(X), vkml.tensor(Y)
    nn.cross_entropy(model(x), y).backward()
    grads = [p.grad.numpy() for p in params]
    weights = [p.numpy() for p in params]
    assert opt.step() is None
    for p, w, g in zip(params, weights, grads):
        np.testing.assert_allclose(p.numpy(), w - np.float32(0.5) * g, rtol=1e-6, atol=1e-7)
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_step_with_closure_leaves_grad_alone() -> None:
    model = mlp(seed=5)
    opt = nn.SGD(model.parameters(), lr=0.1)
    first = model.parameters()[0]
    first.grad = vkml.ones(first.shape)
    opt.step(lambda: nn.cross_entropy(model(vkml.tensor(X)), vkml.tensor(Y)))
    assert first.grad is not None and first.grad.numpy().min() == 1.0


def test_step_without_closure_or_grads_is_a_clear_error() -> None:
    opt = nn.SGD(mlp(seed=6).parameters(), lr=0.1)
    with pytest.raises(vkml.GradientError, match="no parameter has a .grad"):
        opt.step()


def test_a_parameter_the_loss_ignores_gets_a_zero_gradient() -> None:
    model = mlp(seed=7)
    unused = vkml.tensor([1.0, 2.0], requires_grad=True)
    opt = nn.SGD([*model.parameters(), unused], lr=0.1, weight_decay=0.5)
    opt.step(lambda: nn.cross_entropy(model(vkml.tensor(X)), vkml.tensor(Y)))
    np.testing.assert_allclose(unused.numpy(), [1.0 - 0.05, 2.0 - 0.1], rtol=1e-6)


def test_reference_step_agrees_with_cpu_step() -> None:
    results = {}
    for device in (vkml.cpu, vkml.reference):
        model = mlp(device, seed=8)
        opt = nn.Adam(model.parameters(), lr=0.01)
        x, y = vkml.tensor(X, device=device), vkml.tensor(Y, device=device)
        for _ in range(2):
            opt.step(ce_of(model, x, y))
        results[device.name] = model.state_dict()
    for name, value in results["reference"].items():
        np.testing.assert_allclose(results["cpu"][name], value, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("params, error, message", [
    ([], ValueError, "empty parameter list"),
    ([vkml.tensor([1, 2])], vkml.DTypeError, "must be floating-point, got int64"),
    ([vkml.zeros(2), vkml.zeros(2, device=vkml.reference)], vkml.DeviceError,
     "different devices: cpu and reference"),
    ([np.zeros(2)], TypeError, "must be vkml Tensors, got ndarray"),
])  # fmt: skip
def test_optimizer_rejects_bad_parameters(params: list[Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        nn.SGD(params, lr=0.1)


def test_bad_hyperparameters_are_rejected() -> None:
    with pytest.raises(ValueError, match="nesterov needs a positive momentum"):
        nn.SGD([vkml.zeros(2)], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match=r"betas\[1\]=1.0 must be in \[0, 1\)"):
        nn.Adam([vkml.zeros(2)], betas=(0.9, 1.0))
