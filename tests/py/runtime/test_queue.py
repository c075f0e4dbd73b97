"""Queued calls (vkml/runtime/queue.py, ``Abi.queued``, ``Abi.transients``): a Vulkan realize
takes a wait and a signal fence, waits on a semaphore of its session's pool, and never makes
one per call; its transient values live in a buffer of its executable's pool."""

from __future__ import annotations

import threading

import numpy as np

import vkml
from vkml.compiler.keys import cache_key
from vkml.compiler.target import vulkan_target
from vkml.graph.walk import toposort
from vkml.runtime.hal import session
from vkml.runtime.queue import SemaphorePool


def test_the_pool_reuses_a_semaphore_with_the_next_value() -> None:
    pool = SemaphorePool(session("local-task").device)
    first, value = pool.take()
    assert value == 1
    pool.give(first, value)
    again, next_value = pool.take()
    assert again is first and next_value == 2
    other, other_value = pool.take()  # one in use: another is made, from value 1
    assert other is not first and other_value == 1 and pool.created == 2


def test_vulkan_realize_is_queued_and_makes_no_semaphore_per_call() -> None:
    dev = vkml.device("vulkan:0")
    x = vkml.tensor(np.arange(4, dtype=np.float32), device=dev)
    y = x * 2.0 + 1.0
    assert dev._lower(toposort([y.node]), [y.node]).abi.queued
    pool = dev.session.semaphores
    before = pool.created
    for k in range(50):  # one structure: compiled once, called 50 times
        shift = vkml.tensor(np.float32(k), device=dev)
        assert ((x + shift).numpy() == np.arange(4) + k).all()
    assert pool.created - before <= 1


def _softmax_of_product(x: vkml.Tensor) -> vkml.Tensor:
    """Several dispatches (a matmul, reductions, elementwise) handing values to each other."""
    return vkml.softmax(x @ x.T, axis=1) * 2.0


def test_a_vulkan_module_takes_its_transient_storage_from_a_pool() -> None:
    dev = vkml.device("vulkan:0")
    host = np.random.default_rng(0).normal(size=(48, 40)).astype(np.float32)
    x = vkml.tensor(host, device=dev)
    y = _softmax_of_product(x)
    assert dev._lower(toposort([y.node]), [y.node]).abi.transients
    want = _softmax_of_product(vkml.tensor(host, device=vkml.reference)).numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    executable = next(reversed(dev._executables.values()))[0]
    assert executable.storage is not None and executable.storage.size > 0
    for _ in range(20):
        np.testing.assert_allclose(_softmax_of_product(x).numpy(), want, rtol=1e-5, atol=1e-6)
    assert executable.storage.created == 1


def test_threads_realizing_at_once_each_wait_for_their_own_call() -> None:
    dev = vkml.device("vulkan:0")
    xs = [vkml.tensor(np.full((64,), k, np.float32), device=dev) for k in range(4)]
    wrong: list[str] = []

    turns = [vkml.tensor(np.float32(turn), device=dev) for turn in range(25)]

    def work(k: int) -> None:
        for turn in range(25):
            got = (xs[k] * 3.0 + turns[turn]).numpy()
            if not (got == 3.0 * k + turn).all():
                wrong.append(f"thread {k} turn {turn}: {got[:2]}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_the_execution_model_is_part_of_the_cache_key() -> None:
    queued = vulkan_target("llvmpipe", float64=False)
    plain = queued.__class__(**{**queued.__dict__, "queued": False})
    assert "--iree-execution-model=async-external" in queued.iree_flags
    assert "--iree-execution-model=async-external" not in plain.iree_flags
    assert cache_key("module {}", queued) != cache_key("module {}", plain)
