"""Processes and threads sharing one cache directory (vkml/compiler/store.py): each key is
compiled once however many ask for it at the same moment, no reader sees half an entry, and
every one of them gets the same module."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import vkml.compiler.cache as cache_module
from vkml.compiler.cache import CompileCache, cache_key
from vkml.compiler.store import DiskStore
from vkml.compiler.target import CPU_TARGET, Target

# A fresh module per test run (a constant no other test uses), so nothing is cached yet.
WORKER = """
import sys, time, hashlib
from pathlib import Path
from vkml.compiler.cache import CompileCache
from vkml.compiler.target import CPU_TARGET
from vkml.runtime.stats import snapshot
directory, go, constant = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
text = (
    "module {\\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\\n"
    f"    %c = stablehlo.constant dense<{constant}> : tensor<4xf32>\\n"
    "    %v = stablehlo.add %a, %c : tensor<4xf32>\\n    return %v : tensor<4xf32>\\n  }\\n}\\n"
)
print("ready", flush=True)
while not go.exists():
    time.sleep(0.005)
vmfb = CompileCache(directory).get_or_compile(text, CPU_TARGET)
print(int(snapshot()["compiles"]), hashlib.sha256(vmfb).hexdigest(), flush=True)
"""


def _race(tmp_path: Path, constants: list[str], go: str = "go") -> list[tuple[int, str]]:
    """Start one worker per constant on ``tmp_path/cache``, release them together (by
    creating ``tmp_path/go``), return each one's (compiles, digest of its module)."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path / "cache"), str(tmp_path / go), c],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for c in constants
    ]
    for w in workers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    (tmp_path / go).touch()
    results = []
    for w in workers:
        out, _ = w.communicate(timeout=300)
        assert w.returncode == 0
        compiles, digest = out.split()
        results.append((int(compiles), digest))
    return results


def _fresh(tag: str) -> str:
    return f"{time.time_ns() % 100000}.{tag}"


def test_processes_asking_for_one_key_at_once_compile_it_once(tmp_path: Path) -> None:
    constant = _fresh("25")
    results = _race(tmp_path, [constant] * 4)
    assert sum(compiles for compiles, _ in results) == 1
    assert len({digest for _, digest in results}) == 1
    entries = DiskStore(tmp_path / "cache").entries()
    assert len(entries) == 1
    assert [p for p in (tmp_path / "cache").rglob(".*tmp-*")] == []


def test_processes_compiling_different_keys_at_once_each_store_theirs(tmp_path: Path) -> None:
    constants = [_fresh(str(k)) for k in range(1, 4)]
    results = _race(tmp_path, constants)
    assert [compiles for compiles, _ in results] == [1, 1, 1]
    assert len(DiskStore(tmp_path / "cache").entries()) == 3
    again = _race(tmp_path, constants, go="again")  # each now finds its entry on disk
    assert [compiles for compiles, _ in again] == [0, 0, 0]
    assert [d for _, d in again] == [d for _, d in results]


def test_threads_asking_for_one_key_at_once_compile_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (
        "module {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %v = stablehlo.subtract %a, %a : tensor<4xf32>\n    return %v : tensor<4xf32>\n"
        "  }\n}\n"
    )
    calls: list[str] = []
    real = cache_module.compile_module

    def counted(text: str, target: Target) -> bytes:
        calls.append(target.name)
        time.sleep(0.2)  # long enough that every thread arrives while it runs
        return real(text, target)

    monkeypatch.setattr(cache_module, "compile_module", counted)
    cache = CompileCache(tmp_path / "cache")
    got: list[bytes] = []
    start = threading.Barrier(6)

    def ask() -> None:
        start.wait()
        got.append(cache.get_or_compile(text, CPU_TARGET))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert len(got) == 6 and len(set(got)) == 1
    assert calls == [CPU_TARGET.name]
    assert cache.path_of(cache_key(text, CPU_TARGET)).exists()
