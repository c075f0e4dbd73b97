"""The walks over a graph: topological order, the structural key, equal values, a work
estimate.

No walk here recurses along a chain of nodes, so 100,000-node chains build, realize and free
safely; only a node's regions are entered recursively (their nesting is shallow, written by
hand).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from vkml.graph.node import PARAM, SCALAR, Node, Region

V = TypeVar("V")


def toposort(roots: Iterable[Node], descend: Callable[[Node], bool] | None = None) -> list[Node]:
    """Every node the roots need, sources before users; computed nodes are leaves.

    Iterative depth-first post-order: a node is emitted once, after all its sources.
    ``descend(node)`` decides instead whether a node's sources are visited (autograd walks
    below computed nodes and stops elsewhere).
    """
    order: list[Node] = []
    seen: set[Node] = set()
    stack: list[tuple[Node, bool]] = []
    for root in roots:
        if root in seen:
            continue
        stack.append((root, False))
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            if (not node._computed) if descend is None else descend(node):
                for s in reversed(node.src):
                    if s not in seen:
                        stack.append((s, False))
    return order


def _key_attrs(attrs: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """Attributes as they enter the structural key: floats by their exact spelling, since
    ``0.0 == -0.0`` (and NaN != NaN) would otherwise share (or never find) an executable."""
    return tuple((k, v.hex() if type(v) is float else v) for k, v in attrs)


def structure(
    schedule: Sequence[Node], roots: Sequence[Node], scalar_inputs: bool = True
) -> tuple[tuple[Any, ...], list[Node], list[Node]]:
    """The structural key of (schedule, roots), the leaf nodes in argument order and the
    ``scalar`` nodes in schedule order.

    With ``scalar_inputs`` a ``scalar`` node's value is not part of the key: the module
    reads it at run time (``vkml.compiler.lower``), so schedules that differ only in their
    Python numbers share one executable. Which of them are equal is (equal numbers share a
    table entry and a read): each names the first number of its dtype equal to it. Without
    ``scalar_inputs`` (a region's key: a loop body's numbers are constants) the value is
    part of the key like any attribute.
    """
    position: dict[Node, int] = {}
    entries: list[tuple[Any, ...]] = []
    leaves: list[Node] = []
    scalars: list[Node] = []
    first: dict[tuple[Any, ...], int] = {}
    for i, node in enumerate(schedule):
        position[node] = i
        if node._computed:
            leaves.append(node)
            entries.append((node.dtype.name, node.shape))
        elif scalar_inputs and node.op == SCALAR:
            same = first.setdefault((node.dtype, *_key_attrs(node.attrs)), i)
            scalars.append(node)
            entries.append((SCALAR, node.dtype.name, same))
        else:
            srcs = tuple(position[s] for s in node.src)
            attrs = node.attrs if not node.attrs else _key_attrs(node.attrs)
            if node.regions:
                attrs = (*attrs, ("regions", tuple(region_key(r) for r in node.regions)))
            entries.append((node.op, node.dtype.name, node.shape, attrs, srcs))
    return (tuple(entries), tuple(position[r] for r in roots)), leaves, scalars


def same_values(schedule: Sequence[Node]) -> dict[Node, int]:
    """A number per node of the schedule, equal for two nodes that compute the same value: the
    same op, dtype, shape, attributes and regions on sources that are the same values (a
    computed node is only itself). Every op is a pure function of its sources, so equal
    numbers mean equal bits."""
    numbers: dict[tuple[Any, ...], int] = {}
    of: dict[Node, int] = {}
    for i, node in enumerate(schedule):
        if node._computed:
            key: tuple[Any, ...] = ("leaf", i)
        else:
            attrs = node.attrs if not node.attrs else _key_attrs(node.attrs)
            regions = tuple(region_key(r) for r in node.regions)
            srcs = tuple(of[s] for s in node.src)
            key = (node.op, node.dtype.name, node.shape, attrs, regions, srcs)
        of[node] = numbers.setdefault(key, len(numbers))
    return of


def region_schedule(region: Region) -> list[Node]:
    """A region's nodes, sources before users; its parameters are its leaves."""
    return toposort(region.results)


def region_key(region: Region) -> tuple[Any, ...]:
    """The structural key of a region: its parameters' and nodes' structure, results last."""
    key, _, _ = structure(region_schedule(region), region.results, scalar_inputs=False)
    return (tuple((p.dtype.name, p.shape) for p in region.params), key)


def run_region(
    region: Region, args: Sequence[V], evaluate: Callable[[Node, list[V]], V]
) -> list[V]:
    """The values of ``region``'s results, its parameters bound to ``args``: each node's value
    is ``evaluate(node, source values)`` in schedule order. The lowering passes an emitter
    (values are SSA values), the reference device a NumPy interpreter (values are arrays)."""
    if len(args) != len(region.params):
        raise ValueError(f"a region of {len(region.params)} parameters got {len(args)} values")
    values: dict[Node, V] = dict(zip(region.params, args))
    for node in region_schedule(region):
        if node.op != PARAM:
            values[node] = evaluate(node, [values[s] for s in node.src])
    return [values[r] for r in region.results]


def region_nodes(node: Node) -> Iterator[Node]:
    """Every node inside ``node``'s regions, theirs included, parameters excepted."""
    stack = [node]
    while stack:
        owner = stack.pop()
        for region in owner.regions:
            for inner in region_schedule(region):
                if inner.op != PARAM:
                    yield inner
                    if inner.regions:
                        stack.append(inner)


def estimated_work(schedule: Sequence[Node]) -> int:
    """A rough count of the element operations a schedule performs: each pending node's
    largest operand or result, times the contracted extent for a matmul. It only chooses how
    a CPU executable is run (``CpuDevice``), never what it computes."""
    work = 0
    for node in schedule:
        if node._computed:
            continue
        size = math.prod(node.shape)
        for s in node.src:
            size = max(size, math.prod(s.shape))
        if node.op == "matmul":
            size = math.prod(node.shape) * node.src[0].shape[-1]
        work += size
    return work
