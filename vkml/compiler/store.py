"""One directory of compiled modules on disk: the entry format, who may have written it, the
atomic write, and the lock that lets one process compile a key while the others wait.

An entry is ``<directory>/<key[:2]>/<key>.vmfb``: a magic line, the SHA-256 of the body, and
the body (the module's ABI manifest, one line of JSON, then the ``.vmfb`` bytes). A truncated
or corrupted entry, or one whose manifest is not the calling convention the caller lowered, is
never loaded; a private store deletes it so that it is compiled again.

A store is ``private`` (vkml's own cache: created 0700, read and written) or ``shared`` (a
read-only cache the user named, e.g. a team's precompiled modules: only read). Before an entry
is read, the directory and the entry are checked as ``vkml.compiler.trust`` says, since an
entry is code vkml will run.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vkml.compiler import trust
from vkml.compiler.atomic import TEMPORARY_MARK, write_atomically
from vkml.errors import CacheWarning, UntrustedPathError

MAGIC = b"VKMLVMFB2\n"
SUFFIX = ".vmfb"
_LOCK_SUFFIX = ".lock"
_HEADER = len(MAGIC) + 65
# A temporary older than this is a dead writer's; the next write to its shard deletes it.
STALE_TEMPORARY_S = 3600.0

# Directories already warned about this process: one warning each, however many writes fail.
_warned: set[Path] = set()
_warned_lock = threading.Lock()


class DiskStore:
    """The entries of one cache directory under one trust rule (``private`` or ``shared``)."""

    def __init__(self, directory: Path, rule: str = "private") -> None:
        self.directory = directory
        self.rule = rule

    def path_of(self, key: str) -> Path:
        return self.directory / key[:2] / (key + SUFFIX)

    def check(self) -> None:
        """Refuse (``UntrustedPathError``) a directory someone else could have filled."""
        trust.check(self.directory, self.rule, _refusal(self.rule))

    def load(self, key: str, manifest: str) -> bytes | None:
        """The module stored under ``key``, None when there is none or it is damaged or was
        stored for another calling convention (``manifest``; "" takes any)."""
        entry = self.read(key)
        if entry is not None and (not manifest or entry[0] == manifest):
            return entry[1]
        if self.rule == "private":
            try:
                self.path_of(key).unlink(missing_ok=True)  # damaged, or another ABI
            except OSError:
                pass  # not there to delete (no directory), or not ours to
        return None

    def read(self, key: str) -> tuple[str, bytes] | None:
        """(manifest, vmfb) of the sound entry ``key``, else None; checked before it is read."""
        path = self.path_of(key)
        if not path.exists():
            return None
        found = trust.find_problem_below(self.directory, path, self.rule)
        if found is not None:
            raise UntrustedPathError(found.message(_refusal(self.rule)), path=found.path)
        try:
            return _unwrap(path.read_bytes())
        except OSError:
            return None

    def store(self, key: str, manifest: str, vmfb: bytes) -> None:
        """Write the entry; a directory that cannot take it (read-only, full) costs a compile
        in a later process and one ``CacheWarning`` in this one, nothing more."""
        body = manifest.encode() + b"\n" + vmfb
        content = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        try:
            self._make_dirs(key)
            _sweep(self.path_of(key).parent, time.time() - STALE_TEMPORARY_S)
            write_atomically(self.path_of(key), content, mode=0o644)
        except OSError as exc:
            self.warn_unwritable(exc)

    def _make_dirs(self, key: str) -> None:
        trust.make_private_dir(self.directory)
        self.path_of(key).parent.mkdir(mode=0o755, exist_ok=True)

    @contextmanager
    def compiling(self, key: str) -> Iterator[None]:
        """Hold ``key``'s compile lock (an exclusive ``flock`` on ``<key>.lock``) for the body:
        another process or thread compiling the same key waits, then finds its entry. Where
        the lock cannot be made (a read-only or full directory) the body runs unlocked."""
        path = self.path_of(key).with_suffix(_LOCK_SUFFIX)
        try:
            self._make_dirs(key)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield  # the store's write will fail the same way, and warn
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock; the file stays (deleting it races)

    def warn_unwritable(self, exc: OSError) -> None:
        with _warned_lock:
            if self.directory in _warned:
                return
            _warned.add(self.directory)
        blocker = trust.file_above(self.directory)
        why = f"{blocker} is not a directory" if blocker else exc.strerror or str(exc)
        warnings.warn(
            f"vkml cannot write its compile cache at {self.directory} ({why}); "
            f"modules compiled in this process are kept in memory only and compiled again by "
            f"the next one. Free space there or point VKML_CACHE_DIR at a writable directory",
            CacheWarning,
            stacklevel=2,
        )

    def entries(self) -> list[Path]:
        return sorted(self.directory.glob(f"*/*{SUFFIX}"))

    def clear(self) -> int:
        """Delete every entry, lock file and temporary; return how many entries went."""
        files = self.entries()
        for f in [*files, *self.directory.glob(f"*/*{_LOCK_SUFFIX}")]:
            f.unlink(missing_ok=True)
        for shard in self.directory.glob("*/"):
            _sweep(shard, time.time())
        return len(files)


def _sweep(shard: Path, before: float) -> None:
    """Delete the temporaries in ``shard`` last written before ``before``: what a process
    killed mid-write left (a live writer's temporary is seconds old)."""
    for tmp in shard.glob(f".*{SUFFIX}{TEMPORARY_MARK}*"):
        try:
            if tmp.stat().st_mtime < before:
                tmp.unlink()
        except OSError:
            pass  # gone already, or another writer's


def _refusal(rule: str) -> str:
    if rule == "shared":
        return "vkml will not load compiled modules from this shared cache (VKML_SHARED_CACHE)"
    return "vkml will not load compiled modules from its compile cache"


def _unwrap(raw: bytes) -> tuple[str, bytes] | None:
    """(manifest, vmfb) of an entry whose magic and digest hold, else None."""
    if len(raw) < _HEADER or not raw.startswith(MAGIC):
        return None
    digest, body = raw[len(MAGIC) : _HEADER - 1], raw[_HEADER:]
    if hashlib.sha256(body).hexdigest().encode() != digest:
        return None
    manifest, newline, vmfb = body.partition(b"\n")
    if not newline:
        return None
    try:
        return manifest.decode(), vmfb
    except UnicodeDecodeError:
        return None
