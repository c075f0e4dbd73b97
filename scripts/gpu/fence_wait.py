"""How an IREE Vulkan call's wait for the GPU is made decides its cost: a measurement.

Issue 12, ADR 0015. A synchronous IREE call (the calling convention vkml compiles today)
waits for its own work with ``vkWaitSemaphores`` and no time limit. This times the same
4-element add, its result storage passed in, called

- ``sync``: synchronously, as vkml calls today;
- ``async, wait``: compiled with ``--iree-execution-model=async-external`` (the call takes a
  wait and a signal fence and returns at once), then the signal fence waited on with no
  time limit, with a finite one, or polled (``wait(timeout=0)`` until it is reached);

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

    async_ctx, async_fn = _load(instance, device, "add-out-async.vmfb")
    semaphore = device.create_semaphore(0)
    count = [0]

    def launch() -> rt.HalFence:
        count[0] += 1
        inputs = rt.VmVariantList(5)
        for view in (a, b, out):
            inputs.push_ref(view)
        inputs.push_ref(rt.HalFence(1))  # nothing to wait for
        done = rt.HalFence.create_at(semaphore, count[0])
        inputs.push_ref(done)
        async_ctx.invoke(async_fn, inputs, rt.VmVariantList(1))
        return done

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
    }
    print(f"{args.driver}: µs per call of a 4-element add, result storage passed in")
    print(f"{'case':34} {'median':>8} {'min':>8}")
    for name, call in cases.items():
        med, best = timed(call, args.reps, warmup=max(20, args.reps // 10))
        print(f"{name:34} {med * 1e6:8.1f} {best * 1e6:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
