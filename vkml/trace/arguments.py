"""A compiled function's inputs given positionally, by name, or both (``captured(x, w=w)``,
``loaded.predict(x=batch)``), put in the function's order with Python's own rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def in_order(
    callee: str, names: Sequence[str], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[Any]:
    """One value per name in ``names``: ``args`` first, then ``kwargs`` by name; a TypeError
    naming ``callee`` and its inputs for too many, unknown, repeated or missing ones."""
    listed = ", ".join(names)
    if len(args) > len(names):
        raise TypeError(
            f"{callee} takes {len(names)} inputs ({listed}), got {len(args)} positionally"
        )
    values: dict[str, Any] = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{callee} has no input {name!r}; its inputs are {listed}")
        if name in values:
            raise TypeError(f"{callee} got input {name!r} twice (by position and by name)")
        values[name] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise TypeError(
            f"{callee} takes {len(names)} inputs ({listed}); missing {', '.join(missing)}"
        )
    return [values[n] for n in names]
