"""Devices: where data lives and how a schedule runs there.

``cpu`` compiles the whole schedule with IREE for llvm-cpu and invokes it once on the
``local-task`` driver. ``reference`` interprets the schedule with NumPy, implementing every
contract exactly: it is the oracle the compiled devices are checked against.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.dtypes import ALL, DType, float64
from vkml.errors import DeviceError
from vkml.frontend.graph import Node
from vkml.frontend.lower import lower_to_mlir, structure
from vkml.frontend.optable import OPS
from vkml.passes.target import Target
from vkml.runtime import Executable, bump, download, session, upload


class Device:
    """A place tensors live and graphs run. Compare devices with ``==``; print for the name."""

    kind: str = ""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"vkml.device('{self.name}')"

    def __str__(self) -> str:
        return self.name

    def supports(self, op: str, dtype: DType) -> bool:
        """Whether this device can evaluate ``op`` producing ``dtype``."""
        return op in OPS and dtype in self.dtypes

    @property
    def dtypes(self) -> tuple[DType, ...]:
        return ALL

    def support_table(self) -> dict[str, tuple[str, ...]]:
        """Every op this device runs, with the result dtypes it runs it for."""
        return {op: tuple(d.name for d in ALL if self.supports(op, d)) for op in OPS}

    def upload(self, array: np.ndarray, dtype: DType) -> Any:
        raise NotImplementedError

    def download(self, storage: Any, dtype: DType, copy: bool = True) -> np.ndarray:
        raise NotImplementedError

    def execute(self, schedule: Sequence[Node], roots: Sequence[Node]) -> list[Any]:
        """Compute ``roots`` from ``schedule`` in one go; return one storage per root."""
        raise NotImplementedError


class ReferenceDevice(Device):
    """NumPy interpretation of the graph, exact to vkml's contracts and slow by design."""

    kind = "reference"

    def upload(self, array: np.ndarray, dtype: DType) -> np.ndarray:
        host = np.array(array, dtype=dtype.numpy, copy=True, order="C")
        host.flags.writeable = False
        return host

    def download(self, storage: np.ndarray, dtype: DType, copy: bool = True) -> np.ndarray:
        return np.array(storage, copy=True) if copy else storage  # storage is read-only

    def execute(self, schedule: Sequence[Node], roots: Sequence[Node]) -> list[Any]:
        # the side table: one value per topological position, nothing written on the nodes
        position: dict[Node, int] = {}
        values: list[np.ndarray] = []
        for i, node in enumerate(schedule):
            position[node] = i
            if node._computed:
                values.append(node._storage)
                continue
            inputs = [values[position[s]] for s in node.src]
            out = OPS[node.op].reference(inputs, node.dtype, node.shape, dict(node.attrs))
            if out.dtype != node.dtype.numpy or out.shape != node.shape:
                raise AssertionError(
                    f"reference '{node.op}' gave {out.dtype}{out.shape}, "
                    f"expected {node.dtype.numpy}{node.shape}"
                )
            values.append(out)
        bump("invocations")
        results = []
        for root in roots:
            result = values[position[root]]
            result.flags.writeable = False
            results.append(result)
        return results


log = logging.getLogger("vkml")

# Above this many nodes a first realize compiles long enough to deserve a word on stderr.
LARGE_GRAPH_NODES = 5000

CPU_TARGET = Target(
    name="llvm-cpu-host",
    backend="llvm-cpu",
    driver="local-task",
    flags=(
        "--iree-llvmcpu-target-cpu=host",
        # vkml has a real float64 on cpu; IREE would otherwise demote it to float32
        "--iree-input-demote-f64-to-f32=false",
        # measured: matmul 1024^3 from ~40 to ~100 GFLOP/s on the 2-core dev machine (ADR 0002)
        "--iree-opt-data-tiling",
        "--iree-llvmcpu-enable-ukernels=all",
    ),
)


class IreeDevice(Device):
    """A device whose schedules are compiled by IREE and run as one invocation."""

    def __init__(self, name: str, target: Target, capacity: int = 256) -> None:
        super().__init__(name)
        self.target = target
        self.capacity = capacity
        self._executables: OrderedDict[Any, Executable] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def session(self):  # type: ignore[no-untyped-def]
        return session(self.target.driver)

    def upload(self, array: np.ndarray, dtype: DType) -> Any:
        return upload(self.session, np.asarray(array, dtype=dtype.numpy), dtype)

    def download(self, storage: Any, dtype: DType, copy: bool = True) -> np.ndarray:
        return download(storage, dtype, copy)

    def execute(self, schedule: Sequence[Node], roots: Sequence[Node]) -> list[Any]:
        key, leaves = structure(schedule, roots)
        with self._lock:
            executable = self._executables.get(key)
            if executable is not None:
                self._executables.move_to_end(key)
        if executable is None:
            # imported here: the compiler is needed only on a miss, and a machine that runs
            # precompiled modules may not have iree-base-compiler at all
            from vkml.passes.cache import default_cache

            if len(schedule) >= LARGE_GRAPH_NODES:
                log.warning(
                    "vkml: compiling a %d-node graph for %s; expect about a millisecond per "
                    "node (the result is cached for the next realize)",
                    len(schedule), self.target.name,
                )  # fmt: skip
            text = lower_to_mlir(schedule, roots)
            vmfb = default_cache().get_or_compile(text, self.target)
            executable = Executable(self.session, vmfb, "main", len(roots))
            with self._lock:
                self._executables[key] = executable
                while len(self._executables) > self.capacity:
                    self._executables.popitem(last=False)
        else:
            bump("cache_hits_memory")
        return executable.invoke([leaf._storage for leaf in leaves])

    def clear_executables(self) -> None:
        with self._lock:
            self._executables.clear()


class CpuDevice(IreeDevice):
    kind = "cpu"

    # IREE 3.13's llvm-cpu links no libm for these float64 functions ("undefined symbol:
    # tanh"); the reference device runs them.
    UNSUPPORTED = frozenset({("tanh", float64), ("sin", float64), ("cos", float64)})

    def supports(self, op: str, dtype: DType) -> bool:
        return op in OPS and (op, dtype) not in self.UNSUPPORTED


cpu = CpuDevice("cpu", CPU_TARGET)
reference = ReferenceDevice("reference")

_DEVICES: dict[str, Device] = {"cpu": cpu, "reference": reference}


def device(name: str | Device) -> Device:
    """The device named ``name``: ``"cpu"`` or ``"reference"``.

    Raises:
        DeviceError: no device has that name; the message lists the ones present.
    """
    if isinstance(name, Device):
        return name
    found = _DEVICES.get(str(name).strip().lower())
    if found is None:
        raise DeviceError(
            f"unknown device {name!r}; devices present: {', '.join(_DEVICES)}"
        )
    return found


def all_devices() -> list[Device]:
    return list(_DEVICES.values())


__all__ = ["Device", "all_devices", "cpu", "device", "reference"]
