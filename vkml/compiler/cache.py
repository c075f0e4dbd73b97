"""The compile cache: a bounded in-memory LRU in front of an on-disk store.

Keys hash (MLIR text, target name, target flags and loop cap, IREE version, vkml version). A
disk entry holds the module's ABI manifest (``vkml.compiler.abi``) and its ``.vmfb`` bytes
under one SHA-256: a truncated or corrupted entry, or one whose manifest is not the calling
convention the caller lowered, is detected, deleted and recompiled, never loaded. Writes go to a temporary file renamed into place, so a crash never
leaves a half-written entry under a real name.

Nothing here imports ``iree.compiler`` until a graph misses every tier: a machine with only
iree-base-runtime runs whatever the disk cache holds (docs/devices.md, "Running precompiled
modules").
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import threading
import time
import tomllib
from collections import OrderedDict
from importlib import metadata
from pathlib import Path

from vkml.compiler.abi import Abi
from vkml.compiler.atomic import write_atomically
from vkml.compiler.target import PRECOMPILE_ENV, Target, parse_precompile_targets
from vkml.errors import CompileError
from vkml.runtime.stats import bump

# An entry: _MAGIC, the SHA-256 (hex) of the body, a newline, then the body: the manifest (one
# line of JSON, empty when the caller gave no ABI), a newline, the .vmfb bytes.
_MAGIC = b"VKMLVMFB2\n"
_SUFFIX = ".vmfb"


@functools.cache
def vkml_version() -> str:
    """vkml's version: the checkout's ``pyproject.toml`` when vkml runs from a source tree,
    else the installed package's metadata, else ``0+unknown``.

    The checkout comes first so that the same tree gives the same cache keys whether it is
    installed (editable, here) or only on ``PYTHONPATH`` (a GPU machine with no metadata).
    """
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        project = {}
    if project.get("name") == "vkml" and isinstance(project.get("version"), str):
        return str(project["version"])
    try:
        return metadata.version("vkml")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@functools.cache
def iree_version() -> str:
    """The installed IREE runtime's version, read without importing any of IREE.

    The key hashes this rather than the compiler's version because a machine that only runs
    modules has no compiler to ask; the two are pinned to the same release, and
    ``compile_module`` refuses to compile when they differ (ADR 0004).
    """
    return _distribution_version("iree-base-runtime") or "not-installed"


def _distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def default_cache_dir() -> Path:
    """``$VKML_CACHE_DIR``, else ``$XDG_CACHE_HOME/vkml``, else ``~/.cache/vkml``."""
    explicit = os.environ.get("VKML_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vkml"


@functools.cache
def pipeline_fingerprint() -> str:
    """A hash of the source of vkml's passes and emitters: the key hashes the MLIR *before*
    the passes, so a changed pass must change the key even without a version bump."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for folder in ("passes", "dialect"):
        for source in sorted((package / folder).glob("*.py")):
            h.update(source.name.encode())
            h.update(source.read_bytes())
    return h.hexdigest()


