"""Ctrl-C during the demo (``make demo``): exit status 130, one line saying so, no traceback,
and nothing half-written: no temporary left, every cache entry whole, the curve and the
exported files either absent or complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import matplotlib.figure
import pytest

from vkml.compiler.store import DiskStore

pytest.importorskip("sklearn")
from vkml.examples import digits


def _nothing_half_written(root: Path) -> None:
    assert [p for p in root.rglob("*") if ".tmp-" in p.name] == []
    store = DiskStore(root / "cache")
    for entry in store.entries():
        assert store.read(entry.stem) is not None, f"{entry} is damaged"
    plot = root / "curve.png"
    assert not plot.exists() or plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# The demo as `python -m vkml.examples.digits`, with Ctrl-C raising KeyboardInterrupt even
# where the suite runs as a background job, whose children start with SIGINT ignored.
DEMO = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'digits'; runpy.run_module('vkml.examples.digits', run_name='__main__')"
)


@pytest.mark.parametrize("moment", ["compiling", "training"])
def test_ctrl_c_stops_the_demo_cleanly(tmp_path: Path, moment: str) -> None:
    env = {**os.environ, "VKML_CACHE_DIR": str(tmp_path / "cache")}
    command = [
        sys.executable, "-c", DEMO, "--device", "cpu", "--epochs", "1000",
        "--no-progress", "--plot", str(tmp_path / "curve.png"), "--export", str(tmp_path / "out"),
    ]  # fmt: skip
    demo = subprocess.Popen(
        command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it
    )  # fmt: skip
    assert demo.stdout is not None
    first = "digits:" if moment == "compiling" else "one step on"
    for line in demo.stdout:
        if line.startswith(first):
            break
    if moment == "training":
        time.sleep(1.0)
    os.killpg(demo.pid, signal.SIGINT)
    try:
        _, err = demo.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # Python ignores an interrupt that lands in a __del__:
        os.killpg(demo.pid, signal.SIGINT)  # a user presses Ctrl-C again
        _, err = demo.communicate(timeout=60)
    assert demo.returncode == 130, err
    assert "digits: interrupted; no file was left half-written" in err
    # no traceback but one Python prints for an interrupt it ignored ("Exception ignored in")
    assert err.count("Traceback") == err.count("Exception ignored in"), err
    _nothing_half_written(tmp_path)


def test_an_interrupted_plot_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = matplotlib.figure.Figure.savefig

    def half_then_interrupt(self: matplotlib.figure.Figure, path: str, **kwargs: object) -> None:
        real(self, path, **kwargs)
        with open(path, "r+b") as f:
            f.truncate(100)
        raise KeyboardInterrupt

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half_then_interrupt)
    plot = tmp_path / "curve.png"
    argv = ["--steps", "3", "--device", "cpu", "--no-progress", "--plot", str(plot)]
    assert digits.main([*argv, "--export", str(tmp_path / "out")]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not plot.exists()
    assert [p for p in tmp_path.rglob("*") if ".tmp-" in p.name] == []
