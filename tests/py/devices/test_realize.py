"""Behaviour of ``vkml/devices/realize.py``: the seven steps of realize(), each pinned."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vkml
import vkml.compiler.cache
import vkml.devices.realize as realize_module
from vkml.devices.coverage import coverage_report, format_coverage
from vkml.dtypes import DType
from vkml.graph.node import Node
from vkml.graph.walk import toposort
from vkml.ops.registry import OPS

STEPS = ["toposort", "device", "support", "coverage", "bind", "invoke", "mark"]
# cpu refusing points at the reference device; any other device refusing points at cpu
REMEDY = "vkml.tensor(t.numpy(), device=vkml.reference)"
STAT_KEYS = {
    "realizes", "invocations", "compiles", "cache_hits_memory", "cache_hits_disk",
    "compile_seconds",
}  # fmt: skip


def f32(values: Any, device: str = "cpu") -> vkml.Tensor:
    return vkml.tensor(np.asarray(values, dtype=np.float32), device=device)


def delta(before: dict[str, float]) -> dict[str, float]:
    """How much each counter of ``vkml.stats()`` grew since ``before``."""
    after = vkml.stats()
    return {k: after[k] - before[k] for k in after}


@pytest.fixture(autouse=True)
def _no_hook_left_behind() -> Iterator[None]:
    """Every test leaves realize() unobserved, as normal use has it."""
    yield
    assert realize_module.STEP_HOOK is None


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The step names realize() reports through STEP_HOOK, in order."""
    seen: list[str] = []
    monkeypatch.setattr(realize_module, "STEP_HOOK", seen.append)
    return seen


def refuse(op: str) -> Callable[[str, DType], bool]:
    """A ``supports`` that refuses ``op`` and accepts what the cpu device accepts."""
    original = vkml.cpu.supports
    return lambda name, dtype: name != op and original(name, dtype)


def unrealized(*tensors: vkml.Tensor) -> bool:
    return all(t._node.storage is None and not t._node.computed for t in tensors)


# -- the order of the steps -----------------------------------------------------------------
def test_realize_runs_the_seven_steps_in_order(steps: list[str]) -> None:
    (f32([1.0, 2.0]) * 2.0 + 1.0).realize()
    assert steps == STEPS


def test_realize_of_a_computed_tensor_runs_no_step(steps: list[str]) -> None:
    c = (f32([1.0, 2.0]) * 2.0).realize()
    steps.clear()
    c.realize()
    assert steps == []


def test_a_support_failure_stops_before_coverage(
    steps: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vkml.cpu, "supports", refuse("mul"))
    with pytest.raises(vkml.UnsupportedOperatorError):
        (f32([1.0]) * 2.0).realize()
    assert steps == ["toposort", "device", "support"]


# -- step 1: topological order; nothing runs twice ------------------------------------------
def test_realizing_twice_invokes_once() -> None:
    a = f32([1.0, 2.0, 3.0])
    b = a * 2.0
    c = b + 1.0
    before = vkml.stats()
    c.realize()
    assert delta(before)["invocations"] == 1
    before = vkml.stats()
    c.realize()
    assert c.numpy().tolist() == [3.0, 5.0, 7.0]
    assert c.tolist() == [3.0, 5.0, 7.0]
    assert delta(before)["invocations"] == 0
    assert delta(before)["realizes"] == 0


def test_a_realized_node_is_an_argument_of_the_next_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schedules: list[list[Node]] = []

    def spy(roots: list[Node]) -> list[Node]:
        schedules.append(toposort(roots))
        return schedules[-1]

    a0 = f32([1.0, 2.0])
    a = a0 * 2.0
    b = a + 1.0
    b.realize()
    monkeypatch.setattr(realize_module, "toposort", spy)
    c = b * 3.0
    before = vkml.stats()
    c.realize()
    (schedule,) = schedules
    assert b._node in schedule
    assert a._node not in schedule and a0._node not in schedule
    assert sorted(n.op for n in schedule) == ["add", "mul", "scalar"]  # b, c, the 3.0
    assert delta(before)["invocations"] == 1
    assert c.tolist() == [9.0, 15.0]


# -- step 2: one device per graph -----------------------------------------------------------
def test_matmul_across_devices_names_both_devices() -> None:
    a = vkml.tensor(np.ones((2, 2), np.float32), device="cpu")
    b = vkml.tensor(np.ones((2, 2), np.float32), device="reference")
    with pytest.raises(vkml.DeviceError) as info:
        a @ b
    assert str(info.value) == "'matmul' operands are on different devices: cpu and reference"


