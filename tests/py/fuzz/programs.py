"""Build a fuzzed ``Case`` on a device, and describe each value it makes for the checker.

``build`` replays the case's steps with ``fuzz.steps`` on fresh input tensors of one device.
``describe`` reads the graph the reference device recorded: for each value, the primitive
nodes its step added (regions included), the earlier values it reads, whether the contract
makes it exact, a single bounded op on exact values, or neither (``fuzz.checker`` says what
each means), and the ops a device kind refuses on it. The structure is a pure function of the
case, so what is read from the reference graph holds for every device.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import vkml
from fuzz.steps import STEPS, Params
from fuzz.strategies import Case, input_array
from vkml.graph.node import Node
from vkml.graph.walk import region_nodes, toposort
from vkml.ops.registry import OPS

# Outputs kept per graph at most: a graph of thousands of nodes is checked at its last
# values and at evenly spaced ones, not at every value (each output is a buffer to read).
MAX_OUTPUTS = 48


@dataclass
class Built:
    """One case on one device: every value (inputs first), and which steps were refused."""

    values: list[vkml.Tensor]
    refused_steps: list[tuple[int, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Value:
    """What the checker needs to know about one value of a case."""

    index: int
    sources: tuple[int, ...]  # earlier values the step read
    ops: frozenset[tuple[str, str]]  # (op, result dtype) of the nodes the step added
    exact: bool  # every node on every path from the inputs is a bit-exact op
    bounded: Node | None  # the one non-exact node, when the step adds one on exact values


def build(case: Case, device: vkml.Device) -> Built:
    """The case's values on ``device``: its inputs, then one value per step that succeeded."""
    values = [vkml.tensor(input_array(spec), device=device) for spec in case.inputs]
    built = Built(values)
    for turn in range(case.repeat):
        for number, step in enumerate(case.steps):
            n = len(values)
            x, y, z = values[step.a % n], values[step.b % n], values[step.c % n]
            try:
                out = STEPS[step.kind](x, y, z, Params(step.params), device)
            except (vkml.VkmlError, ValueError) as exc:
                built.refused_steps.append((turn * len(case.steps) + number, type(exc).__name__))
                continue
            values.append(out)
    return built


def describe(built: Built) -> list[Value]:
    """Each value of a case built on the reference device, in order."""
    owner: dict[int, int] = {}
    described: list[Value] = []
    for index, tensor in enumerate(built.values):
        node = tensor.node
        if id(node) in owner:  # a step that returned an earlier value unchanged
            described.append(_alias(described[owner[id(node)]], index))
            continue
        added, sources = _added_nodes(node, owner)
        owner[id(node)] = index
        ops = frozenset((n.op, n.dtype.name) for n in added)
        inexact = [n for n in added if not OPS[n.op].bit_exact]
        exact_in = all(described[s].exact for s in sources)
        bounded = inexact[0] if len(inexact) == 1 and exact_in and inexact[0] is node else None
        described.append(Value(index, sources, ops, exact_in and not inexact, bounded))
    return described


def _alias(of: Value, index: int) -> Value:
    return Value(index, (of.index,), frozenset(), of.exact, None)


def _added_nodes(root: Node, owner: dict[int, int]) -> tuple[list[Node], tuple[int, ...]]:
    """The nodes reachable from ``root`` without passing an earlier value, and those values."""
    stop = {nid for nid in owner if nid != id(root)}
    added: list[Node] = []
    sources: set[int] = set()
    for node in toposort([root], descend=lambda n: id(n) not in stop):
        if id(node) in stop:
            sources.add(owner[id(node)])
            continue
        if node.op in OPS:
            added.append(node)
        if node.regions:
            added.extend(n for n in region_nodes(node) if n.op in OPS)
    return added, tuple(sorted(sources))


def refused_by(value: Value, kind: str, dtypes: tuple[str, ...]) -> tuple[str, str] | None:
    """The (op, dtype) a device of ``kind`` with ``dtypes`` refuses among the value's own
    nodes, per the op table (``OpDef.refuses``) and the device's dtypes; None if it runs."""
    for op, dtype in sorted(value.ops):
        if (kind, vkml.dtypes.to_dtype(dtype)) in OPS[op].refuses or dtype not in dtypes:
            return op, dtype
    return None


def outputs(case: Case, count: int) -> list[int]:
    """Indices of the values of a case checked as outputs: all for a small graph; for a
    large one the last step list's values and evenly spaced others."""
    if count <= MAX_OUTPUTS:
        return list(range(count))
    tail = set(range(max(0, count - len(case.steps)), count))
    stride = max(1, count // (MAX_OUTPUTS - len(tail) if MAX_OUTPUTS > len(tail) else 1))
    return sorted(tail | set(range(0, count, stride)))
