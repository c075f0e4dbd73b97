"""Integer reductions of values the graph itself makes (constants and what is computed from
them), on every device bit for bit against the reference.

IREE 3.13's llvm-cpu codegen ran a reduction whose input had been folded to a constant (a
``linalg.generic`` whose body adds a constant and never reads its input) once instead of once
per element: ``(vkml.zeros((3,), int32) + 1).sum()`` gave 1 on ``cpu``. Integer reductions
are pairwise trees on every target now (``vkml-pairwise-integer-reductions``). Found by the
fuzz campaign (seed 3 of the third sitting: ``full((1, 5), -4, int32).sum()`` gave -4).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from vkml.runtime.vulkan_loader import vulkan_device_reports

DEVICES = ["cpu"] + (["vulkan:0"] if vulkan_device_reports() else [])
SHAPES = [(3,), (1, 5), (2, 5), (4, 1, 3)]

Made = Callable[[tuple[int, ...], str, vkml.Device], vkml.Tensor]
# ways a graph makes an integer value IREE can fold to a constant before it reduces it
MADE: dict[str, Made] = {
    "full": lambda s, d, dev: vkml.full(s, -4 if d != "uint32" else 4, dtype=d, device=dev),
    "zeros + 1": lambda s, d, dev: vkml.zeros(s, dtype=d, device=dev) + 1,
    "scaled": lambda s, d, dev: vkml.full(s, 3, dtype=d, device=dev) * 5,
    "widened": lambda s, d, dev: vkml.full(s, -7, dtype="int32", device=dev).astype(d),
}
REDUCTIONS: dict[str, Callable[[vkml.Tensor], vkml.Tensor]] = {
    "sum": lambda t: t.sum(),
    "sum last axis": lambda t: t.sum(axis=-1),
    "amax": lambda t: t.amax(),
    "amin first axis": lambda t: t.amin(axis=0),
}


def _graph(device: vkml.Device, made: str, dtype: str) -> list[vkml.Tensor]:
    return [r(MADE[made](s, dtype, device)) for s in SHAPES for r in REDUCTIONS.values()]


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32"])
@pytest.mark.parametrize("made", list(MADE))
@pytest.mark.parametrize("name", DEVICES)
def test_reductions_of_made_integer_values_match_the_reference(
    name: str, made: str, dtype: str
) -> None:
    got = _graph(vkml.device(name), made, dtype)
    vkml.realize(*got)
    want = _graph(vkml.reference, made, dtype)
    labels = [f"{r} of {s}" for s in SHAPES for r in REDUCTIONS]
    for label, g, w in zip(labels, got, want, strict=True):
        assert_bit_exact(g.numpy(), w.numpy(), f"{label} of {made} {dtype} on {name}")


@pytest.mark.parametrize("name", DEVICES)
def test_a_count_of_true_values_made_on_the_device(name: str) -> None:
    device = vkml.device(name)
    flags = vkml.zeros((2, 5), dtype="int32", device=device) == 0
    assert flags.sum().item() == 10
    assert np.array_equal(flags.sum(axis=1).numpy(), [5, 5])
