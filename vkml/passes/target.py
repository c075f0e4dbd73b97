"""Compile targets: what IREE compiles for and which HAL driver runs the result."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """An IREE compile target: backend, the flags vkml chose for it, and its HAL driver."""

    name: str
    backend: str
    driver: str
    flags: tuple[str, ...]
