"""``Plan``: what an exported function takes and returns, over a captured graph."""

from __future__ import annotations

from dataclasses import dataclass

from vkml.graph.node import Node
from vkml.trace.capture import Captured


@dataclass(frozen=True)
class Plan:
    """The leaves of ``captured`` that are arguments of the exported function, by name (every
    other leaf is a parameter), and its outputs: ``(name, index into captured.outputs)``, in
    order, returned as ``structure`` says ("one", "tuple", "list" or "dict")."""

    captured: Captured
    arguments: dict[Node, str]
    outputs: tuple[tuple[str, int], ...]
    structure: str

    @classmethod
    def of(cls, captured: Captured) -> Plan:
        """A captured function as it is: its inputs are the arguments, its outputs the
        outputs."""
        inputs = {
            a.node: captured.inputs[a.input][0] for a in captured.arguments if a.input is not None
        }
        outputs = tuple((name, k) for k, (name, _) in enumerate(captured.outputs))
        return cls(captured, inputs, outputs, captured.structure)
