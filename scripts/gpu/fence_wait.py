"""How an IREE Vulkan call's wait for the GPU is made decides its cost: a measurement.

Issue 12, ADR 0015. A synchronous IREE call (the calling convention vkml compiles today)
waits for its own work with ``vkWaitSemaphores`` and no time limit. This times the same
4-element add, its result storage passed in, called

- ``sync``: synchronously, as vkml calls today;
- ``async, wait``: compiled with ``--iree-execution-model=async-external`` (the call takes a
  wait and a signal fence and returns at once), then the signal fence waited on with no
  time limit, with a finite one, or polled (``wait(timeout=0)`` until it is reached);
- three dependent adds split by fusion fences (three dispatches, two transient values),
  queued, with IREE allocating the transients each call or with a buffer passed in for them
  (``iree.abi.transients``, its size from the module's reflection);

and prints the median and minimum µs per call for each. Modules come from
``hal_profile.py prepare`` (``.gpuprof/add-out.vmfb``, ``add-out-async.vmfb``).

    python3 scripts/gpu/fence_wait.py [--reps 2000] [--driver vulkan]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import iree.runtime as rt
import numpy as np
from bench import timed

HERE = Path(".gpuprof")


def _view(device: rt.HalDevice, x: np.ndarray) -> rt.HalBufferView:
    return device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL,
        allowed_usage=rt.BufferUsage.DEFAULT,
        device=device,
        buffer=x,
        element_type=rt.HalElementType.FLOAT_32,
    )


def _load(instance: rt.VmInstance, device: rt.HalDevice, name: str) -> tuple:
    module = rt.VmModule.copy_buffer(instance, (HERE / name).read_bytes())
    context = rt.VmContext(instance, [rt.create_hal_module(instance, device), module])
    return context, module.lookup_function("main")


def _queued(
    instance: rt.VmInstance, device: rt.HalDevice, name: str, args: list[object]
) -> Callable[[], rt.HalFence]:
    """A launcher of the queued module ``name`` on ``args``: each call queues it once and
    returns its signal fence (one semaphore, its next value each time)."""
    context, function = _load(instance, device, name)
    semaphore = device.create_semaphore(0)
    count = [0]
    nothing = rt.HalFence(1)  # nothing to wait for

    def launch() -> rt.HalFence:
        count[0] += 1
        inputs = rt.VmVariantList(len(args) + 2)
        for arg in (*args, nothing):
            inputs.push_ref(arg)
        done = rt.HalFence.create_at(semaphore, count[0])
        inputs.push_ref(done)
        context.invoke(function, inputs, rt.VmVariantList(1))
        return done

    return launch


def _transient_storage(device: rt.HalDevice, name: str) -> rt.HalBuffer:
    """A buffer of the size the module's reflection asks for its transients."""
    module = rt.VmModule.copy_buffer(rt.VmInstance(), (HERE / name).read_bytes())
    size = int(module.lookup_function("main").reflection["iree.abi.transients.size.constant"])
    return device.allocator.allocate_buffer(
        memory_type=rt.MemoryType.DEVICE_LOCAL,
        allowed_usage=rt.BufferUsage.DEFAULT,
        allocation_size=max(size, 4),
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--driver", default="vulkan")
    args = parser.parse_args(argv)
    instance = rt.VmInstance()
    device = rt.get_device(args.driver)
    a, b, out = (_view(device, np.full(4, v, np.float32)) for v in (1.0, 2.0, 0.0))

    sync_ctx, sync_fn = _load(instance, device, "add-out.vmfb")

    def sync() -> None:
        inputs = rt.VmVariantList(3)
        for view in (a, b, out):
            inputs.push_ref(view)
        sync_ctx.invoke(sync_fn, inputs, rt.VmVariantList(1))

    launch = _queued(instance, device, "add-out-async.vmfb", [a, b, out])
    three = _queued(instance, device, "add3-out-async.vmfb", [a, b, out])
    storage = _transient_storage(device, "add3-out-async-transients.vmfb")
    three_stored = _queued(instance, device, "add3-out-async-transients.vmfb", [a, b, out, storage])

    def poll() -> None:
        done = launch()
        while not done.wait(timeout=0):
            pass

    cases: dict[str, Callable[[], None]] = {
        "sync (vkml today)": sync,
        "async, wait with no limit": lambda: launch().wait(),
        "async, wait with a 1 s limit": lambda: launch().wait(timeout=10**9),
        "async, wait with a 1 ms limit": lambda: launch().wait(timeout=10**6),
        "async, polled": poll,
        "3 dispatches, async, transients allocated": lambda: three().wait(),
        "3 dispatches, async, transients passed in": lambda: three_stored().wait(),
    }
    print(f"{args.driver}: µs per call of a 4-element add, result storage passed in")
    print(f"{'case':44} {'median':>8} {'min':>8}")
    for name, call in cases.items():
        med, best = timed(call, args.reps, warmup=max(20, args.reps // 10))
        print(f"{name:44} {med * 1e6:8.1f} {best * 1e6:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
