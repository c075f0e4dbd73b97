"""The ``vkml`` command line (vkml/cli.py) and ``python -m vkml``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from importlib import metadata
from pathlib import Path

import pytest

from vkml.cli import human_bytes, main
from vkml.dialect.ir import COMPILER_VERSION

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty compile-cache directory that the default cache uses for this test."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("VKML_CACHE_DIR", str(directory))
    return directory


def _fake_entry(directory: Path, key: str, size: int) -> Path:
    """A file where the cache keeps an entry: the CLI counts and deletes, it never loads."""
    path = directory / key[:2] / f"{key}.vmfb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def test_cache_info_on_empty_directory(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"directory: {cache_dir}\n" in out
    assert "entries: 0\n" in out
    assert "size: 0 B (0 bytes)\n" in out
    assert re.search(r"^memory: \d+/256 entries$", out, re.MULTILINE), out


def test_cache_info_counts_entries_and_bytes(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_entry(cache_dir, "ab" + "0" * 62, 1000)
    _fake_entry(cache_dir, "cd" + "1" * 62, 2072)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "entries: 2\n" in out
    assert "size: 3.0 KiB (3072 bytes)\n" in out


def test_cache_info_names_the_shared_caches(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_SHARED_CACHE", "/srv/team-cache")
    assert main(["cache", "info"]) == 0
    assert "shared (read-only, VKML_SHARED_CACHE): /srv/team-cache\n" in capsys.readouterr().out


def test_cache_clear_removes_entries_and_reports_bytes(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = cache_dir / "notes.txt"
    entries = [_fake_entry(cache_dir, f"{i:02x}" + "f" * 62, 512) for i in range(3)]
    kept.write_text("not a cache entry")
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 3 entries, freed 1.5 KiB (1536 bytes)" in out
    assert not any(p.exists() for p in entries)
    assert kept.read_text() == "not a cache entry"

    assert main(["cache", "clear"]) == 0
    assert "removed 0 entries, freed 0 B (0 bytes)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
     (5 * 1024**2, "5.0 MiB"), (3 * 1024**3, "3.0 GiB"), (4096 * 1024**3, "4096.0 GiB")],
)  # fmt: skip
def test_human_bytes(n: int, text: str) -> None:
    assert human_bytes(n) == text


def test_coverage_prints_table_for_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "coverage.tsv"
    path.write_text("add\tfloat32\tcpu\nadd\tfloat32\tcpu\nsum\tint64\treference\n")
    assert main(["coverage", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| op | evaluations | dtype@device |\n")
    assert "| add | 2 | float32@cpu ×2 |" in out
    assert "| sum | 1 | int64@reference ×1 |" in out
    assert "| matmul | 0 | never |" in out


def test_coverage_of_missing_file_is_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.tsv"
    assert main(["coverage", str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert str(missing) in captured.err
    assert "does not exist" in captured.err
    assert "Traceback" not in captured.err


def test_version_prints_vkml_compiler_and_runtime(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"vkml {metadata.version('vkml')}",
        f"iree-base-compiler {COMPILER_VERSION}",
        f"iree-base-runtime {metadata.version('iree-base-runtime')}",
    ]


def _fake_examples(monkeypatch: pytest.MonkeyPatch, demo: types.ModuleType | None) -> None:
    """Stand-ins for ``vkml.examples`` and its ``digits`` module, whether or not they exist."""
    package = types.ModuleType("vkml.examples")
    package.__path__ = []
    monkeypatch.setitem(sys.modules, "vkml.examples", package)
    monkeypatch.setitem(sys.modules, "vkml.examples.digits", demo)


def test_demo_runs_the_digits_main_job_without_cli_arguments(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = types.ModuleType("vkml.examples.digits")
    fake.main = lambda argv: print(f"digits ran with {argv}")  # type: ignore[attr-defined]
    _fake_examples(monkeypatch, fake)
    assert main(["demo"]) == 0
    assert capsys.readouterr().out == "digits ran with []\n"


def test_demo_cnn_runs_the_convolutional_example(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = types.ModuleType("vkml.examples.cnn")
    fake.main = lambda argv: print(f"cnn ran with {argv}") or 0  # type: ignore[attr-defined]
    _fake_examples(monkeypatch, None)
    monkeypatch.setitem(sys.modules, "vkml.examples.cnn", fake)
    assert main(["demo", "cnn"]) == 0
    assert capsys.readouterr().out == "cnn ran with []\n"
    assert main(["demo", "resnet"]) == 2  # argparse: not one of the demos
    assert "invalid choice: 'resnet'" in capsys.readouterr().err


def test_demo_missing_is_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_examples(monkeypatch, None)  # the import fails as if the file were absent
    assert main(["demo"]) == 1
    err = capsys.readouterr().err
    assert "vkml.examples.digits" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["cache"], ["cache", "purge"], ["coverage"]])
def test_bad_command_line_exits_2_with_usage(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "usage: vkml" in captured.err
    assert "Traceback" not in captured.err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("cache", "coverage", "version", "demo"):
        assert command in out


def test_python_dash_m_vkml_cache_info(cache_dir: Path) -> None:
    _fake_entry(cache_dir, "ee" + "2" * 62, 10)
    proc = subprocess.run(
        [sys.executable, "-m", "vkml", "cache", "info"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={**os.environ, "VKML_CACHE_DIR": str(cache_dir)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"directory: {cache_dir}\n" in proc.stdout
    assert "entries: 1\n" in proc.stdout
    assert "size: 10 B (10 bytes)\n" in proc.stdout
    assert "memory: 0/256 entries\n" in proc.stdout


def test_python_dash_m_vkml_error_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vkml", "coverage", str(tmp_path / "missing.tsv")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_devices_lists_cpu_reference_and_vulkan(capsys: pytest.CaptureFixture[str]) -> None:
    from vkml.cli import main
    from vkml.runtime.vulkan_loader import vulkan_device_reports

    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "| cpu " in out and "| reference " in out
    assert "| loop cap |" in out
    for report in vulkan_device_reports():
        assert f"vulkan:{report.index}" in out and report.name in out
        row = next(line for line in out.splitlines() if line.startswith(f"| vulkan:{report.index}"))
        cap = f"{report.shader_loop_cap:,}" if report.shader_loop_cap else "none"
        assert row.rstrip().endswith(f"| {cap} |")
    assert "(best)" in out
