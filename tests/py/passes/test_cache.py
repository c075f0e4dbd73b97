"""The compile cache (vkml/passes/cache.py): memory LRU, disk store, keys, damaged entries."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import vkml
import vkml.passes.cache as cache_module
from vkml.frontend.devices import CPU_TARGET
from vkml.passes.cache import CompileCache, cache_key, default_cache
from vkml.passes.pipeline import compile_module
from vkml.passes.target import Target
from vkml.runtime.stats import snapshot


def _module(op: str) -> str:
    return (
        "module {\n"
        "  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {\n"
        f"    %v0 = stablehlo.{op} %arg0, %arg0 : tensor<4xf32>\n"
        "    return %v0 : tensor<4xf32>\n"
        "  }\n"
        "}\n"
    )


ADD, MUL, SUB = _module("add"), _module("multiply"), _module("subtract")
MAGIC = b"VKMLVMFB1\n"


@pytest.fixture(scope="module")
def add_vmfb() -> bytes:
    """A fresh compile of ADD, straight from the pipeline, with no cache involved."""
    return compile_module(ADD, CPU_TARGET)


class Counters:
    """Differences in the process-wide stats since the object was made."""

    def __init__(self) -> None:
        self.start = snapshot()

    def __getitem__(self, name: str) -> float:
        return snapshot()[name] - self.start[name]


def _valid_entry(path: Path, payload: bytes) -> bool:
    raw = path.read_bytes()
    header = MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n"
    return raw == header + payload


def test_miss_compiles_then_memory_then_disk_hit(tmp_path: Path, add_vmfb: bytes) -> None:
    cache = CompileCache(tmp_path)
    counters = Counters()
    first = cache.get_or_compile(ADD, CPU_TARGET)
    assert first == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (1, 0, 0)
    assert _valid_entry(cache.path_of(cache_key(ADD, CPU_TARGET)), add_vmfb)

    counters = Counters()
    assert cache.get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (0, 1, 0)

    counters = Counters()
    assert CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (0, 0, 1)


def test_entry_path_is_two_char_shard_of_key(tmp_path: Path) -> None:
    key = cache_key(ADD, CPU_TARGET)
    assert len(key) == 64
    assert CompileCache(tmp_path).path_of(key) == tmp_path / key[:2] / f"{key}.vmfb"


def test_key_changes_with_text_and_target() -> None:
    base = cache_key(ADD, CPU_TARGET)
    assert cache_key(ADD, CPU_TARGET) == base
    assert cache_key(MUL, CPU_TARGET) != base
    assert cache_key(ADD + " ", CPU_TARGET) != base
    more_flags = Target(CPU_TARGET.name, CPU_TARGET.backend, CPU_TARGET.driver,
                        (*CPU_TARGET.flags, "--iree-opt-level=O3"))
    assert cache_key(ADD, more_flags) != base
    fewer_flags = Target(CPU_TARGET.name, CPU_TARGET.backend, CPU_TARGET.driver,
                         CPU_TARGET.flags[:-1])
    assert cache_key(ADD, fewer_flags) != base
    renamed = Target("other", CPU_TARGET.backend, CPU_TARGET.driver, CPU_TARGET.flags)
    assert cache_key(ADD, renamed) != base


def test_key_changes_with_compiler_version(monkeypatch: pytest.MonkeyPatch) -> None:
    base = cache_key(ADD, CPU_TARGET)
    monkeypatch.setattr(cache_module, "COMPILER_VERSION", "0.0.0-test")
    assert cache_key(ADD, CPU_TARGET) != base


def test_key_changes_with_vkml_version(monkeypatch: pytest.MonkeyPatch) -> None:
    base = cache_key(ADD, CPU_TARGET)
    monkeypatch.setattr(cache_module, "vkml_version", lambda: "999.0.0")
    assert cache_key(ADD, CPU_TARGET) != base


def test_new_compiler_version_misses_old_disk_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET)
    monkeypatch.setattr(cache_module, "COMPILER_VERSION", "0.0.0-test")
    counters = Counters()
    CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET)
    assert (counters["compiles"], counters["cache_hits_disk"]) == (1, 0)
    assert len(CompileCache(tmp_path).entries()) == 2


def _truncate(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


def _flip_payload_byte(raw: bytes) -> bytes:
    at = len(raw) - 100  # well inside the payload, after magic and digest
    return raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :]


def _wrong_magic(raw: bytes) -> bytes:
    return b"XKML" + raw[4:]  # digest and payload intact: only the magic is wrong


@pytest.mark.parametrize("damage", [_truncate, _flip_payload_byte, _wrong_magic],
                         ids=["truncated", "corrupted", "wrong-magic"])
def test_damaged_entry_is_deleted_and_recompiled(
    tmp_path: Path, add_vmfb: bytes, damage, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET)
    path = CompileCache(tmp_path).path_of(cache_key(ADD, CPU_TARGET))
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)

    deleted: list[bool] = []
    original_compile = cache_module.compile_module

    def compile_and_check(text: str, target: Target) -> bytes:
        deleted.append(not path.exists())  # the bad entry is gone before the recompile
        return original_compile(text, target)

    monkeypatch.setattr(cache_module, "compile_module", compile_and_check)
    counters = Counters()
    result = CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET)
    assert result == add_vmfb
    assert result != damaged
    assert (counters["compiles"], counters["cache_hits_disk"]) == (1, 0)
    assert deleted == [True]
    assert _valid_entry(path, add_vmfb)


def test_lru_evicts_least_recently_used_beyond_capacity(tmp_path: Path, add_vmfb: bytes) -> None:
    cache = CompileCache(tmp_path, capacity=2)
    for text in (ADD, MUL, SUB):
        cache.get_or_compile(text, CPU_TARGET)
    assert cache.info()["memory_entries"] == 2

    counters = Counters()
    assert cache.get_or_compile(SUB, CPU_TARGET) != add_vmfb
    assert (counters["cache_hits_memory"], counters["cache_hits_disk"]) == (1, 0)

    counters = Counters()
    assert cache.get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (0, 0, 1)
    # ADD came back and pushed out the least recently used one, MUL (SUB was just read)
    counters = Counters()
    cache.get_or_compile(MUL, CPU_TARGET)
    assert (counters["cache_hits_memory"], counters["cache_hits_disk"]) == (0, 1)


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    cache.get_or_compile(ADD, CPU_TARGET)
    cache.get_or_compile(MUL, CPU_TARGET)
    assert sorted(p.name for p in tmp_path.rglob(".tmp-*")) == []
    assert len(cache.entries()) == 2


def test_failed_write_leaves_neither_entry_nor_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, add_vmfb: bytes
) -> None:
    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.os, "replace", refuse)
    assert CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert CompileCache(tmp_path).entries() == []
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []


def test_unwritable_directory_does_not_raise_and_recompiles(tmp_path: Path, add_vmfb: bytes) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    counters = Counters()
    assert CompileCache(blocker).get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert CompileCache(blocker).get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert (counters["compiles"], counters["cache_hits_disk"]) == (2, 0)
    assert blocker.read_text() == "a file where the cache directory should be"


def test_info_reports_directory_entries_bytes_and_memory(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path, capacity=7)
    assert cache.info() == {
        "directory": str(tmp_path), "entries": 0, "bytes": 0,
        "memory_entries": 0, "memory_capacity": 7,
    }  # fmt: skip
    cache.get_or_compile(ADD, CPU_TARGET)
    path = cache.path_of(cache_key(ADD, CPU_TARGET))
    assert cache.info() == {
        "directory": str(tmp_path), "entries": 1, "bytes": path.stat().st_size,
        "memory_entries": 1, "memory_capacity": 7,
    }  # fmt: skip


def test_clear_deletes_disk_and_memory_entries(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    cache.get_or_compile(ADD, CPU_TARGET)
    cache.get_or_compile(MUL, CPU_TARGET)
    assert cache.clear() == 2
    assert cache.entries() == []
    assert cache.info()["memory_entries"] == 0
    assert cache.clear() == 0
    counters = Counters()
    cache.get_or_compile(ADD, CPU_TARGET)
    assert counters["compiles"] == 1


def test_default_cache_reads_directory_from_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path / "one"))
    assert default_cache().directory == tmp_path / "one"
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path / "two"))
    assert default_cache().directory == tmp_path / "two"


@pytest.fixture
def empty_default_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The default cache on an empty tmp directory, with no compiled module in memory."""
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path))
    vkml.cpu.clear_executables()
    default_cache().clear_memory()
    yield tmp_path
    vkml.cpu.clear_executables()
    default_cache().clear_memory()


def test_realize_after_restart_loads_from_disk_without_compiling(empty_default_cache: Path) -> None:
    def step(values: list[float]) -> np.ndarray:
        x = vkml.tensor(values)
        return ((x * 3.0 + 1.0) * x).sum(axis=0).numpy()

    counters = Counters()
    assert step([1.0, 2.0, 3.0]) == np.float32(4 + 14 + 30)
    assert counters["compiles"] == 1
    assert len(default_cache().entries()) == 1

    vkml.cpu.clear_executables()  # as a new process would start: nothing loaded, nothing in memory
    default_cache().clear_memory()
    counters = Counters()
    assert step([2.0, 0.0, -1.0]) == np.float32(14 + 0 + 2)
    assert (counters["compiles"], counters["cache_hits_disk"]) == (0, 1)
