"""The layers of a convolutional network (issue 31): Conv1d/2d/3d, pooling, Flatten,
BatchNorm1d/2d and GroupNorm against PyTorch's modules holding the same parameters (forward,
gradients, running averages, evaluation mode), in an eager and a compiled training step;
and the module-level key ``nn.manual_seed``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import vkml
from vkml import nn
from vkml.nn import keys

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(3)


def _copy_params(ours: nn.Module, theirs: Any) -> None:
    state = {k: torch.tensor(v) for k, v in ours.state_dict().items()}
    missing = theirs.load_state_dict(state, strict=False)
    assert not missing.unexpected_keys, missing


def _torch_model() -> Any:
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 6, 3, stride=(1, 2), groups=2),
        torch.nn.GroupNorm(3, 6), torch.nn.AvgPool2d(2, 1, 1), torch.nn.AdaptiveAvgPool2d((2, 1)),
        torch.nn.Flatten(), torch.nn.Linear(12, 3),
    )  # fmt: skip


def _model(device: str) -> nn.Sequential:
    key = vkml.random.key(5, device=device)
    k = vkml.random.split(key, 3)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, key=k[0]), nn.BatchNorm2d(4, device=device), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, stride=(1, 2), groups=2, key=k[1]),
        nn.GroupNorm(3, 6, device=device), nn.AvgPool2d(2, 1, 1), nn.AdaptiveAvgPool2d((2, 1)),
        nn.Flatten(), nn.Linear(12, 3, key=k[2]),
    )  # fmt: skip


@pytest.mark.parametrize("device", ["reference", "cpu"])
def test_a_small_cnn_trains_as_torchs_with_the_same_parameters(device: str) -> None:
    """Three SGD steps: losses, parameters and BatchNorm's running averages as PyTorch's
    (float32, within rounding); then evaluation mode's output."""
    model = _model(device)
    ref = _torch_model()
    _copy_params(model, ref)
    opt = nn.SGD(model.parameters(), lr=0.1)
    topt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x = RNG.standard_normal((5, 1, 8, 8)).astype(np.float32)
        y = RNG.integers(0, 3, 5)
        vx, vy = vkml.tensor(x, device=device), vkml.tensor(y, device=device)
        loss = opt.step(lambda vx=vx, vy=vy: nn.cross_entropy(model(vx), vy))
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(ref(torch.tensor(x)), torch.tensor(y))
        tloss.backward()
        topt.step()
        assert abs(loss.item() - tloss.item()) < 1e-5, step
    ours = model.state_dict()
    for name, value in ref.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        np.testing.assert_allclose(ours[name], value.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    model.eval()
    ref.eval()
    x = RNG.standard_normal((2, 1, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(model(vkml.tensor(x, device=device)).numpy(),
                               ref(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)  # fmt: skip


def test_a_compiled_step_updates_batch_norms_running_averages_as_the_eager_step() -> None:
    models = [_model("cpu"), _model("cpu")]
    opts = [nn.Adam(m.parameters(), lr=1e-2) for m in models]
    compiled = opts[1].compile_step(lambda x, y: nn.cross_entropy(models[1](x), y))
    for _ in range(3):
        x = vkml.tensor(RNG.standard_normal((4, 1, 8, 8)).astype(np.float32))
        y = vkml.tensor(RNG.integers(0, 3, 4))
        eager = opts[0].step(lambda x=x, y=y: nn.cross_entropy(models[0](x), y))
        assert compiled(x, y).item() == eager.item()
    for (name, a), (_, b) in zip(models[0].state_dict().items(), models[1].state_dict().items()):
        assert np.array_equal(a, b), name
    assert not np.array_equal(models[0].state_dict()["1.running_mean"], np.zeros(4))


def test_batch_norm_1d_and_conv_1d_3d_match_torch() -> None:
    x = RNG.standard_normal((6, 3, 5)).astype(np.float32)
    bn, tbn = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    np.testing.assert_allclose(
        bn(vkml.tensor(x)).numpy(), tbn(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    flat = x[:, :, 0]
    np.testing.assert_allclose(
        bn(vkml.tensor(flat)).numpy(),
        tbn(torch.tensor(flat)).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )
    for layer, theirs, shape in (
        (
            nn.Conv1d(3, 2, 2, stride=2, key=vkml.random.key(1)),
            torch.nn.Conv1d(3, 2, 2, stride=2),
            (2, 3, 7),
        ),
        (
            nn.Conv3d(2, 2, (1, 2, 2), padding="same", key=vkml.random.key(2)),
            torch.nn.Conv3d(2, 2, (1, 2, 2), padding="same"),
            (1, 2, 3, 4, 4),
        ),
    ):
        _copy_params(layer, theirs)
        v = RNG.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(
            layer(vkml.tensor(v)).numpy(),
            theirs(torch.tensor(v)).detach().numpy(),
            rtol=1e-5,
            atol=1e-5,
        )


def test_manual_seed_gives_layers_without_a_key_reproducible_parameters(monkeypatch: Any) -> None:
    monkeypatch.setattr(keys, "_HELD", [None])
    with pytest.raises(
        TypeError, match=r"Conv2d: give key=vkml.random.key\(seed\), or call vkml.nn.manual_seed"
    ):
        nn.Conv2d(1, 2, 3)

    def made() -> list[np.ndarray]:
        nn.manual_seed(7)
        layers = [nn.Conv2d(1, 2, 3), nn.Linear(4, 2), nn.Embedding(3, 2)]
        return [t.numpy() for layer in layers for t in layer.parameters()]

    first, again = made(), made()
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], nn.Conv2d(1, 2, 3).weight.numpy())  # the key moved on


def test_layers_refuse_bad_arguments_when_made_and_bad_inputs_when_called() -> None:
    key = vkml.random.key(0)
    with pytest.raises(ValueError, match="groups=2 must divide in_channels=3"):
        nn.Conv2d(3, 4, 3, groups=2, key=key)
    with pytest.raises(ValueError, match="stride=0"):
        nn.Conv2d(3, 4, 3, stride=0, key=key)
    with pytest.raises(ValueError, match="'same'"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same", key=key)
    with pytest.raises(ValueError, match="at most half"):
        nn.MaxPool2d(2, padding=2)
    with pytest.raises(
        vkml.ShapeError, match=r"Conv2d: expected an input \(N, 3, L0, L1\), got shape \(3, 8, 8\)"
    ):
        nn.Conv2d(3, 4, 3, key=key)(vkml.ones((3, 8, 8)))
    with pytest.raises(vkml.ShapeError, match="BatchNorm2d.*4 channels on axis 1"):
        nn.BatchNorm2d(4)(vkml.ones((2, 3, 4, 4)))
    with pytest.raises(vkml.ShapeError, match="num_groups=4 must divide num_channels=6"):
        nn.GroupNorm(4, 6)
