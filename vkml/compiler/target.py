"""Compile targets: what IREE compiles for and which HAL driver runs the result."""

from __future__ import annotations

import os
from dataclasses import dataclass

from vkml.errors import DeviceError
from vkml.runtime.vulkan_loader import DRIVER_ID_MESA_LLVMPIPE, SHADER_LOOP_CAPS, VulkanDeviceReport


@dataclass(frozen=True)
class Target:
    """An IREE compile target: backend, the flags vkml chose for it, and its HAL driver.

    ``loop_cap`` is the most loop iterations one shader invocation may run on the device's
    driver (lavapipe's 65,535), or ``None``: a capped target splits long contractions and has
    every dispatch's loop budget checked at compile time (``vkml.compiler.loop_budget``).

    ``queued``: realize's modules use IREE's async-external execution model (the function
    takes a wait and a signal fence, ``Abi.queued``). On Vulkan a synchronous call creates a
    timeline semaphore per call, ~0.5 ms on an H100 (ADR 0015).
    """

    name: str
    backend: str
    driver: str
    flags: tuple[str, ...]
    loop_cap: int | None = None
    queued: bool = False

    @property
    def iree_flags(self) -> tuple[str, ...]:
        """Every flag ``iree-compile`` gets for this target: ``flags`` and the execution model."""
        return (*self.flags, *(("--iree-execution-model=async-external",) if self.queued else ()))


# IREE 3.13's Vulkan target names (an unknown name crashes the compiler, so vkml checks).
VULKAN_TARGETS = frozenset({
    "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_120", "sm_121",
    "pascal", "volta", "turing", "ampere", "ada", "a100", "rtx3080", "gfx90a", "gfx942",
    "gfx1100", "rdna2", "rdna3", "rdna4", "cdna2", "cdna3", "rx7900xtx", "valhall", "valhall4",
    "arm5gen", "mali-g715", "adreno", "videocore_vii", "llvmpipe", "vp_android_baseline_2022",
})  # fmt: skip

# The loop cap of the one driver an IREE Vulkan target is made for, where that driver caps
# loops: a module precompiled for such a target must have the key the device computes.
TARGET_LOOP_CAPS = {"llvmpipe": SHADER_LOOP_CAPS[DRIVER_ID_MESA_LLVMPIPE]}

# `<iree-vulkan-target>[+f64]`, comma-separated: the extra targets every Vulkan compile is
# also compiled for, onto disk, so that a machine without the compiler finds them.
PRECOMPILE_ENV = "VKML_PRECOMPILE_VULKAN"
_F64_SUFFIX = "+f64"


# IREE's constant-expression analysis (HoistIntoGlobals) grows with the square of a dispatch's
# size, and vkml's exact recipes (float32 division on Vulkan, float16 arithmetic everywhere)
# make large dispatches: a chain of 20 float32 divides compiled for lavapipe in 28.3 s with it
# and 4.6 s without, 100 float16 multiply-adds for llvm-cpu in 19.5 s and 12.6 s
# (benchmarks/results/compile-time.md). vkml passes tensors as arguments, so it has no large
# constant expression to hoist.
NO_CONST_EXPR_HOISTING = ("--iree-opt-const-expr-hoisting=false",)


def vulkan_target(
    iree_target: str, float64: bool, driver: str = "vulkan", loop_cap: int | None = None
) -> Target:
    """The compile target of a Vulkan device that IREE knows as ``iree_target``.

    This is the one place the Target of a Vulkan device is spelled, so a module compiled
    here for another machine's GPU has exactly the cache key that machine's device computes.

    Args:
        iree_target: an IREE ``--iree-vulkan-target`` name, one of ``VULKAN_TARGETS``.
        float64: whether the device has ``shaderFloat64``; without it IREE demotes float64
            to float32.
        driver: the IREE HAL driver URI; not part of the cache key.
        loop_cap: the driver's shader loop cap (``VulkanDeviceReport.shader_loop_cap``).

    Raises:
        DeviceError: ``iree_target`` is not an IREE 3.13 Vulkan target.
    """
    if iree_target not in VULKAN_TARGETS:
        raise DeviceError(
            f"{iree_target!r} is not an IREE 3.13 Vulkan target; known: "
            f"{', '.join(sorted(VULKAN_TARGETS))}"
        )
    return Target(
        name=f"vulkan-spirv-{iree_target}",
        backend="vulkan-spirv",
        driver=driver,
        flags=(
            f"--iree-vulkan-target={iree_target}",
            # keep float64 real where the device has it (IREE would demote it to f32)
            f"--iree-input-demote-f64-to-f32={'false' if float64 else 'true'}",
            # IREE 3.13 replays a memoized command buffer of copies only on the buffers of
            # the call that recorded it: a repeated concatenate([x, x]) answered from the
            # first call's storage (tests/py/devices/test_replay_new_buffers.py)
            "--iree-hal-memoization=false",
            *NO_CONST_EXPR_HOISTING,
        ),
        loop_cap=loop_cap,
        queued=True,
    )


def parse_precompile_targets(spec: str) -> list[Target]:
    """The Vulkan targets named by ``spec``: comma-separated ``<iree-vulkan-target>[+f64]``,
    ``+f64`` for a device with ``shaderFloat64`` (``"ampere+f64"``: an NVIDIA GPU).

    Raises:
        DeviceError: an entry names no IREE 3.13 Vulkan target (checked before anything is
            compiled: an unknown name crashes IREE's compiler).
    """
    targets: list[Target] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        name = entry.removesuffix(_F64_SUFFIX)
        if name not in VULKAN_TARGETS:
            raise DeviceError(
                f"{PRECOMPILE_ENV}={spec!r}: {name!r} is not an IREE 3.13 Vulkan target; "
                f"write comma-separated <target> or <target>{_F64_SUFFIX} entries "
                f"(e.g. ampere{_F64_SUFFIX}), with a target from: "
                f"{', '.join(sorted(VULKAN_TARGETS))}"
            )
        target = vulkan_target(
            name, float64=entry.endswith(_F64_SUFFIX), loop_cap=TARGET_LOOP_CAPS.get(name)
        )
        if target not in targets:
            targets.append(target)
    return targets


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
        # not "all": IREE 3.13's unpack ukernel fails to lower on AVX-512 hosts (znver4) for
        # an outer product's unpack (K = 1); mmt4d and pack carry the speed-up on their own
        "--iree-llvmcpu-enable-ukernels=mmt4d,pack",
        *NO_CONST_EXPR_HOISTING,
    ),
)


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
