"""IREE parameter archives (``.irpa``): writing arrays into one, reading its index, and the
VM module that serves one to a loaded program (``vkml.runtime.program``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import iree.runtime as rt
import numpy as np


def write_archive(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to the archive ``path``, each entry the array's raw bytes (bool as one
    byte per element, bfloat16 as its 16 bits), in C order, keyed by its name."""
    index = rt.ParameterIndex()
    for key, value in arrays.items():
        index.add_buffer(key, np.ascontiguousarray(value).tobytes())
    index.create_archive_file(str(path))


def archive_sizes(path: Path) -> dict[str, int]:
    """Each entry of the archive ``path`` and its size in bytes.

    Raises:
        ValueError: the file is not an IREE parameter archive (IREE's message says why).
    """
    index = rt.ParameterIndex()
    try:
        index.load(str(path))
    except (RuntimeError, IndexError) as exc:
        raise ValueError(str(exc)) from exc
    return {key: int(entry.length) for key, entry in index.items()}


def parameters_module(instance: rt.VmInstance, path: Path, scope: str) -> rt.VmModule:
    """The VM module that gives a program the entries of archive ``path`` under ``scope``
    (what ``iree-run-module --parameters=scope=path`` does)."""
    index = rt.ParameterIndex()
    index.load(str(path))
    return rt.create_io_parameters_module(instance, index.create_provider(scope=scope))
