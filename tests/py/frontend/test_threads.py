"""Threads realizing overlapping graphs at once (shared inputs, shared intermediates, some
realized together and some one by one) get the bits one thread gets: the reference's where
the contract is bit-exact, the same device's sequential run elsewhere."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from vkml.runtime.vulkan_loader import vulkan_device_reports

DEVICES = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
THREADS = 6
A = np.random.default_rng(5).normal(size=(64, 48)).astype(np.float32)


def shared(device: vkml.Device) -> tuple[vkml.Tensor, vkml.Tensor]:
    x = vkml.tensor(A, device=device)
    return x, x * 2.0 + 1.0  # the intermediate every thread builds on


def graphs(k: int, x: vkml.Tensor, h: vkml.Tensor) -> list[vkml.Tensor]:
    """Two bit-exact outputs, then one of ops with a bound (tanh, matmul)."""
    return [
        (h * float(k) + x).sum(axis=1),
        vkml.maximum(h, x * 0.5).amax(axis=0) + float(k),
        (h.tanh() @ x.transpose()[:, : 8 + k]).sum(),
    ]


@pytest.mark.parametrize("name", DEVICES)
def test_threads_realizing_overlapping_graphs_get_the_reference_bits(name: str) -> None:
    ref = shared(vkml.reference)
    want = {k: [t.numpy() for t in graphs(k, *ref)][:2] for k in range(THREADS)}
    alone = shared(vkml.device(name))
    for k in range(THREADS):
        want[k].append(graphs(k, *alone)[2].numpy())
    x, h = shared(vkml.device(name))
    start = threading.Barrier(THREADS)
    got: dict[int, list[np.ndarray]] = {}
    failures: list[BaseException] = []

    def work(k: int) -> None:
        try:
            outs = graphs(k, x, h)
            start.wait()
            if k % 2:
                vkml.realize(*outs)  # half realize together, half value by value
            got[k] = [o.numpy() for o in outs]
        except Exception as exc:  # noqa: BLE001 -- a thread's failure is asserted below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert failures == []
    for k in range(THREADS):
        for i, (g, w) in enumerate(zip(got[k], want[k])):
            assert_bit_exact(g, w, f"thread {k}, output {i} on {name}")
    assert_bit_exact(h.numpy(), ref[1].numpy(), "the shared intermediate")