def test_add_across_devices_names_both_devices() -> None:
    a, b = f32([1.0], "reference"), f32([1.0], "cpu")
    with pytest.raises(vkml.DeviceError) as info:
        a + b
    assert str(info.value) == "'add' operands are on different devices: reference and cpu"


def test_realize_of_a_graph_spanning_devices_raises_before_running(steps: list[str]) -> None:
    on_cpu, on_ref = f32([1.0]) + 1.0, f32([2.0], "reference") + 1.0
    before = vkml.stats()
    with pytest.raises(vkml.DeviceError) as info:
        vkml.realize(on_cpu, on_ref)
    assert "cpu" in str(info.value) and "reference" in str(info.value)
    assert steps == ["toposort", "device"]
    assert delta(before)["invocations"] == 0
    assert unrealized(on_cpu, on_ref)


def test_a_node_whose_source_is_on_another_device_is_refused() -> None:
    a, b = f32([1.0]), f32([2.0], "reference")
    mixed = vkml.Tensor(Node("add", vkml.float32, (1,), (a._node, b._node), (), vkml.cpu))
    with pytest.raises(vkml.DeviceError, match="reference"):
        mixed.realize()
    assert unrealized(mixed)


# -- step 3: support check, no fallback -----------------------------------------------------
def test_unsupported_op_names_op_dtype_device_and_remedy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    y = f32([1.0, 2.0]) * 3.0
    monkeypatch.setattr(vkml.cpu, "supports", refuse("mul"))
    before = vkml.stats()
    with pytest.raises(vkml.UnsupportedOperatorError) as info:
        y.realize()
    message = str(info.value)
    assert "'mul'" in message and "float32" in message and "cpu" in message
    assert REMEDY in message
    assert (info.value.op, info.value.dtype, info.value.device) == ("mul", "float32", "cpu")
    assert delta(before)["invocations"] == 0 and delta(before)["compiles"] == 0
    assert unrealized(y)
    monkeypatch.undo()
    assert y.tolist() == [3.0, 6.0]
    assert y._node.computed


# -- step 4: coverage -----------------------------------------------------------------------
def test_coverage_file_lists_op_dtype_device_per_evaluated_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "coverage.tsv"
    monkeypatch.setenv("VKML_COVERAGE", str(path))
    a = vkml.tensor(np.arange(3, dtype=np.int32), device="reference")
    (a * 2 + 1).realize()
    (f32([1.0]).exp()).realize()
    lines = path.read_text().splitlines()
    assert "mul\tint32\treference" in lines
    assert "add\tint32\treference" in lines
    assert "exp\tfloat32\tcpu" in lines
    assert all(len(line.split("\t")) == 3 for line in lines)
    assert not any(line.startswith("data\t") for line in lines)


def test_coverage_report_lists_every_op_including_unused_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "coverage.tsv"
    monkeypatch.setenv("VKML_COVERAGE", str(path))
    (f32([1.0, 2.0], "reference") - 1.0).realize()
    (f32([4.0], "reference") - 1.0).realize()
    report = coverage_report(path)
    assert set(OPS) <= set(report)
    assert report["sub"] == {"float32@reference": 2}
    assert sum(report["erf"].values()) == 0
    assert sum(report["argmin"].values()) == 0
    table = format_coverage(report)
    assert "| erf | 0 | never |" in table
    assert "| sub | 2 |" in table


def test_no_coverage_file_without_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VKML_COVERAGE", raising=False)
    monkeypatch.chdir(tmp_path)
    (f32([1.0], "reference") + 5.0).realize()
    assert list(tmp_path.iterdir()) == []


# -- steps 5 to 7: bind, invoke, mark -------------------------------------------------------
def test_storage_and_computed_are_unset_until_the_invocation_returns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = f32([1.0, 2.0]) * 4.0
    state: dict[str, tuple[bool, bool]] = {}
    monkeypatch.setattr(
        realize_module, "STEP_HOOK",
        lambda name: state.__setitem__(name, (c._node.storage is None, c._node.computed)),
    )  # fmt: skip
    assert unrealized(c)
    c.realize()
    assert state["bind"] == (True, False)
    assert state["invoke"] == (True, False)
    assert c._node.storage is not None and c._node.computed
    assert c.tolist() == [4.0, 8.0]


