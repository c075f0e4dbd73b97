"""realize(): the seven steps that turn pending nodes into computed ones.

1. topological order (iterative; computed nodes are leaves, so nothing runs twice)
2. one device per graph (DeviceError naming both otherwise)
3. support check per node (UnsupportedOperatorError with the remedy; never a fallback)
4. coverage record, when ``VKML_COVERAGE`` names a file
5. bind: the leaves' storage becomes the arguments
6. one invocation of one function built from the whole schedule
7. bind each root's result storage, then mark the roots computed

A failure at any step leaves every node exactly as it was: unrealized and re-realizable.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from vkml.errors import DeviceError, UnsupportedOperatorError
from vkml.frontend.coverage import record_coverage
from vkml.frontend.graph import Node, toposort
from vkml.runtime import bump

# Tests set this to observe the order of the steps; None in normal use.
STEP_HOOK: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if STEP_HOOK is not None:
        STEP_HOOK(name)


def realize_nodes(nodes: Sequence[Node]) -> None:
    """Compute every node in ``nodes`` that is not computed yet, in one invocation."""
    roots: list[Node] = []
    for node in nodes:
        if not node._computed and node not in roots:
            roots.append(node)
    if not roots:
        return
    _step("toposort")
    schedule = toposort(roots)
    _step("device")
    device = roots[0].device
    for node in schedule:
        if node.device is not device:
            raise DeviceError(
                f"'realize' operands are on different devices: {device} and {node.device}"
            )
    _step("support")
    for node in schedule:
        if not node._computed and not device.supports(node.op, node.dtype):
            remedy = "cpu" if device.kind != "cpu" else "reference"
            raise UnsupportedOperatorError(node.op, node.dtype.name, device.name, remedy)
    _step("coverage")
    path = os.environ.get("VKML_COVERAGE")
    if path:
        record_coverage(path, schedule, device.name)
    _step("bind")
    _step("invoke")
    results = device.execute(schedule, roots)
    _step("mark")
    for node, storage in zip(roots, results):
        node._bind(storage)
    for node in roots:
        node._mark_computed()
    bump("realizes")
