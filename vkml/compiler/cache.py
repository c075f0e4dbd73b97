"""The compile cache: a bounded in-memory LRU in front of disk stores, then the compiler.

A key (``vkml.compiler.keys``) hashes the MLIR text, the target and every version that could
change the module. The tiers, in order: memory; vkml's own directory (``VKML_CACHE_DIR``,
created private); the read-only shared caches the user named (``VKML_SHARED_CACHE``); then
IREE, under the key's lock, so that processes sharing a directory compile each key once
(``vkml.compiler.store``). Every entry read from disk is checked first: whole, of the
caller's calling convention, and written by no one the rules of ``vkml.compiler.trust``
distrust (an entry is code vkml runs).

Nothing here imports ``iree.compiler`` until a graph misses every tier: a machine with only
iree-base-runtime runs whatever the disk cache holds (docs/devices.md, "Running precompiled
modules").
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from vkml.compiler.abi import Abi
from vkml.compiler.keys import cache_key, distribution_version, iree_version
from vkml.compiler.store import DiskStore
from vkml.compiler.target import PRECOMPILE_ENV, Target, parse_precompile_targets
from vkml.errors import CompileError
from vkml.runtime.interrupts import interrupts_held
from vkml.runtime.stats import bump

SHARED_ENV = "VKML_SHARED_CACHE"


def default_cache_dir() -> Path:
    """``$VKML_CACHE_DIR``, else ``$XDG_CACHE_HOME/vkml``, else ``~/.cache/vkml``."""
    explicit = os.environ.get("VKML_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vkml"


def shared_cache_dirs() -> list[Path]:
    """The read-only caches named by ``$VKML_SHARED_CACHE`` (``os.pathsep``-separated)."""
    return [Path(p) for p in os.environ.get(SHARED_ENV, "").split(os.pathsep) if p]


def compile_module(text: str, target: Target) -> bytes:
    """vkml's passes, then IREE, over ``text``: the ``.vmfb`` bytes.

    The pipeline (and with it ``iree.compiler``) is imported here, on the first miss, so that
    everything else in vkml works on a machine with only iree-base-runtime. On the main
    thread a Ctrl-C during that import is held until it ends and raised then: one inside
    ``iree.compiler``'s native module init aborted the process.

    Raises:
        CompileError: the installed compiler is not the release of the installed runtime (the
            cache key names the runtime's), or IREE failed.
        ModuleNotFoundError: iree-base-compiler is not installed.
    """
    with interrupts_held():
        from vkml.compiler.compile import run_pipeline

    compiler = distribution_version("iree-base-compiler")
    if compiler is not None and compiler != iree_version():
        raise CompileError(
            f"iree-base-compiler {compiler} and iree-base-runtime {iree_version()} are "
            f"different releases; vkml keys its compile cache on the runtime's, so a module "
            f"from this compiler could be taken for another's. Install the same release of "
            f"both: pip install iree-base-compiler=={iree_version()}"
        )
    return run_pipeline(text, target)


class CompileCache:
    """Compiled ``.vmfb`` bytes by cache key: memory, then disk, then the compiler.

    ``directory`` and ``shared`` default to what the environment says at each use.
    """

    def __init__(
        self, directory: Path | None = None, capacity: int = 256,
        shared: Sequence[Path] | None = None,
    ) -> None:  # fmt: skip
        self._directory = directory
        self._shared = list(shared) if shared is not None else None
        self.capacity = capacity
        self._memory: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        return self._directory if self._directory is not None else default_cache_dir()

    @property
    def shared(self) -> list[Path]:
        return self._shared if self._shared is not None else shared_cache_dirs()

    @property
    def own(self) -> DiskStore:
        return DiskStore(self.directory, "private")

    def _stores(self) -> list[DiskStore]:
        return [self.own, *(DiskStore(d, "shared") for d in self.shared)]

    def get_or_compile(self, text: str, target: Target, abi: Abi | None = None) -> bytes:
        """The ``.vmfb`` for ``text`` on ``target``, compiling only on a miss.

        ``abi`` is the calling convention the lowering wrote down for ``text``; it is stored
        with the entry, and an entry that holds another is treated as damaged (a caller
        that gives none takes the entry's as it is).

        Raises:
            UntrustedPathError: a cache directory or entry someone else could have written.
            CompileError: IREE failed, or is not installed and no tier holds the module.
        """
        manifest = abi.to_json() if abi is not None else ""
        key = cache_key(text, target)
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                bump("cache_hits_memory")
                return hit
        also: list[Target] = []
        if target.backend == "vulkan-spirv":  # read, and checked, before anything compiles
            also = parse_precompile_targets(os.environ.get(PRECOMPILE_ENV, ""))
        stores = self._stores()
        for store in stores:
            store.check()
        vmfb = self._load(stores, key, manifest)
        if vmfb is None:
            vmfb = self._compile_once(stores, text, target, key, manifest)
        self._remember(key, vmfb)
        self._precompile(text, manifest, [t for t in also if cache_key(text, t) != key])
        return vmfb

    def _load(self, stores: list[DiskStore], key: str, manifest: str) -> bytes | None:
        for store in stores:
            vmfb = store.load(key, manifest)
            if vmfb is not None:
                bump("cache_hits_disk")
                return vmfb
        return None

    def _compile_once(
        self, stores: list[DiskStore], text: str, target: Target, key: str, manifest: str
    ) -> bytes:
        """Compile under the key's lock; whoever held it before us may have stored it."""
        own = stores[0]
        with own.compiling(key):
            vmfb = own.load(key, manifest)
            if vmfb is not None:
                bump("cache_hits_disk")
                return vmfb
            vmfb = self._compile(text, target, key)
            own.store(key, manifest, vmfb)
        return vmfb

    def _compile(self, text: str, target: Target, key: str) -> bytes:
        start = time.perf_counter()
        try:
            vmfb = compile_module(text, target)
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("iree"):
                raise
            raise CompileError(
                f"this graph is not in the compile cache at {self.directory} for target "
                f"{target.name} (no {self.path_of(key).name}), and iree-base-compiler is not "
                f"installed here ({exc}), so vkml cannot compile it. Install it (pip install "
                f"iree-base-compiler=={iree_version()}), or realize the graph on a machine "
                f"that has it with VKML_CACHE_DIR set and carry that directory here (for a "
                f"GPU elsewhere: {PRECOMPILE_ENV}; see docs/devices.md, 'Running precompiled "
                f"modules')"
            ) from exc
        bump("compile_seconds", time.perf_counter() - start)
        bump("compiles")
        return vmfb

    def _precompile(self, text: str, manifest: str, targets: list[Target]) -> None:
        """Compile ``text`` for each of ``targets`` missing on disk, onto disk only: the
        modules are for another machine's GPU (``VKML_PRECOMPILE_VULKAN``)."""
        own = self.own
        for target in targets:
            key = cache_key(text, target)
            with own.compiling(key):
                if own.load(key, manifest) is not None:
                    continue
                try:
                    vmfb = self._compile(text, target, key)
                except CompileError as exc:
                    raise CompileError(
                        f"{PRECOMPILE_ENV}: compiling for {target.name}: {exc}"
                    ) from exc
                own.store(key, manifest, vmfb)

    def _remember(self, key: str, vmfb: bytes) -> None:
        with self._lock:
            self._memory[key] = vmfb
            self._memory.move_to_end(key)
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)

    def path_of(self, key: str) -> Path:
        return self.own.path_of(key)

    def manifest_of(self, key: str) -> Abi | None:
        """The ABI stored with the disk entry ``key`` (own directory); None if there is no
        sound entry or it was stored without one."""
        entry = self.own.read(key)
        return Abi.from_json(entry[0]) if entry is not None and entry[0] else None

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    def entries(self) -> list[Path]:
        return self.own.entries()

    def info(self) -> dict[str, object]:
        files = self.entries()
        return {
            "directory": str(self.directory),
            "entries": len(files),
            "bytes": sum(f.stat().st_size for f in files),
            "memory_entries": len(self._memory),
            "memory_capacity": self.capacity,
            "shared": [str(d) for d in self.shared],
        }

    def clear(self) -> int:
        """Delete every entry of the own directory and the memory cache; return how many
        files went (shared caches are read-only to vkml)."""
        count = self.own.clear()
        self.clear_memory()
        return count


_DEFAULT: CompileCache | None = None


def default_cache() -> CompileCache:
    """The process-wide cache (directories read from the environment at each use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = CompileCache()
    return _DEFAULT
