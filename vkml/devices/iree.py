"""``IreeDevice``: a schedule lowered to MLIR, compiled by IREE (through vkml's cache) and
invoked once; the executables of recent schedules are kept by structure, so a graph of the
same shape runs again without lowering. ``iree.compiler`` is imported only on a cache miss
(``vkml.compiler.cache``), so a machine with only iree-base-runtime runs precompiled modules."""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.compiler.abi import scalar_tables, table_array
from vkml.compiler.cache import default_cache
from vkml.compiler.lower import Lowered, lower
from vkml.compiler.target import Target
from vkml.devices.device import Call, Device
from vkml.dtypes import DType, int32
from vkml.errors import BindingLimitError
from vkml.graph.node import Node
from vkml.graph.walk import structure
from vkml.runtime import Executable, bump, download, existing_session, session, upload
from vkml.runtime.stop import StopFlag, stoppable

log = logging.getLogger("vkml")

# Above this many nodes a first realize compiles long enough to deserve a word on stderr.
LARGE_GRAPH_NODES = 5000
# How many tables of Python numbers a device keeps uploaded (``IreeDevice._scalar_table``).
SCALAR_TABLES_KEPT = 64


class IreeDevice(Device):
    """A device whose schedules are compiled by IREE and run as one invocation."""

    # Whether float ops are hidden behind the fence (a Vulkan driver folds float arithmetic as
    # if it were exact, ADR 0009); an exported module is lowered the same way (vkml.aot).
    fences_float_ops = False
    # Seconds a wait for a queued call polls before it blocks (``Pending.wait``): worth it
    # where a call ends sooner than a blocked thread wakes up, and the host has cores to spare.
    spin = 0.0
    # Whether the driver's threads that spin while the device is idle get the lowest priority
    # (a Vulkan implementation on the CPU: ``vkml.runtime.threads``).
    demotes_spinning_threads = False

    def __init__(self, name: str, target: Target, capacity: int = 256) -> None:
        super().__init__(name)
        self.target = target
        self.capacity = capacity
        # by structural key: the executable, its trailing arguments (the multiply fence) and
        # whether it takes a stop flag (``Abi.stop``: it has device loops)
        self._executables: OrderedDict[Any, tuple[Executable, list[Any], bool]] = OrderedDict()
        self._fence_buffer: Any = None
        # uploaded tables of Python numbers, by (dtype, bytes): see _scalar_table
        self._tables: OrderedDict[tuple[DType, bytes], Any] = OrderedDict()
        # structures whose module IREE refused to load (too many bindings), and its words
        self._unloadable: dict[Any, str] = {}
        self._lock = threading.Lock()
        _LIVE.add(self)

    @property
    def session(self):  # type: ignore[no-untyped-def]
        return session(self.target.driver, self.demotes_spinning_threads)

    def upload(self, array: np.ndarray, dtype: DType) -> Any:
        return upload(self.session, np.asarray(array, dtype=dtype.numpy), dtype, device=self.name)

    def download(self, storage: Any, dtype: DType, copy: bool = True) -> np.ndarray:
        return download(storage, dtype, copy, self.name)

    def download_result(self, storage: Any, dtype: DType) -> np.ndarray:
        """A copy of a result IREE allocated itself (a loaded module's, ``vkml.aot``), which
        may live in memory the host cannot map."""
        return self.download(storage, dtype, True)

    def prepare(self, schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[Call, list[Node]]:
        key, leaves, scalars = structure(schedule, roots)
        with self._lock:
            entry = self._executables.get(key)
            if entry is not None:
                self._executables.move_to_end(key)
        if entry is None:
            if len(schedule) >= LARGE_GRAPH_NODES:
                log.warning(
                    "vkml: compiling a %d-node graph for %s; expect about a millisecond per "
                    "node (the result is cached for the next realize)",
                    len(schedule), self.target.name,
                )  # fmt: skip
            if key in self._unloadable:
                raise BindingLimitError(self._unloadable[key])
            lowered = self._lower(schedule, roots)
            vmfb = default_cache().get_or_compile(lowered.text, self.target, lowered.abi)
            abi = lowered.abi
            trailing = [self._fence()] if abi.fence else []
            try:
                executable = Executable(
                    self._session_for(schedule),
                    vmfb,
                    abi.function,
                    len(abi.outputs),
                    queued=abi.queued,
                    transients=abi.transients,
                    spin=self.spin,
                )
            except BindingLimitError as exc:  # the next realize of this structure knows
                self._remember_unloadable(key, exc)
                raise
            entry = (executable, trailing, abi.stop)
            with self._lock:
                self._executables[key] = entry
                while len(self._executables) > self.capacity:
                    self._executables.popitem(last=False)
        else:
            bump("cache_hits_memory")
        executable, trailing, stops = entry
        shapes = [(r.shape, r.dtype) for r in roots]
        tables = [self._scalar_table(dtype, nodes) for dtype, nodes in scalar_tables(scalars)]

        def call(storages: Sequence[Any]) -> list[Any]:
            args = [*tables, *storages]
            try:
                if not stops:
                    return self._invoke(executable, args, shapes, trailing)
                flag = StopFlag(self.session, self.name)
                return stoppable(
                    lambda: self._invoke(executable, args, shapes, [flag.view, *trailing]), flag
                )
            except BindingLimitError as exc:  # local-task refuses at the call, not the load
                self._remember_unloadable(key, exc)
                raise

        return call, leaves

    def _remember_unloadable(self, key: Any, exc: BindingLimitError) -> None:
        """Remember that IREE will not load or run the module of structure ``key`` (and drop
        its executable, if it loaded), so the next realize of it goes to parts at once."""
        with self._lock:
            self._unloadable[key] = str(exc)
            self._executables.pop(key, None)

    def _session_for(self, schedule: Sequence[Node]) -> Any:
        """The HAL session that runs this schedule's executable (the device's own here)."""
        return self.session

    def _scalar_table(self, dtype: DType, nodes: Sequence[Node]) -> Any:
        """A device buffer holding one table of a schedule's Python numbers (``Abi``). The
        last few tables are kept by value: a training step with the same numbers every step
        uploads none."""
        values = table_array(dtype, nodes)
        key = (dtype, values.tobytes())
        with self._lock:
            found = self._tables.get(key)
            if found is not None:
                self._tables.move_to_end(key)
                return found
        made = self.upload(values, dtype)
        with self._lock:
            self._tables[key] = made
            while len(self._tables) > SCALAR_TABLES_KEPT:
                self._tables.popitem(last=False)
        return made

    def _fence(self) -> Any:
        """The multiply fence every module that multiplies floats takes last: a 0 (see
        ``FunctionBuilder._unfusable``)."""
        if self._fence_buffer is None:
            self._fence_buffer = self.upload(np.zeros((), np.int32), int32)
        return self._fence_buffer

    def _lower(self, schedule: Sequence[Node], roots: Sequence[Node]) -> Lowered:
        return lower(schedule, roots)

    def _invoke(
        self, executable: Executable, args: list[Any], results: Sequence[tuple[tuple[int, ...], DType]],
        trailing: list[Any],
    ) -> list[Any]:  # fmt: skip
        return executable.invoke(args + trailing, device=self.name, results=results)

    def synchronize(self) -> None:
        made = existing_session(self.target.driver)
        if made is not None:
            made.semaphores.drain(self.spin)

    def clear_executables(self) -> None:
        with self._lock:
            for executable, _, _ in self._executables.values():
                executable.release()
            self._executables.clear()

    def release(self) -> None:
        """Drop what the device holds of IREE's (executables, the fence buffer, the tables of
        Python numbers, idle queue semaphores); all are made again on the next use."""
        self.clear_executables()
        self._fence_buffer = None
        with self._lock:
            self._tables.clear()
        made = existing_session(self.target.driver)
        if made is not None:
            made.semaphores.release()


# Every IREE device made in this process. Their IREE objects are released when the process
# exits, before the interpreter tears its modules down: a Vulkan buffer freed during that
# teardown crashed IREE's bindings (exit status 139 after a correct run).
_LIVE: weakref.WeakSet[IreeDevice] = weakref.WeakSet()


@atexit.register
def _release_all() -> None:
    for device in list(_LIVE):
        device.release()
