"""Every executable vkml emits for Vulkan fits the 128 bytes of push constants that every
conformant Vulkan device provides, for each Vulkan target vkml picks. A compile-only check:
no Vulkan device is needed."""

from __future__ import annotations

import numpy as np
import pytest
from support import op_programs as ops_test

import vkml
from vkml.compiler.lower import lower_to_mlir
from vkml.compiler.push_constants import VULKAN_GUARANTEED_BYTES, oversized, push_constant_bytes
from vkml.compiler.target import vulkan_target
from vkml.graph.walk import toposort


def vulkan_module(*tensors: vkml.Tensor) -> str:
    roots = [t.node for t in tensors]
    return lower_to_mlir(toposort(roots), roots, output_args=True, fence_float_ops=True)


# lavapipe and NVIDIA's target in make test; two more GPU families with make test-exhaustive
@pytest.mark.parametrize(
    "target",
    ["llvmpipe", "ampere", *(pytest.param(t, marks=pytest.mark.exhaustive)
                             for t in ("rdna3", "vp_android_baseline_2022"))],
)  # fmt: skip
def test_every_float32_op_fits_the_guaranteed_push_constants(target: str) -> None:
    t = {k: vkml.tensor(v) for k, v in ops_test.inputs("float32").items()}
    outs = [fn(t) for _, fn in ops_test.programs("float32").values()]
    if target != "llvmpipe":  # these targets have no float64: vkml refuses it there
        outs = [o for o in outs if o.dtype is not vkml.float64]
    sizes = push_constant_bytes(vulkan_module(*outs), vulkan_target(target, float64=True))
    assert sizes, "no executables were dumped"
    assert max(sizes.values()) <= VULKAN_GUARANTEED_BYTES, sizes


def test_larger_graphs_fit_too() -> None:
    x = vkml.tensor(np.ones((64, 33), np.float32))
    y = vkml.softmax(x @ x.T, axis=1).sum(axis=0) + x[::-3, 5:].amax()
    assert not oversized(
        vulkan_module(y, (x * 2.0).mean(axis=0)), vulkan_target("llvmpipe", float64=True)
    )


def test_the_check_can_fail() -> None:
    # a dispatch with dynamic scalars uses push constants: a tiny limit must flag it
    x = vkml.tensor(np.ones((64, 33), np.float32))
    y = vkml.softmax(x @ x.T, axis=1).sum(axis=0) + x[::-3, 5:].amax()
    found = oversized(vulkan_module(y), vulkan_target("llvmpipe", float64=True), limit=0)
    assert found and all(size > 0 for size in found.values())
