"""``cpu``: IREE's llvm-cpu target, run on the driver that suits each graph's size."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.devices.iree import IreeDevice
from vkml.dtypes import DType
from vkml.graph.node import Node
from vkml.graph.walk import estimated_work
from vkml.runtime import host_memory, import_host, session


class CpuDevice(IreeDevice):
    """IREE llvm-cpu. Uploads and results live in host memory that both of IREE's CPU drivers
    read, so each executable runs on the driver that suits its size: ``local-task`` (a thread
    per core) for large graphs, ``local-sync`` (the calling thread, no hand-offs) for those
    below ``SMALL_WORK`` element operations, where waking the workers costs more than they
    save (ADR 0008). The code and so the results are the same on both."""

    kind = "cpu"

    # measured on the 2-core development machine (ADR 0008): below ~8M element operations
    # local-sync was faster (a 1,024-element 8-op chain 5 us vs 27 us; a 128^3 matmul 53 vs 109)
    SMALL_WORK = 1 << 23
    SMALL_DRIVER = "local-sync"

    def _session_for(self, schedule: Sequence[Node]) -> Any:
        if estimated_work(schedule) < self.SMALL_WORK:
            return session(self.SMALL_DRIVER)
        return self.session

    def host_memory(self, storage: Any, dtype: DType) -> np.ndarray:
        return host_memory(storage, dtype, self.name)

    def share_host(self, array: np.ndarray, dtype: DType) -> Any | None:
        return import_host(self.session, array, dtype)
