"""What a compile-cache key hashes: the MLIR text, the target, and every version and source
that could change the module compiled from them (IREE's release, vkml's, vkml's passes and
emitters, and the host CPU where a target compiles for it).

Nothing here imports any of IREE: a machine with only iree-base-runtime computes the same keys
as the machine that compiled its modules.
"""

from __future__ import annotations

import functools
import hashlib
import platform
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


# The modules of vkml/compiler that decide what a compile produces: the compile loop and
# the checks of IREE's code that make it compile again another way or refuse.
_COMPILE_STEPS = ("compile.py", "dispatch_dump.py", "loop_budget.py", "workgroup_races.py")


@functools.cache
def pipeline_fingerprint() -> str:
    """A hash of the source of vkml's passes, emitters and compile checks: the key hashes the
    MLIR *before* the passes, so a changed pass or check must change the key even without a
    version bump."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    sources = [
        s for folder in ("passes", "dialect") for s in sorted((package / folder).glob("*.py"))
    ]
    sources += [package / "compiler" / name for name in _COMPILE_STEPS]
    for source in sources:
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
    parts = (text, target.name, target.backend, *target.iree_flags, f"loop-cap={target.loop_cap}",
             iree_version(), vkml_version(), pipeline_fingerprint(), host)  # fmt: skip
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()
