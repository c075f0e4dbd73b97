"""Process-wide counters that tests and benchmarks read through ``vkml.stats()``."""

from __future__ import annotations

import threading

_LOCK = threading.Lock()
_ZERO: dict[str, float] = {
    "realizes": 0,
    "invocations": 0,
    "compiles": 0,
    "cache_hits_memory": 0,
    "cache_hits_disk": 0,
    "compile_seconds": 0.0,
}
STATS: dict[str, float] = dict(_ZERO)


def bump(name: str, amount: float = 1) -> None:
    """Add ``amount`` to counter ``name``."""
    with _LOCK:
        STATS[name] += amount


def snapshot() -> dict[str, float]:
    """A copy of every counter."""
    with _LOCK:
        return dict(STATS)


def reset_stats() -> None:
    """Set every counter back to zero."""
    with _LOCK:
        STATS.update(_ZERO)
