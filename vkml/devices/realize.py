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
from typing import Any

from vkml.devices.coverage import record_coverage
from vkml.devices.device import Call
from vkml.errors import DeviceError, UnsupportedOperatorError
from vkml.graph.node import Node
from vkml.graph.walk import toposort
from vkml.runtime import bump

# Tests set this to observe the order of the steps; None in normal use.
STEP_HOOK: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if STEP_HOOK is not None:
        STEP_HOOK(name)


def realize_nodes(nodes: Sequence[Node]) -> None:
    """Compute every node in ``nodes`` that is not computed yet, in one invocation."""
    _realize(nodes)


class Replay:
    """A realize kept for running again: the same graph on new leaf storages, one invocation,
    with no graph walk (``record``).

    ``leaves`` are the graph's inputs in argument order and ``roots`` its outputs, as they
    were when recorded; ``run(storages)`` takes one storage per leaf (same dtypes and shapes)
    and returns one per root.
    """

    __slots__ = ("_call", "device", "leaves", "roots")

    def __init__(self, device: Any, leaves: list[Node], roots: list[Node], call: Call) -> None:
        self.device = device
        self.leaves = leaves
        self.roots = roots
        self._call = call

    def run(self, storages: Sequence[Any]) -> list[Any]:
        """One invocation of the recorded graph on ``storages``; one storage per root."""
        results = self._call(storages)
        bump("realizes")
        return results


def record(nodes: Sequence[Node]) -> Replay:
    """Realize ``nodes`` as ``realize_nodes`` does, and return the realize for replaying.

    The nodes must all be pending: a computed one would not be an output of the graph.
    """
    replay = _realize(nodes, keep=True)
    if replay is None or len(replay.roots) != len(set(nodes)):
        raise ValueError("record(): every node must be pending (not computed yet) and distinct")
    return replay


def _realize(nodes: Sequence[Node], keep: bool = False) -> Replay | None:
    roots: list[Node] = []
    for node in nodes:
        if not node._computed and node not in roots:
            roots.append(node)
    if not roots:
        return None
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
    call, leaves = device.prepare(schedule, roots)
    _step("invoke")
    results = call([leaf._storage for leaf in leaves])
    _step("mark")
    for node, storage in zip(roots, results):
        node._bind(storage)
    for node in roots:
        node._mark_computed()
    bump("realizes")
    return Replay(device, leaves, roots, call) if keep else None
