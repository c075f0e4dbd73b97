"""Layers and Module (``vkml/nn/layers.py``, ``module.py``): PyTorch's numbers for Linear and
LayerNorm (values and gradients), initialisation from keys, parameter discovery, state
dicts through ``.npz``, modes, Dropout's keyed masks and Embedding's one-hot lookup."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vkml
from vkml import nn
from vkml.nn.module import rebind

RNG = np.random.default_rng(11)
TOL = {"rtol": 1e-5, "atol": 1e-6}


def key(seed: int = 0, device: vkml.Device = vkml.cpu) -> vkml.Tensor:
    return vkml.random.key(seed, device=device)


def grads_of(loss_fn, *tensors: vkml.Tensor) -> list[np.ndarray]:
    grads = vkml.grad(loss_fn, argnums=tuple(range(len(tensors))))(*tensors)
    vkml.realize(*grads)
    return [g.numpy() for g in grads]


# -- Linear ---------------------------------------------------------------------------------
def test_linear_forward_and_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    layer = nn.Linear(5, 3, key=key(1))
    x_host = RNG.normal(size=(4, 5)).astype(np.float32)
    weights = RNG.normal(size=(4, 3)).astype(np.float32)

    def loss(x: vkml.Tensor, w: vkml.Tensor, b: vkml.Tensor) -> vkml.Tensor:
        layer.weight, layer.bias = w, b
        return (layer(x) * vkml.tensor(weights)).sum()

    w0, b0 = layer.weight, layer.bias
    got = layer(vkml.tensor(x_host)).numpy()
    gx, gw, gb = grads_of(loss, vkml.tensor(x_host), w0, b0)

    ref = torch.nn.Linear(5, 3)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(w0.numpy()))
        ref.bias.copy_(torch.from_numpy(b0.numpy()))
    xt = torch.from_numpy(x_host).requires_grad_()
    out = ref(xt)
    (out * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_allclose(got, out.detach().numpy(), **TOL)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **TOL)
    np.testing.assert_allclose(gw, ref.weight.grad.numpy(), **TOL)
    np.testing.assert_allclose(gb, ref.bias.grad.numpy(), **TOL)


def test_linear_init_is_uniform_within_pytorch_bound() -> None:
    layer = nn.Linear(64, 128, key=key(2))
    w, b = layer.weight.numpy(), layer.bias.numpy()
    bound = 1 / np.sqrt(64)
    assert w.shape == (128, 64) and b.shape == (128,)
    assert np.all(np.abs(w) < bound) and np.all(np.abs(b) < bound)
    assert w.min() < -0.95 * bound and w.max() > 0.95 * bound  # fills the interval
    assert abs(float(w.mean())) < 0.01
    assert not np.array_equal(w[:, :1].ravel(), b[: w.shape[0]])  # weight and bias: own keys


def test_linear_same_key_same_weights_other_key_other_weights() -> None:
    a, b, c = (nn.Linear(8, 4, key=key(s)) for s in (3, 3, 4))
    assert np.array_equal(a.weight.numpy(), b.weight.numpy())
    assert not np.array_equal(a.weight.numpy(), c.weight.numpy())


@pytest.mark.parametrize("fan_in", [64, 128])
def test_linear_init_is_bit_identical_on_cpu_and_reference(fan_in: int) -> None:
    """The RNG contract: one key, the same weights on every device. A fan-in whose bound is
    not a power of two makes uniform's ``unit * span + low`` round: a fused multiply-add
    on one device and not the other shows up here."""
    on_cpu = nn.Linear(fan_in, 10, key=key(5)).state_dict()
    on_ref = nn.Linear(fan_in, 10, key=key(5, vkml.reference)).state_dict()
    for name in on_ref:
        assert on_cpu[name].tobytes() == on_ref[name].tobytes(), name


def test_linear_rejects_wrong_input_width() -> None:
    layer = nn.Linear(5, 3, key=key())
    with pytest.raises(vkml.ShapeError, match="last axis has 5 elements, got shape \\(2, 4\\)"):
        layer(vkml.zeros((2, 4)))


# -- Module: discovery, modes, state ---------------------------------------------------------
class Block(nn.Module):
    def __init__(self) -> None:
        self.proj = nn.Linear(4, 4, key=key(6))
        self.norm = nn.LayerNorm(4)
        self.drop = nn.Dropout(0.25, key=key(7))

    def forward(self, x: vkml.Tensor) -> vkml.Tensor:
        return self.drop(self.norm(self.proj(x).relu()))


def test_parameters_are_named_in_definition_order() -> None:
    model = nn.Sequential(Block(), nn.GELU(), nn.Linear(4, 2, key=key(8)))
    names = [n for n, _ in model.named_parameters()]
    assert names == [
        "0.proj.weight",
        "0.proj.bias",
        "0.norm.weight",
        "0.norm.bias",
        "2.weight",
        "2.bias",
    ]
    assert [n for n, _ in model.named_buffers()] == ["0.drop.key"]
    assert all(p.is_leaf for p in model.parameters())


def test_shared_layer_parameters_are_listed_once() -> None:
    shared = nn.Linear(3, 3, key=key(9))
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(model.parameters()) == 2


def test_train_and_eval_set_every_submodule() -> None:
    model = nn.Sequential(Block(), nn.ReLU())
    model.eval()
    assert [m.training for m in model.modules()] == [False] * 6
    model.train()
    assert all(m.training for m in model.modules())


def test_state_dict_round_trips_through_npz_bit_for_bit(tmp_path: Path) -> None:
    model = nn.Sequential(Block(), nn.Linear(4, 2, key=key(10)))
    path = tmp_path / "model.npz"
    model.save(path)
    other = nn.Sequential(Block(), nn.Linear(4, 2, key=key(11)))
    weight = other[1].weight
    other.load(path)
    assert other[1].weight is weight  # rebound in place: an optimiser holding it sees the load
    assert weight.is_leaf
    for name, value in model.state_dict().items():
        assert other.state_dict()[name].tobytes() == value.tobytes(), name
    with pytest.raises(FileNotFoundError, match=r"folder .*missing.* does not exist"):
        model.save(tmp_path / "missing" / "model.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]


def test_bfloat16_parameters_survive_npz(tmp_path: Path) -> None:
    layer = nn.Linear(3, 2, key=key(12), dtype=vkml.bfloat16)
    layer.save(tmp_path / "bf16.npz")
    other = nn.Linear(3, 2, key=key(13), dtype=vkml.bfloat16)
    other.load(tmp_path / "bf16.npz")
    assert other.weight.dtype is vkml.bfloat16
    assert other.weight.numpy().tobytes() == layer.weight.numpy().tobytes()


def test_load_state_dict_names_missing_and_unexpected_keys() -> None:
    layer = nn.Linear(3, 2, key=key())
    with pytest.raises(KeyError, match=r"missing \['bias'\], unexpected \['b'\]"):
        layer.load_state_dict({"weight": np.zeros((2, 3), np.float32), "b": np.zeros(2)})
    layer.load_state_dict({"weight": np.ones((2, 3), np.float32)}, strict=False)
    assert layer.weight.numpy().tolist() == [[1.0] * 3] * 2


def test_load_state_dict_rejects_wrong_shape_and_dtype() -> None:
    layer = nn.Linear(3, 2, key=key())
    bias = layer.bias.numpy()
    with pytest.raises(vkml.ShapeError, match="'weight' has shape \\(3, 2\\)"):
        layer.load_state_dict({"weight": np.zeros((3, 2), np.float32), "bias": bias})
    with pytest.raises(vkml.DTypeError, match="'weight' has dtype float64"):
        layer.load_state_dict({"weight": np.zeros((2, 3)), "bias": bias})


def test_to_device_moves_parameters_and_keeps_them_leaves() -> None:
    layer = nn.Linear(3, 2, key=key(14))
    before = layer.weight.numpy()
    weight = layer.weight
    layer.to(vkml.reference)
    assert weight.device is vkml.reference and weight.is_leaf
    assert np.array_equal(weight.numpy(), before)
    assert layer(vkml.ones((1, 3), device=vkml.reference)).device is vkml.reference


def test_rebind_gives_a_fresh_data_node_without_history() -> None:
    t = vkml.tensor([1.0, 2.0], requires_grad=True)
    value = (t * 3.0).realize()
    rebind(t, value)
    assert t.node.op == "data" and t.node.src == () and t.node.computed
    assert t.is_leaf and t.tolist() == [3.0, 6.0]


# -- Dropout ---------------------------------------------------------------------------------
def test_dropout_in_eval_mode_is_the_identity() -> None:
    drop = nn.Dropout(0.5, key=key()).eval()
    x = vkml.tensor(RNG.normal(size=(4, 4)).astype(np.float32))
    assert drop(x) is x


def test_dropout_zeroes_about_p_and_scales_the_rest() -> None:
    drop = nn.Dropout(0.25, key=key(15))
    x = vkml.ones((200, 100))
    out = drop(x).numpy()
    assert set(np.unique(out).tolist()) == {0.0, np.float32(1 / 0.75)}
    assert abs(float((out == 0).mean()) - 0.25) < 0.01


def test_dropout_held_key_advances_and_explicit_key_repeats() -> None:
    drop = nn.Dropout(0.5, key=key(16))
    x = vkml.ones((64,))
    first, second = drop(x).numpy(), drop(x).numpy()
    assert not np.array_equal(first, second)
    k = key(17)
    assert np.array_equal(drop(x, key=k).numpy(), drop(x, key=k).numpy())


def test_dropout_gradient_follows_the_mask() -> None:
    drop = nn.Dropout(0.5, key=key(18))
    x = vkml.tensor(RNG.normal(size=(32,)).astype(np.float32))
    k = key(19)
    mask = drop(vkml.ones((32,)), key=k).numpy()
    (g,) = grads_of(lambda t: drop(t, key=k).sum(), x)
    assert np.array_equal(g, mask)  # 0 where dropped, 1 / (1 - p) where kept


def test_dropout_rejects_p_outside_unit_interval() -> None:
    with pytest.raises(ValueError, match=r"p=1.0 must be in \[0, 1\)"):
        nn.Dropout(1.0)


def test_dropout_training_steps_hit_the_cache_and_advance_the_key() -> None:
    model = nn.Sequential(
        nn.Linear(6, 8, key=key(20)),
        nn.ReLU(),
        nn.Dropout(0.3, key=key(21)),
        nn.Linear(8, 2, key=key(22)),
    )
    opt = nn.SGD(model.parameters(), lr=0.1)
    x = vkml.tensor(RNG.normal(size=(16, 6)).astype(np.float32))
    y = vkml.tensor(RNG.integers(0, 2, 16).astype(np.int32))
    held = model[2].key
    keys = []
    for step in range(4):
        before = vkml.stats()
        opt.step(lambda: nn.cross_entropy(model(x), y))
        after = vkml.stats()
        keys.append(held.numpy().tolist())
        assert after["invocations"] - before["invocations"] == 1
        if step >= 1:
            assert after["compiles"] == before["compiles"], f"step {step + 1} compiled"
            assert after["cache_hits_memory"] - before["cache_hits_memory"] == 1
        assert held.node.op == "data" and held.node.src == ()  # realized with the step
    assert len({tuple(k) for k in keys}) == 4


# -- LayerNorm, Embedding, activations --------------------------------------------------------
def test_layernorm_forward_and_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    norm = nn.LayerNorm((3, 4))
    gamma = RNG.normal(size=(3, 4)).astype(np.float32)
    beta = RNG.normal(size=(3, 4)).astype(np.float32)
    norm.load_state_dict({"weight": gamma, "bias": beta})
    x_host = (RNG.normal(size=(2, 3, 4)) * 3 + 1).astype(np.float32)
    weights = RNG.normal(size=(2, 3, 4)).astype(np.float32)

    def loss(x: vkml.Tensor, w: vkml.Tensor, b: vkml.Tensor) -> vkml.Tensor:
        norm.weight, norm.bias = w, b
        return (norm(x) * vkml.tensor(weights)).sum()

    w0, b0 = norm.weight, norm.bias
    got = norm(vkml.tensor(x_host)).numpy()
    gx, gw, gb = grads_of(loss, vkml.tensor(x_host), w0, b0)

    ref = torch.nn.LayerNorm((3, 4))
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(gamma))
        ref.bias.copy_(torch.from_numpy(beta))
    xt = torch.from_numpy(x_host).requires_grad_()
    out = ref(xt)
    (out * torch.from_numpy(weights)).sum().backward()
    tol = {"rtol": 1e-4, "atol": 1e-5}
    np.testing.assert_allclose(got, out.detach().numpy(), **tol)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **tol)
    np.testing.assert_allclose(gw, ref.weight.grad.numpy(), **tol)
    np.testing.assert_allclose(gb, ref.bias.grad.numpy(), **tol)


def test_layernorm_rejects_input_with_other_trailing_shape() -> None:
    with pytest.raises(vkml.ShapeError, match=r"does not end with \(4,\)"):
        nn.LayerNorm(4)(vkml.zeros((2, 3)))


def test_embedding_looks_up_rows_and_scatters_gradients() -> None:
    emb = nn.Embedding(6, 3, key=key(23))
    table = emb.weight.numpy()
    ids_host = np.array([[1, 4, 1], [0, 5, 2]], np.int32)
    ids = vkml.tensor(ids_host)
    assert np.array_equal(emb(ids).numpy(), table[ids_host])

    def loss(w: vkml.Tensor) -> vkml.Tensor:
        emb.weight = w
        return (emb(ids) ** 2.0).sum()

    (g,) = grads_of(loss, emb.weight)
    expected = np.zeros_like(table)
    np.add.at(expected, ids_host.ravel(), 2 * table[ids_host.ravel()])
    np.testing.assert_allclose(g, expected, **TOL)


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_an_embedding_id_out_of_range_gives_a_row_of_nan(device: str) -> None:
    """An id outside [0, num_embeddings) is a bug in the data: its row is NaN, never a
    plausible row (zeros, or the clamped last row); the others are the table's rows."""
    emb = nn.Embedding(4, 2, key=key(5)).to(device)
    table = emb.weight.numpy()
    out = emb(vkml.tensor([[0, 4], [-1, 3]], device=device)).numpy()
    assert np.isnan(out[0, 1]).all() and np.isnan(out[1, 0]).all()
    assert np.array_equal(out[0, 0], table[0]) and np.array_equal(out[1, 1], table[3])


def test_embedding_rejects_float_ids() -> None:
    with pytest.raises(vkml.DTypeError, match="ids must be integers, got float32"):
        nn.Embedding(4, 2, key=key())(vkml.zeros((3,)))


def test_relu_and_gelu_modules_apply_their_ops() -> None:
    x = vkml.tensor([-1.0, 0.0, 2.0])
    assert nn.ReLU()(x).tolist() == [0.0, 0.0, 2.0]
    np.testing.assert_allclose(nn.GELU()(x).numpy(), x.gelu().numpy(), rtol=0, atol=0)


def test_sequential_indexes_iterates_and_rejects_non_modules() -> None:
    relu, gelu = nn.ReLU(), nn.GELU()
    seq = nn.Sequential(relu, gelu)
    assert seq[1] is gelu and len(seq) == 2 and list(seq) == [relu, gelu]
    with pytest.raises(TypeError, match="layer 1 is a function, not a Module"):
        nn.Sequential(relu, lambda x: x)  # type: ignore[arg-type]
