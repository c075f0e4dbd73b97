"""Writing a file so that no reader ever sees half of it: a temporary file in the same
directory, renamed into place (``os.replace`` is atomic on POSIX and Windows)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

# What names a temporary: ``.<name>.tmp-<random>`` beside ``<name>``.
TEMPORARY_MARK = ".tmp-"

# The process's umask, read once (os.umask can only be read by setting it).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomically(
    path: Path, content: bytes | Callable[[Path], None], mode: int = 0o666
) -> Path:
    """Write ``content`` (bytes, or a function that writes the file at the path it is given)
    to ``path`` with permissions ``mode`` less the process's umask, as ``open`` would create
    it; returns ``path``.

    Raises:
        OSError: the directory cannot be written; no temporary file is left behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{TEMPORARY_MARK}")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(content, bytes):
                f.write(content)
        if not isinstance(content, bytes):
            content(tmp)
        os.chmod(tmp, mode & ~_UMASK)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
