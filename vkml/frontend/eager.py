"""The eager flag: realize after every operation, so errors surface where they happen.

Read from ``VKML_EAGER`` once, at first use; ``set_eager`` overrides it. Reads and writes take
a lock, so the flag is safe to flip from any thread. ``suspended()`` turns it off in one
context (thread, task) only: capturing a function (``vkml.trace``) records its graph whole.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from vkml.errors import ConfigError, DTypeError

_LOCK = threading.Lock()
_EAGER: bool | None = None
_SUSPENDED: ContextVar[bool] = ContextVar("vkml_eager_suspended", default=False)


def set_eager(enabled: bool) -> None:
    """Realize after every operation (True) or only when a value is observed (False)."""
    global _EAGER
    if not isinstance(enabled, (bool, int)) and type(enabled).__name__ != "bool":
        raise DTypeError(f"set_eager takes True or False, got {type(enabled).__name__} {enabled!r}")
    with _LOCK:
        _EAGER = bool(enabled)


def is_eager() -> bool:
    """Whether eager mode is on (first call reads ``VKML_EAGER``)."""
    global _EAGER
    flag = _EAGER
    if flag is None:
        with _LOCK:
            if _EAGER is None:
                _EAGER = _from_environment()
            flag = _EAGER
    return flag and not _SUSPENDED.get()


_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")


def _from_environment() -> bool:
    raw = os.environ.get("VKML_EAGER", "")
    value = raw.strip().lower()
    if value not in _ON + _OFF:  # a typo must not silently mean "off"
        raise ConfigError(
            f"VKML_EAGER={raw!r} is neither on ({', '.join(_ON)}) nor off "
            f"({', '.join(repr(v) for v in _OFF)}); set one of those, unset it, or call "
            f"vkml.set_eager(True/False)"
        )
    return value in _ON


@contextmanager
def suspended() -> Iterator[None]:
    """No eager realizing in this context, whatever the flag says."""
    token = _SUSPENDED.set(True)
    try:
        yield
    finally:
        _SUSPENDED.reset(token)
