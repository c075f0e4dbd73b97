"""Recording a Python function as a region (``vkml.graph.node.Region``) of a control-flow node.

The function is called once, now, on region parameters that stand for the node's operands;
the nodes it builds become the region. A value it reads without receiving it (a tensor it
closes over, a constant it makes) is **lifted**: it becomes one more operand of the node and
one more parameter of every region of the node, so a region's nodes refer to its parameters
and each other only, as ``Region`` requires. Realizing is refused while recording (a region's
values exist only on the device) and eager mode is suspended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vkml.devices.realize import refusing
from vkml.frontend.base import TensorBase
from vkml.frontend.eager import suspended
from vkml.frontend.tensor import Tensor
from vkml.graph.node import PARAM, Node, Region, param
from vkml.graph.walk import toposort


@dataclass(frozen=True)
class Recorded:
    """What a function built on stand-ins: its result nodes, the stand-ins (parameters) and
    every node the results need, sources first (nodes from outside included)."""

    results: list[Node]
    params: list[Node]
    order: list[Node]

    def inside(self) -> set[Node]:
        """The region's own nodes: those that depend on a parameter, and the pending nodes
        with no sources (constants, ``full``, ``arange``: made again inside costs nothing,
        carried in would cost a buffer a turn)."""
        inside = set(self.params)
        for node in self.order:
            if node.op == PARAM:
                continue
            if any(s in inside for s in node.src) or (not node.src and not node._computed):
                inside.add(node)
        return inside

    def outside(self) -> list[Node]:
        """The values the function reads that do not depend on its parameters, first use
        first: a result that is one of them, or a source of one of the region's nodes."""
        inside = self.inside()
        found: dict[Node, None] = {}
        for r in self.results:
            if r not in inside:
                found[r] = None
        for node in self.order:
            if node in inside:
                for s in node.src:
                    if s not in inside:
                        found[s] = None
        return list(found)


def trace_region(
    op: str, what: str, fn: Callable[..., Any], operands: Sequence[Node], device: Any
) -> Recorded:
    """``fn`` called on stand-ins for ``operands``; ``what`` names it in errors (``on_true``,
    ``body``). ``fn`` returns a tensor or a tuple of tensors.

    Raises:
        TypeError: ``fn`` is not callable, or returns something other than tensors.
        TraceError: ``fn`` observes a value.
    """
    if not callable(fn):
        raise TypeError(f"'{op}': {what} must be callable, got {type(fn).__name__}")
    params = [param(i, n.dtype, n.shape, device) for i, n in enumerate(operands)]
    reason = (
        f"'{op}' is recording {what}: its values exist only on the device, at each realize, "
        f"so it cannot observe one (numpy(), item(), realize()); return the value instead"
    )
    with refusing(reason), suspended():
        out = fn(*(Tensor(p) for p in params))
    values = out if isinstance(out, tuple) else (out,)
    for v in values:
        if not isinstance(v, TensorBase):
            raise TypeError(f"'{op}': {what} must return a tensor, got {type(v).__name__}")
    results = [v.node for v in values]
    return Recorded(results, params, toposort(results))


def lifted(*recorded: Recorded) -> list[Node]:
    """The outside values of every recorded function, each once, first use first."""
    return list(dict.fromkeys(n for r in recorded for n in r.outside()))


def region(recorded: Recorded, lifted: Sequence[Node], device: Any) -> Region:
    """``recorded`` rebuilt over its parameters and one more parameter per lifted value."""
    inside = recorded.inside()
    first = len(recorded.params)
    extra = [param(first + j, n.dtype, n.shape, device) for j, n in enumerate(lifted)]
    mapping: dict[Node, Node] = {
        **dict(zip(recorded.params, recorded.params)),
        **dict(zip(lifted, extra)),
    }
    for node in recorded.order:
        if node in inside and node.op != PARAM:
            mapping[node] = Node(
                node.op, node.dtype, node.shape, tuple(mapping[s] for s in node.src),
                node.attrs, node.device, regions=node.regions,
            )  # fmt: skip
    return Region((*recorded.params, *extra), tuple(mapping[r] for r in recorded.results))
