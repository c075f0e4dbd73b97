"""Lowering a schedule to MLIR text, and the structural key that names it in the cache.

Computed nodes become function arguments (in schedule order), the roots become results, and
every other node is emitted by its op's emitter. The text is a pure function of the
structure, so the structural key (op, dtype, shape, attributes and source positions of every
node) identifies it without lowering: the hot path of a repeated step hashes the key and
goes straight to the loaded executable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import TensorType, Value
from vkml.frontend.graph import Node
from vkml.frontend.optable import OPS


def structure(schedule: Sequence[Node], roots: Sequence[Node]) -> tuple[tuple[Any, ...], list[Node]]:
    """The structural key of (schedule, roots) and the leaf nodes in argument order."""
    position: dict[Node, int] = {}
    entries: list[tuple[Any, ...]] = []
    leaves: list[Node] = []
    for i, node in enumerate(schedule):
        position[node] = i
        if node._computed:
            leaves.append(node)
            entries.append((node.dtype.name, node.shape))
        else:
            srcs = tuple(position[s] for s in node.src)
            entries.append((node.op, node.dtype.name, node.shape, node.attrs, srcs))
    return (tuple(entries), tuple(position[r] for r in roots)), leaves


def lower_to_mlir(schedule: Sequence[Node], roots: Sequence[Node], name: str = "main") -> str:
    """The MLIR module (StableHLO) computing ``roots`` from the schedule's leaves.

    The per-realize side table is ``values``, indexed by topological position; nothing is
    written onto the nodes.
    """
    b = FunctionBuilder(name)
    position: dict[Node, int] = {}
    values: list[Value] = []
    for i, node in enumerate(schedule):
        position[node] = i
        out = TensorType(node.shape, node.dtype)
        if node._computed:
            values.append(b.arg(out))
            continue
        operands = [values[position[s]] for s in node.src]
        value = OPS[node.op].emit(b, operands, out, dict(node.attrs))
        if value.type != out:
            raise AssertionError(f"emitter of '{node.op}' produced {value.type}, expected {out}")
        values.append(value)
    b.ret([values[position[r]] for r in roots])
    return b.module_text()


def emitted_mlir(nodes: Sequence[Node], passes: bool = False) -> str:
    """The module realize() would compile for ``nodes`` (before, or after, vkml's passes)."""
    from vkml.frontend.graph import toposort
    from vkml.passes.pipeline import run_passes

    roots = list(dict.fromkeys(n for n in nodes if not n._computed))
    text = lower_to_mlir(toposort(roots), roots)
    return run_passes(text) if passes else text
