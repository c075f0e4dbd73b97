"""Benchmark 11: convolutional networks on cpu (issue 31).

11a. One training step of the CNN of ``vkml.examples.cnn`` (two blocks of 3x3 convolution,
batch norm in training mode with its running averages, ReLU and 2x2 max pooling, then a
linear head; batch 64 of the 8x8 digits; cross-entropy; SGD lr 0.05, momentum 0.9) in
vkml (``opt.compile_step``), PyTorch eager, ``torch.compile`` and ``jax.jit``, every one
from vkml's initial weights and its first step's loss checked against vkml's.

11b. One 3x3 convolution forward and backward (both gradients), float32, an input of
16 x 64 x 56 x 56 (a ResNet stage's shape, batch 16 on this 2-core machine) and 64 output
channels, padding 1: vkml, PyTorch and ``jax.jit``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Bench, Budget, attempt, ratio_verdict, time_calls
from benchmarks.peers import jax_modules, torch_module

SEED, BATCH, LR, MOMENTUM, EPS, BN_MOMENTUM = 0, 64, 0.05, 0.9, 1e-5, 0.1
VKML, JAX = "vkml cpu, opt.compile_step", "jax.jit(value_and_grad) + SGD"
CONV_SHAPE, CONV_OUT = (16, 64, 56, 56), 64

Step = tuple[Callable[[], Any], Callable[[Any], float]]


def _batches() -> list[tuple[np.ndarray, np.ndarray]]:
    from vkml.examples.cnn import load_images
    from vkml.examples.digits import batches

    return list(itertools.islice(batches(load_images(SEED), BATCH, SEED, 0), 4))


def _weights() -> dict[str, np.ndarray]:
    import vkml
    from vkml.examples.cnn import make_model

    return make_model(SEED, vkml.cpu).state_dict()


def vkml_step(batches: list) -> Step:
    import vkml
    from vkml import nn
    from vkml.examples.cnn import make_model

    model = make_model(SEED, vkml.cpu)
    opt = nn.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    train = opt.compile_step(lambda x, y: nn.cross_entropy(model(x), y))
    x, y = vkml.tensor(batches[0][0]).realize(), vkml.tensor(batches[0][1]).realize()
    return (lambda: train(x, y)), lambda loss: loss.item()


def torch_step(weights: dict[str, np.ndarray], batches: list, compiled: bool) -> Step:
    torch = torch_module()
    torch.set_num_threads(2)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 10),
    )  # fmt: skip
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()}, strict=False)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    x, y = torch.tensor(batches[0][0]), torch.tensor(batches[0][1].astype(np.int64))

    def loss_fn(a: Any, b: Any) -> Any:
        return torch.nn.functional.cross_entropy(model(a), b)

    update = opt.step
    if compiled:
        loss_fn = torch.compile(loss_fn, dynamic=False)
        update = torch.compile(opt.step, dynamic=False)

    def step() -> Any:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        update()
        return loss.detach()

    return step, float


def jax_step(weights: dict[str, np.ndarray], batches: list) -> Step:
    jax, jnp = jax_modules()
    lax = jax.lax

    def conv(x: Any, w: Any, b: Any) -> Any:
        y = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))  # fmt: skip
        return y + b[None, :, None, None]

    def norm(x: Any, g: Any, b: Any) -> tuple[Any, Any, Any]:
        mean = x.mean(axis=(0, 2, 3))
        var = x.var(axis=(0, 2, 3))
        y = (x - mean[None, :, None, None]) * lax.rsqrt(var + EPS)[None, :, None, None]
        return y * g[None, :, None, None] + b[None, :, None, None], mean, var

    def pool(x: Any) -> Any:
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        h, m1, v1 = norm(conv(x, p[0], p[1]), p[2], p[3])
        h = pool(jnp.maximum(h, 0.0))
        h, m2, v2 = norm(conv(h, p[4], p[5]), p[6], p[7])
        h = pool(jnp.maximum(h, 0.0)).reshape(x.shape[0], -1)
        logits = h @ p[8].T + p[9]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1)), (m1, v1, m2, v2)

    def step(p: Any, bufs: Any, stats: Any, x: Any, y: Any) -> Any:
        (loss, batch), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, x, y)
        bufs = jax.tree.map(lambda b, g: MOMENTUM * b + g, bufs, grads)
        p = jax.tree.map(lambda w, b: w - LR * b, p, bufs)
        n = x.shape[0] * x.shape[2] * x.shape[3]
        stats = tuple((1 - BN_MOMENTUM) * s + BN_MOMENTUM * (b * (n / (n - 1) if i % 2 else 1))
                      for i, (s, b) in enumerate(zip(stats, batch)))  # fmt: skip
        return p, bufs, stats, loss

    names = ("0.weight", "0.bias", "1.weight", "1.bias", "4.weight", "4.bias", "5.weight",
             "5.bias", "9.weight", "9.bias")  # fmt: skip
    params = tuple(jnp.asarray(weights[n]) for n in names)
    state = [params, tuple(jnp.zeros_like(w) for w in params),
             tuple(jnp.asarray(weights[n]) for n in ("1.running_mean", "1.running_var",
                                                    "5.running_mean", "5.running_var"))]  # fmt: skip
    fn = jax.jit(step)
    x, y = jnp.asarray(batches[0][0]), jnp.asarray(batches[0][1])

    def run() -> Any:
        state[0], state[1], state[2], loss = fn(state[0], state[1], state[2], x, y)
        return loss.block_until_ready()

    return run, float


def _checked(make: Callable[[], Step], want: list[float]) -> Callable[[], Any]:
    """The step of ``make()`` after its first loss matched vkml's (the first row's)."""
    step, loss_of = make()
    loss = loss_of(step())
    if want and not np.isclose(loss, want[0], rtol=1e-4):
        raise AssertionError(f"first-step loss {loss:.6f}, vkml's {want[0]:.6f}")
    want.append(loss)
    return step


def bench_cnn_step(budget: Budget) -> Bench:
    bench = Bench(
        "cnnstep",
        f"11a. digits CNN training step (conv-BN-ReLU-pool x2, linear; batch {BATCH}; SGD momentum), per step",
        "us",
        target="vkml cpu <= 1.0x jax.jit time",
    )
    batches, weights, want = _batches(), _weights(), []

    def row(name: str, make: Callable[[], Step], note: str) -> Any:
        return attempt(name, lambda: time_calls(_checked(make, want), budget, warmup=5), note)

    bench.rows = [
        row(VKML, lambda: vkml_step(batches), "resident batch; recorded step replayed"),
        row(
            "torch eager", lambda: torch_step(weights, batches, False), "zero_grad, backward, step"
        ),
        row("torch.compile", lambda: torch_step(weights, batches, True), "compiled loss and step"),
        row(JAX, lambda: jax_step(weights, batches), "whole step jitted, running averages too"),
    ]
    bench.notes.append(
        "Every row starts from vkml's initial weights (the demo's seed); its first step's loss "
        "is checked against vkml's (rtol 1e-4) before it is timed."
    )
    ratio_verdict(bench, VKML, JAX)
    return bench


def bench_conv(budget: Budget) -> Bench:
    n, c, h, w = CONV_SHAPE
    bench = Bench(
        "conv2d",
        f"11b. conv2d 3x3 forward + backward, {n}x{c}x{h}x{w} -> {CONV_OUT} channels, padding 1",
        "ms",
        target="(no target: where vkml stands)",
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal(CONV_SHAPE).astype(np.float32)
    k = (rng.standard_normal((CONV_OUT, c, 3, 3)) * 0.05).astype(np.float32)
    g = rng.standard_normal((n, CONV_OUT, h, w)).astype(np.float32)

    def vkml_fn() -> Callable[[], Any]:
        import vkml

        vx, vk, vg = (vkml.tensor(a).realize() for a in (x, k, g))

        def run() -> Any:
            xs, ks = vx.detach().requires_grad_(), vk.detach().requires_grad_()
            out = vkml.conv(xs, ks, padding=1)
            (out * vg).sum().backward()
            vkml.realize(out, xs.grad, ks.grad)
            return out

        return run

    def torch_fn() -> Callable[[], Any]:
        torch = torch_module()
        tx, tk, tg = (torch.tensor(a) for a in (x, k, g))

        def run() -> Any:
            xs, ks = tx.clone().requires_grad_(), tk.clone().requires_grad_()
            out = torch.nn.functional.conv2d(xs, ks, padding=1)
            out.backward(tg)
            return out

        return run

    def jax_fn() -> Callable[[], Any]:
        jax, jnp = jax_modules()

        def f(a: Any, b: Any, t: Any) -> Any:
            out = jax.lax.conv_general_dilated(a, b, (1, 1), ((1, 1), (1, 1)),
                                               dimension_numbers=("NCHW", "OIHW", "NCHW"))  # fmt: skip
            return (out * t).sum()

        fn = jax.jit(jax.value_and_grad(f, argnums=(0, 1)))
        jx, jk, jg = (jnp.asarray(a) for a in (x, k, g))
        return lambda: jax.block_until_ready(fn(jx, jk, jg))

    small = Budget(budget.seconds, 3, 50, budget.warmup_seconds)
    bench.rows = [
        attempt("vkml cpu", lambda: time_calls(vkml_fn(), small), "conv, backward, realize all"),
        attempt("torch eager", lambda: time_calls(torch_fn(), small), "oneDNN"),
        attempt("jax.jit", lambda: time_calls(jax_fn(), small), "value_and_grad, XLA:CPU"),
    ]
    ratio_verdict(bench, "vkml cpu", "jax.jit", target=None)
    return bench


def bench_cnn(budget: Budget) -> list[Bench]:
    return [bench_cnn_step(budget), bench_conv(budget)]
