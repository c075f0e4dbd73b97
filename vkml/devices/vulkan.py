"""``vulkan:N``: a Vulkan physical device, through IREE's vulkan-spirv target for what the
device reports (``vkml.compiler.target.vulkan_target_for``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vkml.compiler.lower import Lowered, lower
from vkml.compiler.target import vulkan_target, vulkan_target_for
from vkml.devices.iree import IreeDevice
from vkml.dtypes import ALL, DType, bfloat16, float16, float64, int64
from vkml.errors import DeviceMemoryError
from vkml.graph.node import Node
from vkml.runtime import (
    Executable,
    allocate_mappable,
    dlpack,
    download,
    download_staged,
    settle,
    upload_mappable,
)
from vkml.runtime.vulkan_loader import VulkanDeviceReport

# the most elements one value of a Vulkan graph may hold (IREE's SPIR-V indexes with i32)
MAX_VULKAN_ELEMENTS = 2**31 - 1


class VulkanDevice(IreeDevice):
    """A Vulkan physical device, through IREE's vulkan-spirv target and vulkan driver.

    Results are written into buffers vkml allocates before the call (host-visible device
    memory, ``iree.abi.output`` arguments), so reading one back is a mapping, not a copy.
    A realize queues its call and returns: what reads a result waits for it then, and a
    later realize that reads one waits for it on the device (``vkml.runtime.pending``).
    """

    kind = "vulkan"
    fences_float_ops = True  # Vulkan drivers fold float arithmetic as if it were exact

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
        self.queues_calls = target.queued
        # A discrete GPU's host-visible memory is its own, read by the host over PCIe without
        # caching (64 MiB took 3 s on an H200): read results back through a staging copy. An
        # integrated GPU or a CPU implementation maps plain host memory: read it in place.
        self.staged_readback = report.device_type == "discrete"
        # lavapipe waits on its semaphores by polling: two threads spin from the moment the
        # device is made (vkml.runtime.threads)
        self.demotes_spinning_threads = report.device_type == "cpu"
        if report.device_type == "discrete":  # a sync ~1-3 ms, a kernel ~6 us (H200)
            self.turns_per_sync = 64
            # a tiny call's wait: ~50 µs polled, ~70 µs blocked (H100, ADR 0015); a CPU
            # implementation would lose the core that computes the call to the polling
            self.spin = 0.002
        refused: set[DType] = set()
        if not report.shader_int64:
            refused.add(int64)
        # vkml's float64 functions compute on the bits of float64 values in int64
        if not report.shader_float64 or not report.shader_int64:
            refused.add(float64)
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
        settle((storage,), self.spin)
        big = storage.get_buffer().byte_length() >= self.STAGED_READBACK_MIN_BYTES
        if self.staged_readback and big:
            return download_staged(self.session, storage, dtype, copy, self.name, self.report.name)
        return download(storage, dtype, copy, self.name, self.report.name)

    def dlpack_device(self) -> tuple[int, int]:
        return dlpack.VULKAN, int(self.name.partition(":")[2] or 0)

    def download_result(self, storage: Any, dtype: DType) -> np.ndarray:
        # IREE allocates a module's own results in device-local memory: copy through staging
        return download_staged(self.session, storage, dtype, True, self.name, self.report.name)

    def _lower(self, schedule: Sequence[Node], roots: Sequence[Node]) -> Lowered:
        self._check_indexable(schedule)
        return lower(
            schedule,
            roots,
            output_args=True,
            fence_float_ops=self.fences_float_ops,
            queued=self.target.queued,
            transients=True,
            float64_math=float64 in self.dtypes,  # refused without int64 too
        )

    def _check_indexable(self, schedule: Sequence[Node]) -> None:
        """Refuse, before compiling, a graph holding a value IREE's SPIR-V code cannot index:
        it indexes with 32-bit integers, and failed to compile such a graph with a raw
        "failed to legalize operation 'arith.constant' ... 10000000000 : index"."""
        for node in schedule:
            elements = math.prod(node.shape)
            if elements > MAX_VULKAN_ELEMENTS:
                nbytes = elements * node.dtype.itemsize
                raise DeviceMemoryError(
                    f"{self.name} cannot hold the {node.dtype.name} {node.shape} value "
                    f"('{node.op}', {elements:,} elements) this graph computes: IREE's Vulkan "
                    f"code indexes with 32-bit integers, so a value holds at most 2**31 - 1 "
                    f"elements (a sum or other reduction of a larger value still computes "
                    f"it). Nothing was compiled or allocated; split the work into smaller "
                    f"pieces, or run it on vkml.cpu",
                    self.name,
                    "RESOURCE_EXHAUSTED",
                    nbytes,
                )

    def _invoke(
        self, executable: Executable, args: list[Any], results: Sequence[tuple[tuple[int, ...], DType]],
        trailing: list[Any],
    ) -> list[Any]:  # fmt: skip
        sess, name, physical = self.session, self.name, self.report.name
        outputs = [
            allocate_mappable(sess, shape, dtype, name, physical) for shape, dtype in results
        ]
        _, call = executable.submit(
            args + outputs + trailing, device=name, physical=physical, results=results
        )
        if call is not None:
            for view in outputs:
                view.pending = call
        return outputs
