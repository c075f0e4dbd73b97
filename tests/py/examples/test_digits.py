"""The main job (``vkml/examples/digits.py``): the result line, one invocation per training
step with memory-cache hits from step 2, bit-identical weights across runs with one seed,
the reference check, and the held-out accuracy of the full run."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import vkml

pytest.importorskip("sklearn")
from vkml.examples import digits

RESULT = re.compile(
    r"result: accuracy=(\d\.\d{4}) steps_per_s=(\d+) device=(\S+) "
    r"compile_s=(\d+\.\d{2})"
)


@pytest.fixture(scope="module")
def data() -> digits.Digits:
    return digits.load_data(seed=0)


def test_short_run_prints_the_result_line_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "curve.png"
    status = digits.main(["--steps", "12", "--device", "cpu", "--plot", str(plot), "--no-progress"])
    lines = capsys.readouterr().out.splitlines()
    match = RESULT.fullmatch(lines[-1])
    assert match, lines[-1]
    accuracy, steps_per_s, device, _ = match.groups()
    assert device == "cpu" and int(steps_per_s) > 0 and 0.0 < float(accuracy) <= 1.0
    assert f"loss/accuracy curve: {plot}" in lines
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any("initial weights bit-identical" in line and "within" in line for line in lines)
    assert status == 0


def test_each_step_is_one_invocation_and_a_memory_hit_from_step_two(data: digits.Digits) -> None:
    model = digits.make_model(1, vkml.cpu)
    opt = digits.make_optimizer(model, 0.1)
    deltas = []
    for xb, yb in list(digits.batches(data, 128, 1, 0))[:5]:
        x, y = vkml.tensor(xb), vkml.tensor(yb)
        before = vkml.stats()
        digits.training_step(model, opt, x, y)
        after = vkml.stats()
        deltas.append(
            tuple(after[k] - before[k] for k in ("invocations", "compiles", "cache_hits_memory"))
        )
    assert deltas[0][0] == 1
    assert deltas[1:] == [(1, 0, 1)] * 4


def test_two_runs_with_one_seed_give_bit_identical_weights(data: digits.Digits) -> None:
    first = digits.train(data, vkml.cpu, seed=3, max_steps=15).model.state_dict()
    second = digits.train(data, vkml.cpu, seed=3, max_steps=15).model.state_dict()
    other = digits.train(data, vkml.cpu, seed=4, max_steps=15).model.state_dict()
    for name in first:
        assert first[name].tobytes() == second[name].tobytes(), name
    assert not np.array_equal(first["0.weight"], other["0.weight"])


def test_first_step_agrees_with_the_reference_device(data: digits.Digits) -> None:
    agrees, line = digits.check_against_reference(data, vkml.cpu, seed=5, batch_size=128, lr=0.1)
    assert agrees, line
    assert line.startswith("one step on cpu vs reference: initial weights bit-identical")


def test_full_run_reaches_the_accuracy_target(data: digits.Digits) -> None:
    run = digits.train(data, vkml.cpu, seed=0)
    assert run.steps == 30 * (len(data.y_train) // 128)
    assert run.accuracy >= digits.ACCURACY_TARGET
    assert run.losses[-1] < run.losses[0] / 10


def test_held_out_split_is_disjoint_and_fixed_by_the_seed(data: digits.Digits) -> None:
    train_rows = {row.tobytes() for row in data.x_train}
    overlap = sum(row.tobytes() in train_rows for row in data.x_test)
    assert len(data.y_train) + len(data.y_test) == 1797
    assert overlap < 5  # the data set has a few duplicate images, nothing more
    again = digits.load_data(seed=0)
    assert np.array_equal(again.y_test, data.y_test)
