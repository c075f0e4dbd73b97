"""Who could have written what vkml runs (vkml/compiler/trust.py, store.py): the cache is
created private, refuses directories and entries another user could have written or owns,
takes a shared read-only cache only when named, and warns once where it cannot write.

Ownership cases chown files to another uid, which only root may do; they skip elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import vkml
import vkml.compiler.store as store_module
from vkml.compiler.cache import CompileCache, cache_key, default_cache
from vkml.compiler.target import CPU_TARGET
from vkml.runtime.stats import snapshot

ADD = (
    "module {\n"
    "  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {\n"
    "    %v0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n"
    "    return %v0 : tensor<4xf32>\n"
    "  }\n"
    "}\n"
)
KEY = cache_key(ADD, CPU_TARGET)
OTHER_UID = 54321
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def compiles() -> float:
    return snapshot()["compiles"]


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    """A cache directory (its parent private, as a home directory is) holding ADD's entry."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    directory = home / "cache"
    CompileCache(directory).get_or_compile(ADD, CPU_TARGET)
    return directory


def entry(directory: Path) -> Path:
    return CompileCache(directory).path_of(KEY)


def test_new_cache_directory_is_private_and_entries_are_writable_by_their_owner_only(
    tmp_path: Path,
) -> None:
    old = os.umask(0o002)  # a umask that would make files group-writable
    try:
        CompileCache(tmp_path / "cache").get_or_compile(ADD, CPU_TARGET)
    finally:
        os.umask(old)
    path = entry(tmp_path / "cache")
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700
    assert path.parent.stat().st_mode & 0o022 == 0
    assert path.stat().st_mode & 0o022 == 0
    before = compiles()
    CompileCache(tmp_path / "cache").get_or_compile(ADD, CPU_TARGET)  # its own entry is loaded
    assert compiles() == before


@pytest.mark.parametrize("where", ["directory", "shard", "entry"])
@pytest.mark.parametrize("mode", [0o020, 0o002], ids=["group-writable", "world-writable"])
def test_writable_by_others_is_refused_naming_the_path_and_the_fix(
    filled: Path, where: str, mode: int
) -> None:
    target = {"directory": filled, "shard": entry(filled).parent, "entry": entry(filled)}[where]
    os.chmod(target, target.stat().st_mode | mode)
    before = compiles()
    with pytest.raises(vkml.UntrustedPathError) as info:
        CompileCache(filled).get_or_compile(ADD, CPU_TARGET)
    assert info.value.path == target
    assert f"chmod go-w {target}" in str(info.value)
    assert "can be written by" in str(info.value)
    assert compiles() == before  # refused before anything ran or compiled
    assert isinstance(info.value, PermissionError)


def test_a_directory_above_the_cache_that_others_can_write_is_refused(filled: Path) -> None:
    home = filled.parent
    os.chmod(home, 0o777)
    with pytest.raises(vkml.UntrustedPathError, match="can be written by others") as info:
        CompileCache(filled).get_or_compile(ADD, CPU_TARGET)
    assert info.value.path == home


def test_a_sticky_directory_above_the_cache_is_allowed(filled: Path) -> None:
    os.chmod(filled.parent, 0o1777)  # like /tmp: others cannot replace what is ours
    before = compiles()
    CompileCache(filled).get_or_compile(ADD, CPU_TARGET)
    assert compiles() == before


