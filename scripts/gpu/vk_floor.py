"""Measure the floor of a GPU round trip in raw Vulkan: submit and wait, 0, 1 or 2 dispatches.

    python3 scripts/gpu/vk_floor.py [--device-index N] [--reps N] [--allow-cpu] [--json PATH]

For issue 12 (Vulkan at the GPU's speed): IREE's Vulkan HAL takes about 650-1100 µs a call on
the H200; this times the same round trip with only the driver under it, the floor that figure
is compared against. It needs Python 3, NumPy and libvulkan.so.1, reached through ctypes
(vk_raw.py, which also writes the shader's SPIR-V): no compiler, binding or IREE.

Each command buffer is recorded once and resubmitted. A case runs --warmup (200) round trips,
then times --reps (2000) one by one: median, minimum and 90th percentile, in µs.

- empty: vkQueueSubmit of an empty command buffer, vkWaitForFences, vkResetFences.
- one-dispatch: the same around out = a + b over 4 floats in host-visible storage buffers.
- two-dispatch-barrier: two such dispatches, a compute-to-compute barrier between them.
- one-dispatch-timeline: one-dispatch signalling a timeline semaphore waited on with
  vkWaitSemaphores, as IREE's HAL waits; skipped without Vulkan 1.2 timeline semaphores.
- one-dispatch-1M: the add over 1,048,576 floats in device-local memory, not read back.

The 4-float cases end with the compute-to-host barrier a result the host reads needs. Every
result is checked once timed (the 1M case's by one copy to the host). The times include
Python's and ctypes' share of the calls, about a microsecond. The first discrete GPU is
measured unless --device-index N (vkEnumeratePhysicalDevices order) says otherwise; without
one the script stops, listing the devices, unless --allow-cpu (lavapipe will do). --json PATH
also writes the results. Exit status: 0 all checks ok, 1 a mismatch, 2 no device to measure.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import vk_raw as vk

TIMEOUT_NS = 10 * 10**9  # a wait this long means a hung device, and VK_TIMEOUT raises
NO_LIMIT = 2**64 - 1  # how IREE waits: the NVIDIA driver may block rather than spin then
BIG_N = 1 << 20


class NoSuitableDevice(RuntimeError):
    """Vulkan works, but no device here is one the options allow measuring."""


class Gpu:
    """One Vulkan device, its queue and everything made on it; close() destroys them all."""

    def __init__(self, device_index: int | None, allow_cpu: bool) -> None:
        self._alive: list[Any] = []  # ctypes objects whose addresses Vulkan holds
        self.cleanup: list[Callable[[], None]] = []
        gipa = vk.load_loader()
        try:
            self._create_instance(gipa)
            physical = self._pick(device_index, allow_cpu)
            self._create_device(gipa, physical)
        except BaseException:
            self.close()
            raise

    def keep(self, obj: Any) -> int:  # obj's address; obj lives as long as the Gpu
        self._alive.append(obj)
        return ctypes.addressof(obj)

    def _create_instance(self, gipa: vk.ProcAddr) -> None:
        pre = vk.instance_functions(gipa, None)
        # 1.2 for timeline semaphores; a 1.0 loader (2016) refuses it, and counts as no Vulkan
        app = vk.ApplicationInfo(pAppName=b"vk_floor", apiVersion=vk.API_VERSION_1_2)
        info = vk.InstanceCreateInfo(pAppInfo=self.keep(app))
        try:
            self.instance = vk.out(pre.vkCreateInstance, ctypes.byref(info), None)
        except vk.VulkanError as exc:
            raise vk.VulkanUnavailable(f"no Vulkan driver: {exc}") from exc
        self.ivk = vk.instance_functions(gipa, self.instance)
        self.cleanup.append(lambda: self.ivk.vkDestroyInstance(self.instance, None))

    def _pick(self, index: int | None, allow_cpu: bool) -> int:
        devices = vk.physical_devices(self.ivk, self.instance)
        if not devices:
            raise vk.VulkanUnavailable("the Vulkan loader reports no physical device")
        kinds = [info["type"] for _, _, info in devices]
        listing = "; ".join(f"{i}: {d[2]['name']} ({kinds[i]})" for i, d in enumerate(devices))
        if index is None:
            index = min(range(len(devices)), key=lambda i: vk.PREFERENCE.index(kinds[i]))
            if kinds[index] != "discrete" and not allow_cpu:
                raise NoSuitableDevice(
                    f"no discrete GPU among the Vulkan devices ({listing}): pass --allow-cpu "
                    "to measure the best of them anyway, or --device-index N"
                )
        elif not 0 <= index < len(devices):
            raise NoSuitableDevice(f"--device-index {index}: the devices are {listing}")
        elif kinds[index] == "cpu" and not allow_cpu:
            raise NoSuitableDevice(f"device {index} is a CPU implementation: pass --allow-cpu")
        handle, self.api, info = devices[index]
        self.info: dict[str, Any] = {"index": index, **info}
        return handle

    def _queue_family(self, physical: int) -> int:
        """The first family with compute, as IREE's HAL picks by default: on most GPUs the
        graphics+compute one, the primary queue, rather than a dedicated compute one."""
        get = self.ivk.vkGetPhysicalDeviceQueueFamilyProperties
        families = vk.enumerate_all(get, vk.QueueFamilyProperties, physical)
        family = next(i for i, f in enumerate(families) if f.flags & vk.QUEUE_COMPUTE)
        self.info.update(queue_family=family, queue_flags=f"0x{families[family].flags:x}")
        return family

    def _create_device(self, gipa: vk.ProcAddr, phys: int) -> None:
        self.memory = vk.MemoryProperties()
        self.ivk.vkGetPhysicalDeviceMemoryProperties(phys, ctypes.byref(self.memory))
        family = self._queue_family(phys)
        timeline = vk.TimelineFeatures()
        if self.api >= vk.API_VERSION_1_2:
            features = vk.Features2(pNext=ctypes.addressof(timeline))
            self.ivk.vkGetPhysicalDeviceFeatures2(phys, ctypes.byref(features))
        self.timeline = bool(timeline.timelineSemaphore)
        self.info["timeline_semaphores"] = self.timeline
        priority = ctypes.c_float(1.0)
        queue = vk.QueueCreateInfo(family=family, count=1, pPriorities=self.keep(priority))
        chain = self.keep(timeline) if self.timeline else None
        info = vk.DeviceCreateInfo(pNext=chain, queues=1, pQueues=self.keep(queue))
        self.device = vk.out(self.ivk.vkCreateDevice, phys, ctypes.byref(info), None)
        self.vk = vk.device_functions(gipa, self.instance, self.device)
        self.cleanup.append(lambda: self.vk.vkDestroyDevice(self.device, None))
        self.queue = vk.out(self.vk.vkGetDeviceQueue, self.device, family, 0)
        self.pool = self.create("CommandPool", vk.CommandPoolCreateInfo(family=family))

    def create(self, kind: str, info: Any, allocate: str = "", free: str = "") -> int:
        """vkCreate<kind> (or `allocate`) on info; vkDestroy<kind> (or `free`) at close()."""
        make = getattr(self.vk, allocate or f"vkCreate{kind}")
        handle = vk.out(make, self.device, ctypes.byref(info), None)
        destroy = getattr(self.vk, free or f"vkDestroy{kind}")
        self.cleanup.append(lambda: destroy(self.device, handle, None))
        return handle

    def buffer(self, size: int, usage: int, flags: int) -> tuple[int, int]:
        """A buffer bound to its own allocation of the first memory type with `flags`."""
        buf = self.create("Buffer", vk.BufferCreateInfo(size=size, usage=usage))
        req = vk.MemoryRequirements()
        self.vk.vkGetBufferMemoryRequirements(self.device, buf, ctypes.byref(req))
        index = vk.memory_type(self.memory, req.typeBits, flags)
        info = vk.MemoryAllocateInfo(size=req.size, memoryTypeIndex=index)
        memory = self.create("", info, allocate="vkAllocateMemory", free="vkFreeMemory")
        self.vk.vkBindBufferMemory(self.device, buf, memory, 0)
        return buf, memory

    def floats(self, memory: int, n: int) -> np.ndarray:
        """The n float32 at the start of host-visible `memory`, mapped until close()."""
        address = ctypes.c_void_p()
        self.vk.vkMapMemory(self.device, memory, 0, 4 * n, 0, ctypes.byref(address))
        return np.ctypeslib.as_array((ctypes.c_float * n).from_address(address.value or 0))

    def record(self, body: Callable[[int], None]) -> int:
        """A primary command buffer holding what body records, resubmittable."""
        info = vk.CommandBufferAllocateInfo(pool=self.pool, count=1)
        cmd = vk.out(self.vk.vkAllocateCommandBuffers, self.device, ctypes.byref(info))
        self.vk.vkBeginCommandBuffer(cmd, ctypes.byref(vk.CommandBufferBeginInfo()))
        body(cmd)
        self.vk.vkEndCommandBuffer(cmd)
        return cmd

    def barrier(self, cmd: int, stages: tuple[int, int], access: tuple[int, int]) -> None:
        """A global memory barrier from (source, destination) stages and accesses."""
        b = vk.MemoryBarrier(srcAccess=access[0], dstAccess=access[1])
        self.vk.vkCmdPipelineBarrier(cmd, *stages, 0, 1, ctypes.byref(b), 0, None, 0, None)

    def round_trip(
        self, cmd: int, timeline: bool = False, limit: int = TIMEOUT_NS
    ) -> Callable[[], None]:
        """One round trip of cmd: submit it, then wait on a fence (and reset it) or, with
        `timeline`, for the next value of a timeline semaphore (vkWaitSemaphores); each wait
        limited to `limit` ns (NO_LIMIT: UINT64_MAX, as IREE's synchronous calls wait)."""
        submit = vk.SubmitInfo(cmds=1, pCmds=self.keep((ctypes.c_void_p * 1)(cmd)))
        v, queue, device, submit_p = self.vk, self.queue, self.device, ctypes.byref(submit)
        queue_submit = v.vkQueueSubmit
        if not timeline:
            fence = self.create("Fence", vk.FenceCreateInfo())
            fences, wait, reset = (ctypes.c_void_p * 1)(fence), v.vkWaitForFences, v.vkResetFences

            def fence_step() -> None:
                queue_submit(queue, 1, submit_p, fence)
                wait(device, 1, fences, 1, limit)
                reset(device, 1, fences)

            return fence_step
        kind = vk.SemaphoreTypeCreateInfo(type=vk.SEMAPHORE_TYPE_TIMELINE)
        sem = self.create("Semaphore", vk.SemaphoreCreateInfo(pNext=self.keep(kind)))
        sems, value = self.keep((ctypes.c_void_p * 1)(sem)), ctypes.c_uint64(0)
        values = vk.TimelineSubmitInfo(signals=1, pSignalValues=self.keep(value))
        submit.pNext, submit.signals, submit.pSignals = self.keep(values), 1, sems
        until = vk.SemaphoreWaitInfo(count=1, pSemaphores=sems, pValues=self.keep(value))
        until_p, wait_value = ctypes.byref(until), v.vkWaitSemaphores

        def timeline_step() -> None:
            value.value += 1
            queue_submit(queue, 1, submit_p, None)
            wait_value(device, until_p, limit)

        return timeline_step

    def close(self) -> None:
        if self.cleanup and getattr(self, "device", None):
            self.vk.vkDeviceWaitIdle(self.device)
        while self.cleanup:
            self.cleanup.pop()()


class AddKernel:
    """The add shader's compute pipeline, and descriptor sets binding it to buffers."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu, compute = gpu, vk.SHADER_STAGE_COMPUTE
        code = vk.add_spirv()
        words = (ctypes.c_uint32 * (len(code) // 4)).from_buffer_copy(code)  # 4-byte aligned
        module_info = vk.ShaderModuleCreateInfo(codeSize=len(code), pCode=gpu.keep(words))
        module = gpu.create("ShaderModule", module_info)
        bindings = (vk.SetLayoutBinding * 3)()
        for i, binding in enumerate(bindings):
            binding.binding, binding.count, binding.stages = i, 1, compute
            binding.type = vk.DESCRIPTOR_STORAGE_BUFFER
        set_info = vk.SetLayoutCreateInfo(bindings=3, pBindings=gpu.keep(bindings))
        self.set_layouts = (ctypes.c_void_p * 1)(gpu.create("DescriptorSetLayout", set_info))
        push = vk.PushConstantRange(stages=compute, offset=0, size=4)  # the count, n
        layout_info = vk.PipelineLayoutCreateInfo(
            sets=1, pSetLayouts=gpu.keep(self.set_layouts), ranges=1, pRanges=gpu.keep(push)
        )
        self.layout = gpu.create("PipelineLayout", layout_info)
        stage = vk.StageCreateInfo(stage=compute, module=module, pName=b"main")
        info = vk.ComputePipelineCreateInfo(stage=stage, layout=self.layout)
        create = gpu.vk.vkCreateComputePipelines
        self.pipeline = vk.out(create, gpu.device, None, 1, ctypes.byref(info), None)
        gpu.cleanup.append(lambda: gpu.vk.vkDestroyPipeline(gpu.device, self.pipeline, None))
        sizes = vk.PoolSize(type=vk.DESCRIPTOR_STORAGE_BUFFER, count=6)
        pool_info = vk.DescriptorPoolCreateInfo(maxSets=2, sizes=1, pSizes=gpu.keep(sizes))
        self.pool = gpu.create("DescriptorPool", pool_info)

    def bind(self, buffers: list[int]) -> int:
        """A descriptor set with buffers (a, b, out) at bindings 0, 1, 2."""
        g = self.gpu
        info = vk.SetAllocateInfo(pool=self.pool, count=1, pSetLayouts=g.keep(self.set_layouts))
        dset = vk.out(g.vk.vkAllocateDescriptorSets, g.device, ctypes.byref(info))
        infos, writes = (vk.BufferInfo * 3)(), (vk.WriteDescriptorSet * 3)()
        for i, (buffer, write) in enumerate(zip(buffers, writes, strict=True)):
            infos[i].buffer, infos[i].range = buffer, vk.WHOLE_SIZE
            write.sType, write.set, write.binding, write.count = write.STYPE, dset, i, 1
            write.type, write.pBuffer = vk.DESCRIPTOR_STORAGE_BUFFER, ctypes.addressof(infos[i])
        g.vk.vkUpdateDescriptorSets(g.device, 3, writes, 0, None)
        return dset

    def dispatch(self, cmd: int, dset: int, n: int) -> None:
        """Record out = a + b over n floats of dset's buffers."""
        v, compute = self.gpu.vk, vk.BIND_POINT_COMPUTE
        v.vkCmdBindPipeline(cmd, compute, self.pipeline)
        sets = (ctypes.c_void_p * 1)(dset)
        v.vkCmdBindDescriptorSets(cmd, compute, self.layout, 0, 1, sets, 0, None)
        count = ctypes.c_uint32(n)  # recorded by value: the buffer keeps no pointer to it
        v.vkCmdPushConstants(cmd, self.layout, vk.SHADER_STAGE_COMPUTE, 0, 4, ctypes.byref(count))
        v.vkCmdDispatch(cmd, -(-n // vk.LOCAL_SIZE_X), 1, 1)


def timed(step: Callable[[], None], reps: int, warmup: int) -> dict[str, Any]:
    """Median, minimum and 90th percentile of `reps` calls of step, in µs, after `warmup`."""
    for _ in range(warmup):
        step()
    clock, ns = time.perf_counter_ns, np.empty(reps)
    for k in range(reps):
        start = clock()
        step()
        ns[k] = clock() - start
    us = {"median_us": np.median(ns), "min_us": ns.min(), "p90_us": np.percentile(ns, 90)}
    return {key: round(float(value) / 1e3, 2) for key, value in us.items()}


def small_cases(gpu: Gpu, kernel: AddKernel, reps: int, warmup: int) -> dict[str, Any]:
    """The 4-float cases, each checked against NumPy once timed."""
    host = vk.HOST_VISIBLE | vk.HOST_COHERENT
    made = [gpu.buffer(16, vk.USAGE_STORAGE_BUFFER, host) for _ in range(3)]
    a, b, out = (gpu.floats(memory, 4) for _, memory in made)
    a[:], b[:] = [1, 2, 3, 4], [10, 20, 30, 40]
    dset = kernel.bind([buffer for buffer, _ in made])

    def dispatches(count: int) -> int:
        def body(cmd: int) -> None:
            for k in range(count):
                if k:  # the second dispatch must see the first's writes, as a chain of ops would
                    stages = (vk.STAGE_COMPUTE_SHADER, vk.STAGE_COMPUTE_SHADER)
                    gpu.barrier(cmd, stages, (vk.SHADER_WRITE, vk.SHADER_READ | vk.SHADER_WRITE))
                kernel.dispatch(cmd, dset, 4)
            to_host = (vk.STAGE_COMPUTE_SHADER, vk.STAGE_HOST)  # a fence alone does not
            gpu.barrier(cmd, to_host, (vk.SHADER_WRITE, vk.HOST_READ))  # make writes visible

        return gpu.record(body)

    one = dispatches(1)
    rounds = {
        "empty": gpu.round_trip(gpu.record(lambda cmd: None)),
        "one-dispatch": gpu.round_trip(one),
        "two-dispatch-barrier": gpu.round_trip(dispatches(2)),
        "one-dispatch-timeline": gpu.round_trip(one, timeline=True) if gpu.timeline else None,
        "one-dispatch-no-limit": gpu.round_trip(one, limit=NO_LIMIT),
        "timeline-no-limit": gpu.round_trip(one, True, NO_LIMIT) if gpu.timeline else None,
    }
    results: dict[str, Any] = {}
    for name, step in rounds.items():
        if step is None:
            results[name] = {"skipped": "the device has no timeline semaphores"}
            continue
        out[:] = np.nan
        results[name] = timed(step, reps, warmup)
        if name != "empty":
            results[name]["check"] = "ok" if np.array_equal(out, a + b) else "mismatch"
    return results


def big_case(gpu: Gpu, kernel: AddKernel, n: int, reps: int, warmup: int) -> dict[str, Any]:
    """The add over n floats in device-local memory; the result is read back only once timed."""
    size, usage = 4 * n, vk.USAGE_STORAGE_BUFFER | vk.USAGE_TRANSFER_SRC | vk.USAGE_TRANSFER_DST
    buffers = [gpu.buffer(size, usage, vk.DEVICE_LOCAL)[0] for _ in range(3)]
    dset = kernel.bind(buffers)

    def fill(cmd: int) -> None:
        for buffer, value in zip(buffers, (1.0, 2.0, np.nan), strict=True):
            bits = int(np.float32(value).view(np.uint32))
            gpu.vk.vkCmdFillBuffer(cmd, buffer, 0, size, bits)
        stages = (vk.STAGE_TRANSFER, vk.STAGE_COMPUTE_SHADER)
        gpu.barrier(cmd, stages, (vk.TRANSFER_WRITE, vk.SHADER_READ | vk.SHADER_WRITE))

    gpu.round_trip(gpu.record(fill))()
    add = gpu.record(lambda cmd: kernel.dispatch(cmd, dset, n))
    result = timed(gpu.round_trip(add), reps, warmup)
    staging, memory = gpu.buffer(size, vk.USAGE_TRANSFER_DST, vk.HOST_VISIBLE | vk.HOST_COHERENT)

    def read_back(cmd: int) -> None:
        stages = (vk.STAGE_COMPUTE_SHADER, vk.STAGE_TRANSFER)
        gpu.barrier(cmd, stages, (vk.SHADER_WRITE, vk.TRANSFER_READ))
        region = vk.BufferCopy(src=0, dst=0, size=size)
        gpu.vk.vkCmdCopyBuffer(cmd, buffers[2], staging, 1, ctypes.byref(region))
        gpu.barrier(cmd, (vk.STAGE_TRANSFER, vk.STAGE_HOST), (vk.TRANSFER_WRITE, vk.HOST_READ))

    gpu.round_trip(gpu.record(read_back))()
    result["check"] = "ok" if bool((gpu.floats(memory, n) == 3.0).all()) else "mismatch"
    return result


def measure(
    reps: int = 2000, warmup: int = 200, device_index: int | None = None, allow_cpu: bool = False
) -> dict[str, Any]:
    """Every case on the chosen device: the results, as --json writes them."""
    gpu = Gpu(device_index, allow_cpu)
    try:
        kernel = AddKernel(gpu)
        cases = small_cases(gpu, kernel, reps, warmup)
        cases["one-dispatch-1M"] = big_case(gpu, kernel, BIG_N, reps, warmup)
        return {"device": gpu.info, "reps": reps, "warmup": warmup, "cases": cases}
    finally:
        gpu.close()


def report(results: dict[str, Any]) -> str:
    lines = [
        (
            "device {index}: {name} ({type}, vendor {vendor_id}, device {device_id}), driver "
            "{driver_version}, Vulkan {api_version}\nqueue family {queue_family} (flags "
            "{queue_flags}), timeline semaphores: {timeline_semaphores}"
        ).format(**results["device"]),
        f"µs per round trip, {results['reps']} timed after {results['warmup']} warm-up:",
        f"{'case':<24}{'median':>9}{'min':>9}{'p90':>9}  check",
    ]
    for name, r in results["cases"].items():
        if "skipped" in r:
            lines.append(f"{name:<24}  skipped: {r['skipped']}")
        else:
            times = f"{r['median_us']:9.1f}{r['min_us']:9.1f}{r['p90_us']:9.1f}"
            lines.append(f"{name:<24}{times}  {r.get('check', '-')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--device-index", type=int, help="default: the first discrete GPU")
    parser.add_argument("--reps", type=int, default=2000, help="timed round trips per case")
    parser.add_argument("--warmup", type=int, default=200, help="untimed ones before them")
    parser.add_argument("--allow-cpu", action="store_true", help="accept any device (lavapipe)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results here")
    args = parser.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        parser.error("--reps must be at least 1 and --warmup at least 0")
    try:
        results = measure(args.reps, args.warmup, args.device_index, args.allow_cpu)
    except (NoSuitableDevice, vk.VulkanUnavailable) as exc:
        print(f"vk_floor: {exc}", file=sys.stderr)
        return 2
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 1 if any(r.get("check") == "mismatch" for r in results["cases"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
