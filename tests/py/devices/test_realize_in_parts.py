"""A graph whose module IREE cannot load for its dispatches' bindings is realized in parts
(vkml/devices/realize.py ``_realize_in_parts``), with the bits the whole would have given.

IREE 3.13 binds at most 32 buffers per dispatch; chains of one-element values that cross a
cut of vkml-bound-scalar-dispatches (several read after it) still reach that limit on
Vulkan. The refusal is simulated on cpu (any graph of more than ``LIMIT`` ops), and met for
real on lavapipe by a chain of 100 scalar results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.devices import needs_vulkan

import vkml
from vkml.errors import BindingLimitError

LIMIT = 6


def _chain(device: vkml.Device, n: int) -> list[vkml.Tensor]:
    y = vkml.tensor(np.float32(3.0), device=device)
    out = []
    for _ in range(n):
        y = y * 0.5 + 1.0
        out.append(y)
    return out


def _want(n: int) -> list[float]:
    w, out = np.float32(3.0), []
    for _ in range(n):
        w = w * np.float32(0.5) + np.float32(1.0)
        out.append(float(w))
    return out


def test_a_graph_refused_for_its_bindings_is_realized_in_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    device = vkml.cpu
    seen: list[int] = []
    real_prepare = type(device).prepare

    def prepare(self: Any, schedule: Any, roots: Any) -> Any:
        size = sum(1 for n in schedule if not n._computed)
        seen.append(size)
        if size > LIMIT:
            raise BindingLimitError(f"simulated: {size} ops")
        return real_prepare(self, schedule, roots)

    monkeypatch.setattr(type(device), "prepare", prepare)
    got = _chain(device, 20)
    before = vkml.stats()["invocations"]
    vkml.realize(*got)
    assert [float(t.numpy()) for t in got] == _want(20)
    assert seen[0] > LIMIT  # the whole was refused
    assert vkml.stats()["invocations"] - before == sum(1 for s in seen if s <= LIMIT) > 1
    # one root whose schedule is too long: a node half-way first, then the rest
    (last,) = _chain(device, 20)[-1:]
    last.realize()
    assert float(last.numpy()) == _want(20)[-1]


def test_a_single_op_that_cannot_load_raises_the_binding_limit_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    device = vkml.cpu

    def prepare(self: Any, schedule: Any, roots: Any) -> Any:
        raise BindingLimitError("simulated")

    monkeypatch.setattr(type(device), "prepare", prepare)
    x = vkml.tensor(np.ones(3, np.float32))
    x = x + x
    with pytest.raises(BindingLimitError, match="one add op on cpu"):
        x.realize()
    assert not x.node._computed


@pytest.mark.parametrize("name", ["cpu", pytest.param("vulkan:0", marks=needs_vulkan)])
def test_a_chain_of_100_scalar_results_realizes_together(name: str) -> None:
    """On lavapipe the fenced literals are computed scalars that cross every cut, and IREE's
    dispatch of them declared 42 storage buffers (found by the fuzz campaign, seed 1)."""
    got = _chain(vkml.device(name), 100)
    vkml.realize(*got)
    assert [float(t.numpy()) for t in got] == _want(100)


def test_a_call_refused_for_its_bindings_is_realized_in_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """IREE's local-task HAL (cpu) loads such a module and refuses the call instead, in its own
    words; the refusal is simulated for the call of any module of more than ``LIMIT``
    results, and remembered for the structure."""
    from vkml.runtime.executable import Executable

    real_init = Executable.__init__
    calls: list[int] = []

    class Refusing:
        def __init__(self, context: Any, results: int) -> None:
            self.context, self.results = context, results

        def invoke(self, *args: Any) -> None:
            calls.append(self.results)
            if self.results > LIMIT:
                raise RuntimeError(
                    "Error invoking function: c/runtime/src/iree/hal/local/executable_library"
                    "_util.c:77: RESOURCE_EXHAUSTED; dispatch requiring 70 bindings exceeds "
                    "limit of 64"
                )
            self.context.invoke(*args)

    def init(self: Any, *args: Any, **kw: Any) -> None:
        real_init(self, *args, **kw)
        self.context = Refusing(self.context, self.num_results)

    monkeypatch.setattr(Executable, "__init__", init)
    got = _chain(vkml.cpu, 20)
    vkml.realize(*got)
    assert [float(t.numpy()) for t in got] == _want(20)
    assert calls[0] == 20 and calls[-1] <= LIMIT
    # the same structures again: the refused ones are not called a second time
    calls.clear()
    again = _chain(vkml.cpu, 20)
    vkml.realize(*again)
    assert [float(t.numpy()) for t in again] == _want(20)
    assert calls and max(calls) <= LIMIT


def test_a_captured_function_refused_for_its_bindings_names_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A captured function is one invocation and is not split: a refusal (simulated, as IREE
    gives it on Vulkan at the load) names the function and what to do, and the input stays
    usable; the same function uncaptured is realized (in parts where needed)."""
    device = vkml.cpu

    def chain(x: vkml.Tensor) -> tuple[vkml.Tensor, ...]:
        out, y = [], x
        for _ in range(20):
            y = y * 0.5 + 1.0
            out.append(y)
        return tuple(out)

    f = vkml.trace.capture(chain, vkml.spec((), dtype=vkml.float32, device=device))

    def prepare(self: Any, schedule: Any, roots: Any) -> Any:
        raise BindingLimitError("simulated: 42 storage buffers, exceeding device limit 32")

    x = vkml.tensor(np.float32(3.0), device=device)
    with monkeypatch.context() as patch:
        patch.setattr(type(device), "prepare", prepare)
        with pytest.raises(
            BindingLimitError, match="'chain' is captured as one module.*uncaptured"
        ):
            f(x)
    assert [float(t.numpy()) for t in chain(x)] == _want(20)
