"""A compiled module called again reads this call's inputs and writes this call's outputs.

The fuzzing campaign found vulkan:0 answering a repeated ``concatenate([x, x])`` from the
first call's buffers: IREE memoizes the command buffer of a module that is nothing but copies,
and replayed it on the buffers it was recorded with, so the new result kept whatever the
allocator's memory held and a later tensor's storage was overwritten (IREE 3.13; fixed by
compiling with ``--iree-hal-memoization=false``, ``vkml.compiler.target``). Each graph here
is one IREE lowers to transfers only (no dispatch), realized again on new data.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import vkml
from vkml.runtime.vulkan_loader import vulkan_device_reports

DEVICES = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
Graph = Callable[[vkml.Tensor, vkml.Tensor], vkml.Tensor]
GRAPHS: dict[str, Graph] = {
    "concatenate x with itself": lambda x, y: vkml.concatenate([x, x]),
    "stack x with itself": lambda x, y: vkml.stack([x, x]),
    "concatenate x and y": lambda x, y: vkml.concatenate([x, y.reshape(1)]),
    "stack y with itself": lambda x, y: vkml.stack([y, y]),
    "broadcast y": lambda x, y: y.broadcast_to((3,)) + 0.0,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("graph", GRAPHS)
def test_a_repeated_copy_only_graph_gives_this_calls_answer(device: str, graph: str) -> None:
    make = GRAPHS[graph]
    for turn in range(4):
        a = np.array([turn, turn + 0.5], np.float32)
        b = np.array(100.0 + turn, np.float32)
        x, y = vkml.tensor(a, device=device), vkml.tensor(b, device=device)
        z = make(x, y)
        vkml.realize(x, y, z)
        want = make(vkml.tensor(a, device="reference"), vkml.tensor(b, device="reference"))
        assert z.numpy().tolist() == want.numpy().tolist(), f"{graph}, call {turn + 1}"
        # and no stale replay wrote into storage another tensor now holds
        assert x.numpy().tolist() == a.tolist() and y.item() == b, f"{graph}, call {turn + 1}"
