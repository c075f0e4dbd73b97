"""Shared test set-up: one compile cache for the whole run, so tests share compiled modules."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("VKML_CACHE_DIR", str(ROOT / ".cache" / "vkml"))
os.environ.pop("VKML_EAGER", None)
os.environ.pop("VKML_COVERAGE", None)