def test_several_roots_realize_in_one_invocation() -> None:
    a = f32([1.0, 2.0])
    b = a + 1.0
    c = a * 2.0
    d = b * c
    before = vkml.stats()
    vkml.realize(b, c, d)
    assert delta(before)["invocations"] == 1
    assert delta(before)["realizes"] == 1
    assert all(t._node.computed and t._node.storage is not None for t in (b, c, d))
    assert (b.tolist(), c.tolist(), d.tolist()) == ([2.0, 3.0], [2.0, 4.0], [4.0, 12.0])


def test_realize_takes_a_list_of_roots() -> None:
    a = f32([3.0])
    b, c = a - 1.0, a + 1.0
    before = vkml.stats()
    vkml.realize([b, c])
    assert delta(before)["invocations"] == 1
    assert (b.item(), c.item()) == (2.0, 4.0)


def test_failed_invocation_leaves_every_node_unrealized(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(storages: object) -> list[Any]:
        raise vkml.InvocationError("invocation of 'main' failed: injected")

    prepare = vkml.cpu.prepare
    a = f32([1.0, 2.0])
    b = a + 10.0
    c = b * 2.0
    monkeypatch.setattr(vkml.cpu, "prepare", lambda s, r: (broken, prepare(s, r)[1]))
    with pytest.raises(vkml.InvocationError, match="injected"):
        vkml.realize(b, c)
    assert unrealized(b, c)
    monkeypatch.undo()
    vkml.realize(b, c)
    assert (b.tolist(), c.tolist()) == ([11.0, 12.0], [22.0, 24.0])


def test_failed_compile_leaves_every_node_unrealized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str, target: object) -> bytes:
        raise vkml.CompileError("IREE could not compile: injected")

    # A fresh disk cache and a structure no other test builds, so the compiler is reached.
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path))
    x = vkml.tensor(np.arange(33, dtype=np.float32).reshape(3, 11), device="cpu")
    y = (x - 0.25) * 7.0
    z = y.T
    working = vkml.compiler.cache.compile_module
    monkeypatch.setattr(vkml.compiler.cache, "compile_module", broken)
    before = vkml.stats()
    with pytest.raises(vkml.CompileError, match="injected"):
        vkml.realize(y, z)
    assert delta(before)["invocations"] == 0
    assert unrealized(y, z)
    monkeypatch.setattr(vkml.compiler.cache, "compile_module", working)
    vkml.realize(y, z)
    expected = (np.arange(33, dtype=np.float32).reshape(3, 11) - np.float32(0.25)) * np.float32(7)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(z.numpy(), expected.T)


# -- stats and the hot path -----------------------------------------------------------------
def test_stats_has_exactly_the_documented_counters() -> None:
    assert set(vkml.stats()) == STAT_KEYS


def test_reset_stats_zeroes_every_counter() -> None:
    (f32([1.0], "reference") + 1.0).realize()
    vkml.reset_stats()
    assert all(v == 0 for v in vkml.stats().values())


def test_same_structure_with_new_data_is_a_memory_hit_without_compiling() -> None:
    def step(values: np.ndarray) -> vkml.Tensor:
        x = vkml.tensor(values, device="cpu")
        return ((x * 0.5 + 2.0) - x).sum(axis=1)

    rng = np.random.default_rng(0)
    first = rng.standard_normal((4, 6)).astype(np.float32)
    second = rng.standard_normal((4, 6)).astype(np.float32)
    step(first).realize()
    before = vkml.stats()
    out = step(second).realize()
    d = delta(before)
    assert d["compiles"] == 0 and d["cache_hits_disk"] == 0
    assert d["cache_hits_memory"] == 1
    assert d["invocations"] == 1
    ref = vkml.tensor(second, device="reference")
    np.testing.assert_array_equal(out.numpy(), ((ref * 0.5 + 2.0) - ref).sum(axis=1).numpy())


def test_roots_of_one_value_share_one_result() -> None:
    x = vkml.tensor(np.arange(3, dtype=np.float32))
    a, b, c = x + 1.0, x + 1.0, x + 2.0
    vkml.realize(a, b, c)
    assert a.node._storage is b.node._storage and c.node._storage is not a.node._storage
    assert a.tolist() == b.tolist() == [1.0, 2.0, 3.0] and c.tolist() == [2.0, 3.0, 4.0]
