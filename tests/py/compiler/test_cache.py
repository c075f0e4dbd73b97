"""The compile cache (vkml/compiler/cache.py, keys.py, store.py): memory LRU, disk store, keys,
damaged entries."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import vkml
import vkml.compiler.atomic as atomic_module
import vkml.compiler.cache as cache_module
import vkml.compiler.keys as keys_module
from vkml.compiler.cache import CompileCache, cache_key, default_cache
from vkml.compiler.compile import run_pipeline
from vkml.compiler.target import CPU_TARGET, Target, parse_precompile_targets, vulkan_target
from vkml.graph.walk import toposort
from vkml.runtime.stats import snapshot
from vkml.runtime.vulkan_loader import vulkan_device_reports


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
MAGIC = b"VKMLVMFB2\n"


@pytest.fixture(scope="module")
def add_vmfb() -> bytes:
    """A fresh compile of ADD, straight from the pipeline, with no cache involved."""
    return run_pipeline(ADD, CPU_TARGET)


class Counters:
    """Differences in the process-wide stats since the object was made."""

    def __init__(self) -> None:
        self.start = snapshot()

    def __getitem__(self, name: str) -> float:
        return snapshot()[name] - self.start[name]


def _valid_entry(path: Path, payload: bytes, manifest: bytes = b"") -> bool:
    raw = path.read_bytes()
    body = manifest + b"\n" + payload
    header = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n"
    return raw == header + body


def test_miss_compiles_then_memory_then_disk_hit(tmp_path: Path, add_vmfb: bytes) -> None:
    cache = CompileCache(tmp_path)
    counters = Counters()
    first = cache.get_or_compile(ADD, CPU_TARGET)
    assert first == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (
        1,
        0,
        0,
    )
    assert _valid_entry(cache.path_of(cache_key(ADD, CPU_TARGET)), add_vmfb)

    counters = Counters()
    assert cache.get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (
        0,
        1,
        0,
    )

    counters = Counters()
    assert CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (
        0,
        0,
        1,
    )


def test_entry_path_is_two_char_shard_of_key(tmp_path: Path) -> None:
    key = cache_key(ADD, CPU_TARGET)
    assert len(key) == 64
    assert CompileCache(tmp_path).path_of(key) == tmp_path / key[:2] / f"{key}.vmfb"


def test_key_changes_with_text_and_target() -> None:
    base = cache_key(ADD, CPU_TARGET)
    assert cache_key(ADD, CPU_TARGET) == base
    assert cache_key(MUL, CPU_TARGET) != base
    assert cache_key(ADD + " ", CPU_TARGET) != base
    more_flags = Target(
        CPU_TARGET.name,
        CPU_TARGET.backend,
        CPU_TARGET.driver,
        (*CPU_TARGET.flags, "--iree-opt-level=O3"),
    )
    assert cache_key(ADD, more_flags) != base
    fewer_flags = Target(
        CPU_TARGET.name, CPU_TARGET.backend, CPU_TARGET.driver, CPU_TARGET.flags[:-1]
    )
    assert cache_key(ADD, fewer_flags) != base
    renamed = Target("other", CPU_TARGET.backend, CPU_TARGET.driver, CPU_TARGET.flags)
    assert cache_key(ADD, renamed) != base


def test_key_changes_with_iree_version(monkeypatch: pytest.MonkeyPatch) -> None:
    base = cache_key(ADD, CPU_TARGET)
    monkeypatch.setattr(keys_module, "iree_version", lambda: "0.0.0-test")
    assert cache_key(ADD, CPU_TARGET) != base


def test_key_names_the_runtime_release_read_without_importing_iree() -> None:
    assert keys_module.iree_version() == metadata.version("iree-base-runtime")
    h = hashlib.sha256()
    parts = (ADD, CPU_TARGET.name, CPU_TARGET.backend, *CPU_TARGET.flags, "loop-cap=None",
             metadata.version("iree-base-runtime"), keys_module.vkml_version(),
             keys_module.pipeline_fingerprint(), keys_module.host_cpu())  # fmt: skip
    for part in parts:
        h.update(part.encode() + b"\0")
    assert cache_key(ADD, CPU_TARGET) == h.hexdigest()


def test_vkml_version_comes_from_the_checkout_without_package_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # on a GPU machine vkml runs from PYTHONPATH, with no metadata: the key must not change
    def no_metadata(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    pyproject = Path(keys_module.__file__).resolve().parents[2] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["version"]
    monkeypatch.setattr(keys_module.metadata, "version", no_metadata)
    assert keys_module.vkml_version.__wrapped__() == declared


def test_compile_refuses_a_compiler_of_another_release_than_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cache_module, "iree_version", lambda: "3.13.0")
    monkeypatch.setattr(cache_module, "distribution_version", lambda name: "3.14.1")
    with pytest.raises(vkml.CompileError) as info:
        cache_module.compile_module(ADD, CPU_TARGET)
    message = str(info.value)
    assert "iree-base-compiler 3.14.1 and iree-base-runtime 3.13.0" in message
    assert "pip install iree-base-compiler==3.13.0" in message


def test_key_changes_with_vkml_version(monkeypatch: pytest.MonkeyPatch) -> None:
    base = cache_key(ADD, CPU_TARGET)
    monkeypatch.setattr(keys_module, "vkml_version", lambda: "999.0.0")
    assert cache_key(ADD, CPU_TARGET) != base


def test_new_iree_version_misses_old_disk_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET)
    monkeypatch.setattr(keys_module, "iree_version", lambda: "0.0.0-test")
    monkeypatch.setattr(cache_module, "iree_version", lambda: "0.0.0-test")
    monkeypatch.setattr(cache_module, "distribution_version", lambda name: "0.0.0-test")
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


@pytest.mark.parametrize(
    "damage",
    [_truncate, _flip_payload_byte, _wrong_magic],
    ids=["truncated", "corrupted", "wrong-magic"],
)
def test_damaged_entry_is_deleted_and_recompiled(
    tmp_path: Path,
    add_vmfb: bytes,
    damage,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
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
    assert (counters["compiles"], counters["cache_hits_memory"], counters["cache_hits_disk"]) == (
        0,
        0,
        1,
    )
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

    monkeypatch.setattr(atomic_module.os, "replace", refuse)
    with pytest.warns(vkml.CacheWarning, match="No space left on device"):
        assert CompileCache(tmp_path).get_or_compile(ADD, CPU_TARGET) == add_vmfb
    assert CompileCache(tmp_path).entries() == []
    left = [p.name for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock"]
    assert left == []


def test_unwritable_directory_does_not_raise_and_recompiles(
    tmp_path: Path, add_vmfb: bytes
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    counters = Counters()
    with pytest.warns(vkml.CacheWarning, match="cannot write its compile cache"):
        first = CompileCache(blocker).get_or_compile(ADD, CPU_TARGET)
    assert first == add_vmfb
    assert CompileCache(blocker).get_or_compile(ADD, CPU_TARGET) == add_vmfb  # warned once
    assert (counters["compiles"], counters["cache_hits_disk"]) == (2, 0)
    assert blocker.read_text() == "a file where the cache directory should be"


def test_info_reports_directory_entries_bytes_and_memory(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path, capacity=7)
    assert cache.info() == {
        "directory": str(tmp_path), "entries": 0, "bytes": 0,
        "memory_entries": 0, "memory_capacity": 7, "shared": [],
    }  # fmt: skip
    cache.get_or_compile(ADD, CPU_TARGET)
    path = cache.path_of(cache_key(ADD, CPU_TARGET))
    assert cache.info() == {
        "directory": str(tmp_path), "entries": 1, "bytes": path.stat().st_size,
        "memory_entries": 1, "memory_capacity": 7, "shared": [],
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


# --- VKML_PRECOMPILE_VULKAN: compiling here for another machine's GPU ------------------------

LLVMPIPE = vulkan_target("llvmpipe", float64=True)
AMPERE_F64 = vulkan_target("ampere", float64=True)


def test_precompile_spec_reads_targets_and_float64() -> None:
    targets = parse_precompile_targets(" ampere+f64, rdna3,,ampere+f64 ")
    assert targets == [AMPERE_F64, vulkan_target("rdna3", float64=False)]
    assert AMPERE_F64.flags == (
        "--iree-vulkan-target=ampere",
        "--iree-input-demote-f64-to-f32=false",
        "--iree-hal-memoization=false",
        "--iree-opt-const-expr-hoisting=false",
    )
    assert "--iree-opt-const-expr-hoisting=false" in CPU_TARGET.flags  # quadratic compile time
    assert vulkan_target("rdna3", float64=False).flags[1] == "--iree-input-demote-f64-to-f32=true"
    assert parse_precompile_targets("") == []


def test_vulkan_compile_also_compiles_listed_targets_onto_disk_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_PRECOMPILE_VULKAN", "ampere+f64")
    cache = CompileCache(tmp_path)
    counters = Counters()
    local = cache.get_or_compile(ADD, LLVMPIPE)
    assert counters["compiles"] == 2
    assert [p.name for p in cache.entries()] == sorted(
        f"{cache_key(ADD, t)}.vmfb" for t in (LLVMPIPE, AMPERE_F64)
    )
    assert cache.info()["memory_entries"] == 1  # the other GPU's module is not kept in memory

    monkeypatch.delenv("VKML_PRECOMPILE_VULKAN")
    counters = Counters()
    remote = CompileCache(tmp_path).get_or_compile(ADD, AMPERE_F64)  # as the GPU machine asks
    assert (counters["compiles"], counters["cache_hits_disk"]) == (0, 1)
    assert remote != local


def test_disk_hit_fills_in_a_missing_precompiled_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    CompileCache(tmp_path).get_or_compile(ADD, LLVMPIPE)
    monkeypatch.setenv("VKML_PRECOMPILE_VULKAN", "ampere+f64")
    counters = Counters()
    CompileCache(tmp_path).get_or_compile(ADD, LLVMPIPE)
    assert (counters["compiles"], counters["cache_hits_disk"]) == (1, 1)
    assert CompileCache(tmp_path).path_of(cache_key(ADD, AMPERE_F64)).exists()

    counters = Counters()  # both on disk now: nothing more to compile
    CompileCache(tmp_path).get_or_compile(ADD, LLVMPIPE)
    assert (counters["compiles"], counters["cache_hits_disk"]) == (0, 1)


def test_cpu_compiles_are_not_precompiled_for_vulkan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_PRECOMPILE_VULKAN", "ampere+f64")
    cache = CompileCache(tmp_path)
    cache.get_or_compile(ADD, CPU_TARGET)
    assert [p.name for p in cache.entries()] == [f"{cache_key(ADD, CPU_TARGET)}.vmfb"]


@pytest.mark.parametrize("spec", ["hopper", "ampere+fp64", "ampere,sm_90+f64"])
def test_unknown_precompile_target_is_refused_before_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    compiled: list[str] = []
    monkeypatch.setattr(
        cache_module, "compile_module", lambda text, target: compiled.append(target.name)
    )
    monkeypatch.setenv("VKML_PRECOMPILE_VULKAN", spec)
    with pytest.raises(vkml.DeviceError) as info:
        CompileCache(tmp_path).get_or_compile(ADD, LLVMPIPE)
    message = str(info.value)
    assert f"VKML_PRECOMPILE_VULKAN={spec!r}" in message
    assert "<target>+f64" in message and "ampere+f64" in message and "llvmpipe" in message
    assert compiled == []  # an unknown --iree-vulkan-target crashes iree-compile
    assert CompileCache(tmp_path).entries() == []


def test_realize_on_vulkan_stores_the_ampere_module_beside_its_own(
    empty_default_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not vulkan_device_reports():
        pytest.skip("no Vulkan device: apt-get install libvulkan1 mesa-vulkan-drivers")
    gpu = vkml.device("vulkan:0")
    gpu.clear_executables()
    monkeypatch.setenv("VKML_PRECOMPILE_VULKAN", "ampere+f64")
    x = vkml.tensor(np.array([1.0, -2.0, 3.5], np.float32), device=gpu)
    y = (x - 0.75) * x
    text = gpu._lower(toposort([y.node]), [y.node]).text  # the text realize compiles
    assert np.array_equal(y.numpy(), np.array([0.25, 5.5, 9.625], np.float32))
    entries = sorted(p.name for p in default_cache().entries())
    wanted = {cache_key(text, gpu.target), cache_key(text, AMPERE_F64)}
    assert len(wanted) == 2 and entries == sorted(f"{k}.vmfb" for k in wanted)
    gpu.clear_executables()
