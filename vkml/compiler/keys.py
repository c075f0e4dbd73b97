"""What a compile-cache key hashes: the MLIR text, the target, and every version and source
that could change the module compiled from them (IREE's release, vkml's, the source of every
vkml module the compile imports, and the host CPU where a target compiles for it).

Nothing here imports any of IREE: a machine with only iree-base-runtime computes the same keys
as the machine that compiled its modules.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import re
import tomllib
from importlib import metadata
from pathlib import Path

from vkml.compiler.target import Target


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
    return distribution_version("iree-base-runtime") or "not-installed"


def distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


# Where a compile starts: every vkml module that this imports, directly or through another,
# can change what a compile produces (a pass, an MLIR recipe a pass calls, the compile loop,
# the checks of IREE's code that make it compile again another way or refuse).
COMPILE_ROOTS = ("vkml.compiler.compile",)

# `from vkml.a import b, c` (parenthesised over lines or not) and `import vkml.a`: a superset
# of the real imports (one in a docstring counts too), which only ever hashes more
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(vkml[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
    r"|import[ \t]+(vkml[\w.]*))",
    re.MULTILINE,
)


PACKAGE = Path(__file__).resolve().parent.parent


def _module_file(package: Path, name: str) -> Path | None:
    path = package.parent.joinpath(*name.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def compile_sources(package: Path = PACKAGE, roots: tuple[str, ...] = COMPILE_ROOTS) -> list[Path]:
    """The source files, under ``package``, of ``roots`` and of every vkml module they import,
    directly or not.

    Read from the text of the files, never by importing them (a machine with only the runtime
    computes the same keys). The packages above a module (``vkml/__init__.py``) are not
    followed: Python runs them on import, but they hold no code that a compile runs.
    """
    found: dict[Path, None] = {}
    todo = list(roots)
    while todo:
        path = _module_file(package, todo.pop())
        if path is None or path in found:
            continue
        found[path] = None
        for module, names, plain in _IMPORT.findall(path.read_text(encoding="utf-8")):
            if plain:
                todo.append(plain)
                continue
            todo.append(module)
            listed = " ".join(ln.split("#")[0] for ln in names.strip("()").splitlines())
            for name in listed.split(","):
                name = name.split(" as ")[0].strip()
                if name.isidentifier():
                    todo.append(f"{module}.{name}")
    return sorted(found)


def source_fingerprint(package: Path = PACKAGE) -> str:
    """A hash of the names and text of ``compile_sources(package)``."""
    h = hashlib.sha256()
    for source in compile_sources(package):
        h.update(source.relative_to(package).as_posix().encode())
        h.update(source.read_bytes())
    return h.hexdigest()


@functools.cache
def pipeline_fingerprint() -> str:
    """The hash of the code that compiles (``source_fingerprint``): the key hashes the MLIR
    *before* the passes, so a changed pass, recipe or check must change the key even without a
    version bump, wherever that code moves."""
    return source_fingerprint()


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
    parts = (text, target.name, target.backend, *target.iree_flags, f"loop-cap={target.loop_cap}",
             iree_version(), vkml_version(), pipeline_fingerprint(), host)  # fmt: skip
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()
