"""``Device``: what every device offers, and how a schedule runs there (``prepare``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import ALL, DType
from vkml.graph.node import Node
from vkml.ops.registry import OPS
from vkml.runtime import dlpack

# A prepared schedule: one storage per leaf in, one per root out, one invocation.
Call = Callable[[Sequence[Any]], list[Any]]


class Device:
    """A place tensors live and graphs run. Compare devices with ``==``; print for the name."""

    kind: str = ""
    # Predicated turns of a device loop (``vkml.Graph.builder``'s ``while`` on a device
    # condition) that run between two host syncs: IREE runs a loop's turns on the host, so a
    # sync costs what a kernel launch does many times over; more turns per sync means fewer
    # syncs, a larger module and a longer compile (docs/builder.md, benchmarks/builder.py).
    turns_per_sync: int = 16

    def __init__(self, name: str) -> None:
        self.name = name
        self._supported: dict[tuple[str, DType], bool] = {}

    def __repr__(self) -> str:
        return f"vkml.device('{self.name}')"

    def __str__(self) -> str:
        return self.name

    def supports(self, op: str, dtype: DType) -> bool:
        """Whether this device can evaluate ``op`` producing ``dtype``: the op does not
        refuse this kind of device for it (``OpDef.refuses``) and the device has the dtype.

        Both are fixed once the device exists, so each answer is kept (every realize asks
        for every node)."""
        key = (op, dtype)
        known = self._supported.get(key)
        if known is None:
            found = OPS.get(op)
            known = found is not None and found.runs_on(self.kind, dtype) and dtype in self.dtypes
            self._supported[key] = known
        return known

    @property
    def dtypes(self) -> tuple[DType, ...]:
        return ALL

    def support_table(self) -> dict[str, tuple[str, ...]]:
        """Every op this device runs, with the result dtypes it runs it for."""
        return {op: tuple(d.name for d in ALL if self.supports(op, d)) for op in OPS}

    def upload(self, array: np.ndarray, dtype: DType) -> Any:
        raise NotImplementedError

    # -- memory shared with other libraries (DLPack) -------------------------------------------
    def dlpack_device(self) -> tuple[int, int]:
        """DLPack's (device type, id) of the memory this device keeps tensors in."""
        return dlpack.CPU, 0

    def host_memory(self, storage: Any, dtype: DType) -> np.ndarray | None:
        """A read-only array over ``storage``'s own memory in its layout (no copy), or None
        where the host cannot share it."""
        return None

    def share_host(self, array: np.ndarray, dtype: DType) -> Any | None:
        """Storage over ``array``'s own memory (no copy; ``array`` in ``dtype``'s layout,
        bools as bytes), or None where this device cannot compute on that memory."""
        return None

    def download(self, storage: Any, dtype: DType, copy: bool = True) -> np.ndarray:
        raise NotImplementedError

    # Whether a realize returns once its call is queued, before the call is done (reading a
    # result waits for it): a launch of a recorded graph then costs no host wait.
    queues_calls = False

    def synchronize(self) -> None:
        """Return once every call this device has queued is done; raise the first failure of
        one (a device that does not queue has nothing to wait for).

        Reading a value waits for the call computing it anyway: this is for timing the
        device's work, or for knowing that all of it went well."""

    def execute(self, schedule: Sequence[Node], roots: Sequence[Node]) -> list[Any]:
        """Compute ``roots`` from ``schedule`` in one go; return one storage per root."""
        call, leaves = self.prepare(schedule, roots)
        return call([leaf._storage for leaf in leaves])

    def prepare(self, schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[Call, list[Node]]:
        """What computes ``roots`` from the schedule's leaves, and the leaves in argument order.

        ``call(storages)`` takes one storage per leaf (the leaves' own, or others of the same
        dtype and shape) and returns one per root, in one invocation; it can be called again
        with new storages without walking the graph (``vkml.trace`` does).
        """
        raise NotImplementedError