def test_a_cache_directory_that_does_not_exist_yet_is_checked_above(tmp_path: Path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    with pytest.raises(vkml.UntrustedPathError):
        CompileCache(open_dir / "cache").get_or_compile(ADD, CPU_TARGET)
    assert not (open_dir / "cache").exists()


@ROOT_ONLY
@pytest.mark.parametrize("where", ["directory", "entry"])
def test_owned_by_another_user_is_refused(filled: Path, where: str) -> None:
    """The planted entry: valid bytes, sound checksum, written by someone else."""
    target = filled if where == "directory" else entry(filled)
    os.chown(target, OTHER_UID, OTHER_UID)
    with pytest.raises(vkml.UntrustedPathError) as info:
        CompileCache(filled).get_or_compile(ADD, CPU_TARGET)
    assert f"owned by uid {OTHER_UID}" in str(info.value)
    assert "chown" in str(info.value) and str(target) in str(info.value)


@ROOT_ONLY
def test_a_named_shared_cache_of_another_owner_is_read_and_never_written(
    filled: Path, tmp_path: Path
) -> None:
    for path in [filled, *filled.rglob("*")]:
        os.chown(path, OTHER_UID, OTHER_UID)
    os.chmod(filled, 0o755)
    before = sorted(filled.rglob("*"))
    own = tmp_path / "own"
    counted = compiles()
    cache = CompileCache(own, shared=[filled])
    cache.get_or_compile(ADD, CPU_TARGET)
    assert compiles() == counted  # read from the shared cache
    mul = ADD.replace("stablehlo.add", "stablehlo.multiply")
    cache.get_or_compile(mul, CPU_TARGET)
    assert compiles() == counted + 1
    assert sorted(filled.rglob("*")) == before  # the new module went to the own directory
    assert cache.path_of(cache_key(mul, CPU_TARGET)).exists()


def test_a_shared_cache_others_can_write_is_refused(filled: Path, tmp_path: Path) -> None:
    os.chmod(entry(filled), 0o666)
    with pytest.raises(vkml.UntrustedPathError, match="VKML_SHARED_CACHE"):
        CompileCache(tmp_path / "own", shared=[filled]).get_or_compile(ADD, CPU_TARGET)


def test_shared_caches_come_from_the_environment(
    filled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VKML_SHARED_CACHE", os.pathsep.join([str(tmp_path / "none"), str(filled)]))
    counted = compiles()
    CompileCache(tmp_path / "own").get_or_compile(ADD, CPU_TARGET)
    assert compiles() == counted
    assert CompileCache(tmp_path / "own").info()["shared"] == [str(tmp_path / "none"), str(filled)]


def test_a_full_disk_warns_once_and_keeps_compiling_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(path: Path, content: bytes, mode: int) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module, "write_atomically", full)
    monkeypatch.setattr(store_module, "_warned", set())
    cache = CompileCache(tmp_path / "cache")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache.get_or_compile(ADD, CPU_TARGET)
        cache.get_or_compile(ADD.replace("add", "multiply"), CPU_TARGET)
    said = [w for w in caught if issubclass(w.category, vkml.CacheWarning)]
    assert len(said) == 1
    assert "No space left on device" in str(said[0].message)
    assert "VKML_CACHE_DIR" in str(said[0].message)
    assert cache.entries() == []


def _immutable(path: Path, on: bool) -> bool:
    """``chattr +i`` (root with CAP_LINUX_IMMUTABLE): a directory no one, root included, can
    write; True if it took."""
    flag = "+i" if on else "-i"
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def read_only_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The default cache on an empty directory nothing can be written into."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    if os.geteuid() != 0:
        os.chmod(cache, 0o500)
    elif not _immutable(cache, True):
        pytest.skip("cannot make a directory read-only for root here (no chattr +i)")
    monkeypatch.setenv("VKML_CACHE_DIR", str(cache))
    monkeypatch.setattr(store_module, "_warned", set())
    vkml.cpu.clear_executables()
    default_cache().clear_memory()
    yield cache
    vkml.cpu.clear_executables()
    default_cache().clear_memory()
    if os.geteuid() == 0:
        _immutable(cache, False)
    os.chmod(cache, 0o700)


def test_a_read_only_cache_directory_costs_one_warning_and_nothing_else(
    read_only_cache: Path,
) -> None:
    def graphs(device: vkml.Device) -> list[vkml.Tensor]:
        x = vkml.tensor(np.arange(6, dtype=np.float32), device=device)
        return [((x * 3.0 + 1.0) - x).sum(), ((x * 5.0) + 2.0).amax()]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [t.numpy() for t in graphs(vkml.cpu)]
    want = [t.numpy() for t in graphs(vkml.reference)]
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    said = [w for w in caught if issubclass(w.category, vkml.CacheWarning)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert str(read_only_cache) in str(said[0].message)
    assert list(read_only_cache.iterdir()) == []
