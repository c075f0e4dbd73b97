"""Devices: where data lives and how a schedule runs there.

``cpu`` compiles the whole schedule with IREE for llvm-cpu and invokes it once on the
``local-task`` driver. ``reference`` interprets the schedule with NumPy, implementing every
contract exactly: it is the oracle the compiled devices are checked against.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import ALL, DType, bfloat16, float16, float64, int32, int64
from vkml.errors import DeviceError
from vkml.graph.node import Node
from vkml.compiler.lower import Lowered, lower
from vkml.graph.walk import estimated_work, structure
from vkml.ops.registry import OPS
from vkml.compiler.target import VULKAN_TARGETS, Target, vulkan_target
from vkml.runtime import (
    Executable,
    allocate_mappable,
    bump,
    download,
    download_staged,
    session,
    upload,
    upload_mappable,
)
from vkml.runtime.vulkan import VulkanDeviceReport, best_vulkan_report, vulkan_device_reports


# A prepared schedule: one storage per leaf in, one per root out, one invocation.
Call = Callable[[Sequence[Any]], list[Any]]


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
        """Whether this device can evaluate ``op`` producing ``dtype``: the op does not
        refuse this kind of device for it (``OpDef.refuses``) and the device has the dtype."""
        found = OPS.get(op)
        return found is not None and found.runs_on(self.kind, dtype) and dtype in self.dtypes

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
        call, leaves = self.prepare(schedule, roots)
        return call([leaf._storage for leaf in leaves])

    def prepare(self, schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[Call, list[Node]]:
        """What computes ``roots`` from the schedule's leaves, and the leaves in argument order.

        ``call(storages)`` takes one storage per leaf (the leaves' own, or others of the same
        dtype and shape) and returns one per root, in one invocation; it can be called again
        with new storages without walking the graph (``vkml.frontend.replay``).
        """
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

    def prepare(self, schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[Call, list[Node]]:
        leaves = [node for node in schedule if node._computed]
        # the side table: one value per topological position, nothing written on the nodes
        position = {node: i for i, node in enumerate(schedule)}
        # which nodes are leaves is decided now: the roots are computed after the first call
        steps = [
            (node, node._computed, [] if node._computed else [position[s] for s in node.src])
            for node in schedule
        ]
        outputs = [position[r] for r in roots]

        def call(storages: Sequence[Any]) -> list[Any]:
            given = iter(storages)
            values: list[np.ndarray] = []
            for node, is_leaf, srcs in steps:
                if is_leaf:
                    values.append(next(given))
                    continue
                inputs = [values[i] for i in srcs]
                out = OPS[node.op].reference(inputs, node.dtype, node.shape, dict(node.attrs))
                if out.dtype != node.dtype.numpy or out.shape != node.shape:
                    raise AssertionError(
                        f"reference '{node.op}' gave {out.dtype}{out.shape}, "
                        f"expected {node.dtype.numpy}{node.shape}"
                    )
                values.append(out)
            bump("invocations")
            results = []
            for i in outputs:
                result = values[i]
                result.flags.writeable = False
                results.append(result)
            return results

        return call, leaves


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
        self._executables: OrderedDict[Any, tuple[Executable, list[Any]]] = OrderedDict()
        self._fence_buffer: Any = None
        self._lock = threading.Lock()

    @property
    def session(self):  # type: ignore[no-untyped-def]
        return session(self.target.driver)

    def upload(self, array: np.ndarray, dtype: DType) -> Any:
        return upload(self.session, np.asarray(array, dtype=dtype.numpy), dtype, device=self.name)

    def download(self, storage: Any, dtype: DType, copy: bool = True) -> np.ndarray:
        return download(storage, dtype, copy, self.name)

    def prepare(self, schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[Call, list[Node]]:
        key, leaves = structure(schedule, roots)
        with self._lock:
            entry = self._executables.get(key)
            if entry is not None:
                self._executables.move_to_end(key)
        if entry is None:
            # imported here: the compiler is needed only on a miss, and a machine that runs
            # precompiled modules may not have iree-base-compiler at all
            from vkml.compiler.cache import default_cache

            if len(schedule) >= LARGE_GRAPH_NODES:
                log.warning(
                    "vkml: compiling a %d-node graph for %s; expect about a millisecond per "
                    "node (the result is cached for the next realize)",
                    len(schedule), self.target.name,
                )  # fmt: skip
            lowered = self._lower(schedule, roots)
            vmfb = default_cache().get_or_compile(lowered.text, self.target, lowered.abi)
            abi = lowered.abi
            trailing = [self._fence()] if abi.fence else []
            executable = Executable(self._session_for(schedule), vmfb, abi.function, len(abi.outputs))
            entry = (executable, trailing)
            with self._lock:
                self._executables[key] = entry
                while len(self._executables) > self.capacity:
                    self._executables.popitem(last=False)
        else:
            bump("cache_hits_memory")
        executable, trailing = entry
        shapes = [(r.shape, r.dtype) for r in roots]

        def call(storages: Sequence[Any]) -> list[Any]:
            return self._invoke(executable, list(storages), shapes, trailing)

        return call, leaves

    def _session_for(self, schedule: Sequence[Node]) -> Any:
        """The HAL session that runs this schedule's executable (the device's own here)."""
        return self.session

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

    def clear_executables(self) -> None:
        with self._lock:
            self._executables.clear()


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


def vulkan_target_for(report: VulkanDeviceReport) -> str:
    """The IREE Vulkan target for a physical device (``VKML_VULKAN_TARGET`` overrides).

    A target that does not match the device can give wrong answers silently (IREE's
    ``ampere`` target on lavapipe did), so the choice follows what the device reports.
    """
    explicit = os.environ.get("VKML_VULKAN_TARGET", "").strip()
    if explicit:
        if explicit not in VULKAN_TARGETS:
            raise DeviceError(
                f"VKML_VULKAN_TARGET={explicit!r} is not an IREE 3.13 Vulkan target; "
                f"known: {', '.join(sorted(VULKAN_TARGETS))}"
            )
        return explicit
    name = report.name.lower()
    if report.device_type == "cpu" and "llvmpipe" in name:
        return "llvmpipe"
    if report.vendor_id == 0x10DE:  # NVIDIA: Ampere's feature set runs on Ampere and later
        return "ampere"
    if report.vendor_id == 0x1002:
        return "rdna3" if "rx 7" in name else "rdna2"
    if report.vendor_id == 0x13B5:
        return "valhall"
    if report.vendor_id == 0x5143:
        return "adreno"
    return "vp_android_baseline_2022"


class VulkanDevice(IreeDevice):
    """A Vulkan physical device, through IREE's vulkan-spirv target and vulkan driver.

    Results are written into buffers vkml allocates before the call (host-visible device
    memory, ``iree.abi.output`` arguments), so reading one back is a mapping, not a copy.
    """

    kind = "vulkan"

    def __init__(self, name: str, report: VulkanDeviceReport) -> None:
        # the same Target VKML_PRECOMPILE_VULKAN builds elsewhere, hence the same cache keys
        target = vulkan_target(
            vulkan_target_for(report),
            float64=report.shader_float64,
            driver=f"vulkan://GPU-{report.device_uuid}" if report.device_uuid else "vulkan",
            loop_cap=report.shader_loop_cap,
        )
        super().__init__(name, target)
        self.report = report
        # A discrete GPU's host-visible memory is its own, read by the host over PCIe without
        # caching (64 MiB took 3 s on an H200): read results back through a staging copy. An
        # integrated GPU or a CPU implementation maps plain host memory: read it in place.
        self.staged_readback = report.device_type == "discrete"
        refused: set[DType] = set()
        if not report.shader_float64:
            refused.add(float64)
        if not report.shader_int64:
            refused.add(int64)
        if not report.storage_buffer_16bit:
            refused.update((float16, bfloat16))
        self._refused = frozenset(refused)

    @property
    def dtypes(self) -> tuple[DType, ...]:
        return tuple(d for d in ALL if d not in self._refused)

    def upload(self, array: np.ndarray, dtype: DType) -> Any:
        host = np.asarray(array, dtype=dtype.numpy)  # a broadcast view stays a view: no copy
        return upload_mappable(self.session, host, dtype, self.name, physical=self.report.name)

    # Below this size a discrete GPU's result is read in place: on an H200 the staging copy
    # cost ~650 µs (a second submission and wait) and an uncached read ~21 MB/s (64 MiB in
    # 3.06 s), which break even near 14 KiB.
    STAGED_READBACK_MIN_BYTES = 16 * 1024

    def download(self, storage: Any, dtype: DType, copy: bool = True) -> np.ndarray:
        big = storage.get_buffer().byte_length() >= self.STAGED_READBACK_MIN_BYTES
        if self.staged_readback and big:
            return download_staged(self.session, storage, dtype, copy, self.name, self.report.name)
        return download(storage, dtype, copy, self.name, self.report.name)

    def _lower(self, schedule: Sequence[Node], roots: Sequence[Node]) -> Lowered:
        # Vulkan drivers fold float arithmetic as if it were exact (ADR 0009)
        return lower(schedule, roots, output_args=True, fence_float_ops=True)

    def _invoke(
        self, executable: Executable, args: list[Any], results: Sequence[tuple[tuple[int, ...], DType]],
        trailing: list[Any],
    ) -> list[Any]:  # fmt: skip
        sess, name, physical = self.session, self.name, self.report.name
        outputs = [allocate_mappable(sess, shape, dtype, name, physical) for shape, dtype in results]
        executable.invoke(args + outputs + trailing, device=name, physical=physical, results=results)
        return outputs


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
    key = str(name).strip().lower()
    found = _DEVICES.get(key)
    if found is None and key.startswith("vulkan"):
        found = _vulkan_device(key)
    if found is None:
        vulkan = [f"vulkan:{r.index}" for r in vulkan_reports()]
        present = ", ".join([*(d for d in _DEVICES if d not in vulkan), *vulkan])
        raise DeviceError(f"unknown device {name!r}; devices present: {present}")
    return found


_VULKAN_REPORTS: list[VulkanDeviceReport] | None = None


def vulkan_reports() -> list[VulkanDeviceReport]:
    """The Vulkan devices' reports, read from the loader once per process."""
    global _VULKAN_REPORTS
    if _VULKAN_REPORTS is None:
        _VULKAN_REPORTS = vulkan_device_reports()
    return _VULKAN_REPORTS


def _vulkan_device(key: str) -> Device | None:
    index = key.partition(":")[2] or "0"
    if not index.isdigit():
        return None
    reports = vulkan_reports()
    if int(index) >= len(reports):
        return None
    device = VulkanDevice(f"vulkan:{int(index)}", reports[int(index)])
    _DEVICES[device.name] = device
    return device


def all_devices() -> list[Device]:
    return list(_DEVICES.values())


def best_device() -> Device:
    """The best device here: a discrete GPU, else an integrated one, else a virtual one, else a
    CPU Vulkan implementation (lavapipe), else ``vkml.cpu``.

    Vulkan device indices are not stable across environments (a container can number the
    same GPU differently), so choosing by type, as this does, is the portable way.
    """
    best = best_vulkan_report(vulkan_reports())
    if best is None or best.device_type == "other":
        return cpu
    return device(f"vulkan:{best.index}")


__all__ = ["Device", "all_devices", "cpu", "device", "reference"]
