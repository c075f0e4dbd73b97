"""Whether a file vkml would run code from could have been written by someone else.

A ``.vmfb`` compiled for llvm-cpu is native code and one compiled for Vulkan is a GPU
program: a file planted in the compile cache, or an exported module swapped on a shared
disk, is code vkml would run as you. The SHA-256 of a cache entry catches damage, not an
author. So, as ssh does for ``~/.ssh``, vkml looks at who could have written the file: its
owner, the write bits of the file and of every directory above it (whoever can write a
directory can rename its entries away and put others in their place; a sticky directory
such as ``/tmp`` lets each user replace only their own).

Three rules, by how much the user chose the file (docs/devices.md, "The compile cache and
who can write it"):

- ``private``: vkml's own cache directory. It, the directories under it and its entries
  must be yours (or root's) and writable by no one else; every directory above it must be
  yours or root's, and writable by no one else unless sticky.
- ``shared``: a read-only cache the user named (``VKML_SHARED_CACHE``), e.g. a team's
  precompiled modules owned by a build account. Any owner; writable by no one but the
  owner, and the directories above it as for ``private`` but of any owner.
- an exported module the user loads by path (``vkml.aot.load``): refused where someone
  other than its owner could write it; loaded with a warning when its owner is another user.

Nothing here follows what a check cannot see: a path that does not exist yet is checked up
to its nearest existing directory, and a path under a file (``/dev/null/x``) is no risk, since
nothing can be created there to load (vkml then compiles in memory, with a warning).
"""

from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path

from vkml.errors import UntrustedPathError

_ROOT = 0
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def me() -> int:
    """The effective user id: whose files vkml trusts without being told."""
    return os.geteuid()


def user_name(uid: int) -> str:
    """The account's name where the account database has it, else ``uid N``."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


@dataclass(frozen=True)
class Finding:
    """One reason a path is not safe to run code from: the path and what is wrong with it."""

    path: Path
    problem: str
    fix: str

    def message(self, what: str) -> str:
        return f"{what}: {self.path} {self.problem}. {self.fix}"


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _owner_problem(path: Path, st: os.stat_result, any_owner: bool) -> Finding | None:
    if any_owner or st.st_uid in (me(), _ROOT):
        return None
    return Finding(
        path,
        f"is owned by {user_name(st.st_uid)}, not by you ({user_name(me())})",
        f"Remove it, or take it over (chown {user_name(me())} {path}), or point "
        f"VKML_CACHE_DIR at a directory of your own",
    )


def _write_problem(path: Path, st: os.stat_result, sticky_ok: bool) -> Finding | None:
    if not st.st_mode & _OTHERS_WRITE:
        return None
    if sticky_ok and stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX:
        return None  # like /tmp: others cannot rename or replace what is yours
    who = "others" if st.st_mode & stat.S_IWOTH else "its group"
    return Finding(
        path,
        f"can be written by {who} (mode {stat.filemode(st.st_mode)})",
        f"Make it writable by its owner only (chmod go-w {path})",
    )


def _local_problem(path: Path, any_owner: bool, sticky_ok: bool) -> Finding | None:
    st = _stat(path)
    if st is None:
        return None
    return _owner_problem(path, st, any_owner) or _write_problem(path, st, sticky_ok)


def _above(path: Path) -> list[Path]:
    """The directories above ``path``, as written and with symbolic links resolved."""
    absolute = Path(os.path.abspath(path))
    return list(dict.fromkeys([*absolute.parents, *absolute.resolve().parents]))


def file_above(path: Path) -> Path | None:
    """The first directory above ``path`` (as written or with links resolved) that exists and
    is not a directory (``/dev/null`` for ``/dev/null/x``): nothing can be created under it."""
    return next((p for p in _above(path) if p.exists() and not p.is_dir()), None)


def find_problem(path: Path, rule: str) -> Finding | None:
    """The first reason ``path`` (a directory or file) is unsafe under ``rule``
    (``"private"``, ``"shared"`` or ``"module"``), or None when it is safe.

    ``path`` itself must not be writable by others, sticky or not (a world-writable sticky
    cache directory would let anyone create the entries vkml has not written yet); the
    directories above it, both as written and with symbolic links resolved, may be sticky.
    """
    any_owner = rule != "private"
    if file_above(path) is not None:
        return None  # under a file (VKML_CACHE_DIR=/dev/null/x): nothing can be there to load
    found = _local_problem(path, any_owner, sticky_ok=False)
    for parent in _above(path):
        found = found or _local_problem(parent, any_owner, sticky_ok=True)
    return found


def find_problem_below(root: Path, path: Path, rule: str) -> Finding | None:
    """The first reason ``path``, or a directory between it and ``root`` (``root`` itself
    excluded: check it with ``find_problem``), is unsafe under ``rule``; no sticky exception."""
    any_owner = rule != "private"
    found = None
    for step in [path, *path.parents]:
        if step == root:
            break
        found = found or _local_problem(step, any_owner, sticky_ok=False)
    return found


def check(path: Path, rule: str, what: str) -> None:
    """Raise ``UntrustedPathError`` when ``find_problem(path, rule)`` finds one; ``what``
    names what vkml was about to do with the path."""
    found = find_problem(path, rule)
    if found is not None:
        raise UntrustedPathError(found.message(what), path=found.path)


def foreign_owner(path: Path) -> str | None:
    """``path``'s owner's name when that is neither you nor root, else None."""
    st = _stat(path)
    if st is None or st.st_uid in (me(), _ROOT):
        return None
    return user_name(st.st_uid)


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) so that only you can read or write the
    directory itself (mode 0700); parents get the process's default mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        return
    os.chmod(path, 0o700)  # mkdir's mode is masked by the umask; 0700 must hold as written
