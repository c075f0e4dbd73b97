"""The convolutional example (``vkml/examples/cnn.py``, issue 31): the full run reaches its
held-out accuracy target with the reference check and the export agreeing, and each
training step is one invocation, a memory hit from step two."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import vkml

pytest.importorskip("sklearn")
from vkml.examples import cnn, digits

RESULT = re.compile(r"result: accuracy=(\d\.\d{4}) steps_per_s=(\d+) device=cpu compile_s=\S+")


def test_the_full_run_reaches_the_target_on_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = cnn.main(["--device", "cpu", "--no-progress", "--plot", str(tmp_path / "c.png"),
                       "--export", str(tmp_path / "export")])  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    match = RESULT.fullmatch(lines[-1])
    assert match, lines[-1]
    assert float(match.group(1)) >= cnn.ACCURACY_TARGET
    assert any("initial weights bit-identical" in line and "within" in line for line in lines)
    assert any("the same labels as vkml, bit for bit" in line for line in lines)
    assert status == 0


def test_each_cnn_step_is_one_invocation_and_a_memory_hit_from_step_two() -> None:
    data = cnn.load_images(seed=0)
    model = cnn.make_model(1, vkml.cpu)
    step = digits.compiled_step(model, digits.make_optimizer(model, 0.05))
    deltas = []
    for xb, yb in list(digits.batches(data, 64, 1, 0))[:4]:
        before = vkml.stats()
        step(xb, yb).item()
        after = vkml.stats()
        deltas.append(tuple(after[k] - before[k] for k in ("invocations", "compiles")))
    assert [d[0] for d in deltas] == [1, 1, 1, 1]
    assert [d[1] for d in deltas[1:]] == [0, 0, 0]
