"""IREE runtime layer: HAL devices, buffers, loaded modules, invocation, counters.

This package imports only ``iree.runtime`` (never ``iree.compiler``): a machine that runs
compiled vkml modules needs iree-base-runtime and NumPy, nothing else.
"""

from vkml.runtime.buffers import (
    allocate_mappable,
    download,
    download_staged,
    host_memory,
    import_host,
    upload,
    upload_mappable,
)
from vkml.runtime.executable import Executable
from vkml.runtime.hal import HalSession, existing_session, session
from vkml.runtime.pending import Pending, ResultView, settle
from vkml.runtime.stats import STATS, bump, reset_stats, snapshot

__all__ = [
    "STATS",
    "Executable",
    "HalSession",
    "Pending",
    "ResultView",
    "allocate_mappable",
    "bump",
    "download",
    "download_staged",
    "existing_session",
    "host_memory",
    "import_host",
    "reset_stats",
    "session",
    "settle",
    "snapshot",
    "upload",
    "upload_mappable",
]