@functools.cache
def host_cpu() -> str:
    """The host CPU's model and feature flags: ``--iree-llvmcpu-target-cpu=host`` compiles
    for this CPU, so a cache shared with another machine must not hand its modules over."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.machine() + " " + platform.processor()
    wanted = ("model name", "flags", "Features", "CPU part")
    lines = {ln.split(":")[0].strip(): ln for ln in info.splitlines() if ":" in ln}
    return platform.machine() + "\n" + "\n".join(lines.get(k, "") for k in wanted)


def cache_key(text: str, target: Target) -> str:
    h = hashlib.sha256()
    host = host_cpu() if any(f.endswith("=host") for f in target.flags) else ""
    parts = (text, target.name, target.backend, *target.flags, f"loop-cap={target.loop_cap}",
             iree_version(), vkml_version(), pipeline_fingerprint(), host)  # fmt: skip
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile_module(text: str, target: Target) -> bytes:
    """vkml's passes, then IREE, over ``text``: the ``.vmfb`` bytes.

    The pipeline (and with it ``iree.compiler``) is imported here, on the first miss, so that
    everything else in vkml works on a machine with only iree-base-runtime.

    Raises:
        CompileError: the installed compiler is not the release of the installed runtime (the
            cache key names the runtime's), or IREE failed.
        ModuleNotFoundError: iree-base-compiler is not installed.
    """
    from vkml.compiler.compile import compile_module as run_pipeline

    compiler = _distribution_version("iree-base-compiler")
    if compiler is not None and compiler != iree_version():
        raise CompileError(
            f"iree-base-compiler {compiler} and iree-base-runtime {iree_version()} are "
            f"different releases; vkml keys its compile cache on the runtime's, so a module "
            f"from this compiler could be taken for another's. Install the same release of "
            f"both: pip install iree-base-compiler=={iree_version()}"
        )
    return run_pipeline(text, target)


class CompileCache:
    """Compiled ``.vmfb`` bytes by cache key: memory first, then disk, then the compiler."""

    def __init__(self, directory: Path | None = None, capacity: int = 256) -> None:
        self._directory = directory
        self.capacity = capacity
        self._memory: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        return self._directory if self._directory is not None else default_cache_dir()

    def get_or_compile(self, text: str, target: Target, abi: Abi | None = None) -> bytes:
        """The ``.vmfb`` for ``text`` on ``target``, compiling only on a miss.

        ``abi`` is the calling convention the lowering wrote down for ``text``; it is stored
        with the entry, and an entry that holds another is treated as damaged (a caller
        that gives none takes the entry's as it is).
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
        vmfb = self._load(key, manifest)
        if vmfb is not None:
            bump("cache_hits_disk")
        else:
            vmfb = self._compile(text, target, key)
            self._store(key, manifest, vmfb)
        self._remember(key, vmfb)
        self._precompile(text, manifest, [t for t in also if cache_key(text, t) != key])
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
        for target in targets:
            key = cache_key(text, target)
            if self._load(key, manifest) is not None:
                continue
            try:
                vmfb = self._compile(text, target, key)
            except CompileError as exc:
                raise CompileError(f"{PRECOMPILE_ENV}: compiling for {target.name}: {exc}") from exc
            self._store(key, manifest, vmfb)

    def _remember(self, key: str, vmfb: bytes) -> None:
        with self._lock:
            self._memory[key] = vmfb
            self._memory.move_to_end(key)
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)

    def path_of(self, key: str) -> Path:
        return self.directory / key[:2] / (key + _SUFFIX)

    def _load(self, key: str, manifest: str) -> bytes | None:
        path = self.path_of(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        entry = _unwrap(raw)
        if entry is None or (manifest and entry[0] != manifest):  # damaged, or another ABI
            path.unlink(missing_ok=True)
            return None
        return entry[1]

    def manifest_of(self, key: str) -> Abi | None:
        """The ABI stored with the disk entry ``key``; None if there is no sound entry or it
        was stored without one."""
        try:
            entry = _unwrap(self.path_of(key).read_bytes())
        except OSError:
            return None
        return Abi.from_json(entry[0]) if entry is not None and entry[0] else None

    def _store(self, key: str, manifest: str, vmfb: bytes) -> None:
        body = manifest.encode() + b"\n" + vmfb
        try:
            write_atomically(
                self.path_of(key), _MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
            )
        except OSError:
            pass  # a read-only or full cache dir costs a recompile later, nothing more

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    def entries(self) -> list[Path]:
        return sorted(self.directory.glob(f"*/*{_SUFFIX}"))

    def info(self) -> dict[str, object]:
        files = self.entries()
        return {
            "directory": str(self.directory),
            "entries": len(files),
            "bytes": sum(f.stat().st_size for f in files),
            "memory_entries": len(self._memory),
            "memory_capacity": self.capacity,
        }

    def clear(self) -> int:
        """Delete every disk entry and the memory cache; return how many files went."""
        files = self.entries()
        for f in files:
            f.unlink(missing_ok=True)
        self.clear_memory()
        return len(files)


def _unwrap(raw: bytes) -> tuple[str, bytes] | None:
    """(manifest, vmfb) of an entry whose magic and digest hold, else None."""
    header = len(_MAGIC) + 65
    if len(raw) < header or not raw.startswith(_MAGIC):
        return None
    digest, body = raw[len(_MAGIC) : header - 1], raw[header:]
    if hashlib.sha256(body).hexdigest().encode() != digest:
        return None
    manifest, newline, vmfb = body.partition(b"\n")
    if not newline:
        return None
    try:
        return manifest.decode(), vmfb
    except UnicodeDecodeError:
        return None


_DEFAULT: CompileCache | None = None


def default_cache() -> CompileCache:
    """The process-wide cache (directory read from the environment at each use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = CompileCache()
    return _DEFAULT
