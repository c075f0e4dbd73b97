"""Forks in a builder function (vkml/builder/fork.py): ``vkml.Graph.parallel()``, its
branches, ``b.wait``; the same bits as the plain function on every device, the gradient
through them, and each misuse refused with the way out. That IREE runs the branches side by
side is shown in the stream IR by tests/lit/emit/fork.py."""

from __future__ import annotations

import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from vkml.builder.ast_rewrite import BuilderSyntaxError

DEVICES = ["cpu", "vulkan:0", "reference"]


@vkml.Graph.builder
def forked(x, y):  # type: ignore[no-untyped-def]
    with vkml.Graph.parallel() as fork:
        with fork.branch():
            a = (x * 2.0 + 1.0).relu()
        with fork.branch():
            b = (y - 0.5) * y
    return a + b


def plain(x, y):  # type: ignore[no-untyped-def]
    return (x * 2.0 + 1.0).relu() + (y - 0.5) * y


def _inputs(device: str) -> tuple[vkml.Tensor, vkml.Tensor]:
    rng = np.random.default_rng(7)
    x, y = (rng.normal(size=(5, 6)).astype(np.float32) for _ in range(2))
    return vkml.tensor(x, device=device), vkml.tensor(y, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_a_fork_gives_the_plain_function_s_bits(device: str) -> None:
    x, y = _inputs(device)
    g = forked(x, y)
    assert g.schedule.forks == 1 and g.schedule.invocations_per_launch == 1
    assert_bit_exact(g().numpy(), plain(x, y).numpy(), device)
    assert_bit_exact(g().numpy(), plain(*_inputs("reference")).numpy(), f"{device} vs reference")


@vkml.Graph.builder
def waiting(x, y):  # type: ignore[no-untyped-def]
    with vkml.Graph.parallel() as fork:
        with fork.branch():
            a = x * 3.0
        with fork.branch() as second:
            second.wait(a)
            b = a - y
    return a * b


@vkml.Graph.builder
def nested(x, y):  # type: ignore[no-untyped-def]
    with vkml.Graph.parallel() as outer:
        with outer.branch():
            with vkml.Graph.parallel() as inner:
                with inner.branch():
                    p = x + 1.0
                with inner.branch():
                    q = x - 1.0
            a = p * q
        with outer.branch():
            b = y * y
    return a - b


@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_a_wait_and_a_nested_fork_give_the_plain_bits(device: str) -> None:
    x, y = _inputs(device)
    a = x * 3.0
    assert_bit_exact(waiting(x, y)().numpy(), (a * (a - y)).numpy(), "wait")
    g = nested(x, y)
    assert g.schedule.forks == 2
    assert_bit_exact(g().numpy(), ((x + 1.0) * (x - 1.0) - y * y).numpy(), "nested")


@vkml.Graph.builder
def racing(x, y):  # type: ignore[no-untyped-def]
    with vkml.Graph.parallel() as fork:
        with fork.branch():
            a = x * 3.0
        with fork.branch():
            b = a - y
    return b


def test_reading_another_branch_s_value_without_waiting_is_refused() -> None:
    with pytest.raises(vkml.BuilderError, match=r"branch 2 of a fork reads 'a'.*b\.wait\(a\)"):
        racing(*_inputs("cpu"))


def test_misplaced_forks_and_branches_are_refused_with_the_way_out() -> None:
    with (
        pytest.raises(vkml.BuilderError, match="in a function decorated with"),
        vkml.Graph.parallel(),
    ):
        pass

    @vkml.Graph.builder
    def branch_outside(x):  # type: ignore[no-untyped-def]
        with vkml.Graph.parallel() as fork:
            pass
        with fork.branch():
            x = x + 1.0
        return x

    with pytest.raises(vkml.BuilderError, match="inside its 'with vkml.Graph.parallel"):
        branch_outside(vkml.tensor(np.ones(3, np.float32)))

    with pytest.raises(BuilderSyntaxError, match="inside a fork branch is not supported"):

        @vkml.Graph.builder
        def returns_in_branch(x):  # type: ignore[no-untyped-def]
            with vkml.Graph.parallel() as fork:
                with fork.branch():
                    y = x + 1.0
                with fork.branch():
                    return x
            return y


@vkml.Graph.builder
def one_line(x, y):  # type: ignore[no-untyped-def]
    with vkml.Graph.parallel() as fork, fork.branch():  # one branch, written as one 'with'
        a = x * 2.0
    return a + y


def test_a_fork_and_its_branch_in_one_with_statement_are_a_fork_of_one_branch() -> None:
    x, y = _inputs("cpu")
    g = one_line(x, y)
    assert g.schedule.forks == 1
    assert_bit_exact(g().numpy(), (x * 2.0 + y).numpy(), "one line")


def test_the_gradient_flows_through_a_fork_as_through_the_plain_function() -> None:
    record = vkml.Graph.builder(record=True)(forked.fn)
    x, y = _inputs("cpu")
    g = record(x, y)
    got = vkml.diff.reverse(g, seeds={"result": np.ones((5, 6), np.float32)})
    want = vkml.grad(lambda u, v: plain(u, v).sum(), argnums=(0, 1))(x, y)
    for name, w in zip(("x", "y"), want):
        assert_bit_exact(got[name].numpy(), w.numpy(), name)
