"""Behaviour of ``vkml/frontend/eager.py``: realize after every op, errors at the op, the
``VKML_EAGER`` variable read once at first use, and a flag safe to flip from any thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import vkml

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def eager() -> Iterator[None]:
    """Eager mode on for one test, then back to what it was."""
    previous = vkml.is_eager()
    vkml.set_eager(True)
    try:
        yield
    finally:
        vkml.set_eager(previous)


def f32(values: object, device: str = "cpu") -> vkml.Tensor:
    return vkml.tensor(np.asarray(values, dtype=np.float32), device=device)


def run_python(code: str, **env: str) -> list[str]:
    """Run ``code`` in a fresh interpreter with ``env`` added; its stdout lines."""
    full_env = {k: v for k, v in os.environ.items() if k != "VKML_EAGER"}
    full_env.update(env)
    done = subprocess.run(
        [sys.executable, "-c", code], env=full_env, cwd=ROOT,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


# -- eager mode -----------------------------------------------------------------------------
@pytest.mark.usefixtures("eager")
def test_every_op_is_computed_when_it_returns() -> None:
    x = f32([[1.0, -2.0], [3.0, 4.0]])
    results = []
    for make in (
        lambda t: t + 1.0,
        lambda t: t * t,
        lambda t: t.abs(),
        lambda t: t.T,
        lambda t: t[1:, ::-1],
        lambda t: t.reshape(-1),
        lambda t: t.sum(),
    ):
        before = vkml.stats()["invocations"]
        x = make(x)
        assert x._node.computed and x._node.storage is not None
        assert vkml.stats()["invocations"] - before == 1
        results.append(x.numpy())
    # [[1, -2], [3, 4]] -> +1, squared, abs -> [[4, 1], [16, 25]] -> .T[1:, ::-1] -> [[25, 1]]
    np.testing.assert_array_equal(results[-2], np.array([25.0, 1.0], np.float32))
    assert results[-1] == np.float32(26.0)


@pytest.mark.usefixtures("eager")
def test_creation_ops_are_computed_at_once() -> None:
    for t in (vkml.zeros((2, 3)), vkml.arange(5, device="reference"), vkml.full((2,), 7)):
        assert t._node.computed
    assert vkml.arange(4).tolist() == [0, 1, 2, 3]


@pytest.mark.usefixtures("eager")
def test_unsupported_op_raises_at_the_op_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    original = vkml.cpu.supports
    monkeypatch.setattr(vkml.cpu, "supports", lambda op, dtype: op != "exp" and original(op, dtype))
    x = f32([0.0, 1.0])
    with pytest.raises(vkml.UnsupportedOperatorError, match="'exp'"):
        x.exp()
    assert (x + 1.0)._node.computed


def test_lazy_mode_defers_the_error_to_realize(monkeypatch: pytest.MonkeyPatch) -> None:
    vkml.set_eager(False)
    original = vkml.cpu.supports
    monkeypatch.setattr(vkml.cpu, "supports", lambda op, dtype: op != "exp" and original(op, dtype))
    y = f32([0.0, 1.0]).exp()
    assert not y._node.computed
    with pytest.raises(vkml.UnsupportedOperatorError, match="'exp'"):
        y.realize()


def test_set_eager_false_makes_ops_lazy_again(eager: None) -> None:
    vkml.set_eager(False)
    assert not vkml.is_eager()
    y = f32([1.0]) + 1.0
    assert not y._node.computed
    assert y.item() == 2.0


# -- VKML_EAGER -----------------------------------------------------------------------------
PROBE = (
    "import os, vkml\n"
    "x = vkml.tensor([1.0, 2.0], device='reference')\n"
    "y = x + 1.0\n"
    "print(y._node.computed, vkml.is_eager())\n"
    "os.environ['VKML_EAGER'] = {later!r}\n"
    "z = y * 2.0\n"
    "print(z._node.computed, vkml.is_eager(), z.tolist())\n"
)


def test_vkml_eager_1_makes_ops_compute_immediately() -> None:
    out = run_python(PROBE.format(later="0"), VKML_EAGER="1")
    assert out[:2] == ["True", "True"]
    assert out[2:4] == ["True", "True"]  # os.environ changed after first use: ignored


def test_vkml_eager_unset_stays_lazy_when_environ_changes_later() -> None:
    out = run_python(PROBE.format(later="1"))
    assert out[:2] == ["False", "False"]
    assert out[2:4] == ["False", "False"]


@pytest.mark.parametrize(("value", "expected"), [("0", "False"), ("", "False"), ("true", "True")])
def test_vkml_eager_values(value: str, expected: str) -> None:
    assert run_python("import vkml; print(vkml.is_eager())", VKML_EAGER=value) == [expected]


def test_vkml_eager_is_read_at_first_use_not_at_import() -> None:
    code = "import os, vkml\nos.environ['VKML_EAGER'] = '1'\nprint(vkml.is_eager())\n"
    assert run_python(code) == ["True"]


# -- threads --------------------------------------------------------------------------------
def test_flag_flipped_from_many_threads_ends_at_the_last_set_value() -> None:
    previous = vkml.is_eager()
    errors: list[BaseException] = []
    seen: set[object] = set()
    start = threading.Barrier(8)

    def writer(k: int) -> None:
        try:
            start.wait()
            for i in range(2000):
                vkml.set_eager((i + k) % 2 == 0)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def reader() -> None:
        try:
            start.wait()
            for _ in range(2000):
                seen.add(vkml.is_eager())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert seen <= {True, False}
        last = threading.Thread(target=vkml.set_eager, args=(True,))
        last.start()
        last.join()
        assert vkml.is_eager() is True
        vkml.set_eager(False)
        assert vkml.is_eager() is False
    finally:
        vkml.set_eager(previous)
