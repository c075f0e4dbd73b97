"""Lowering a schedule to MLIR text and its calling convention (``Abi``).

Computed nodes become function arguments (in schedule order), the roots become results, and
every other node is emitted by its op's emitter. The text is a pure function of the
structure, so the structural key (op, dtype, shape, attributes and source positions of every
node) identifies it without lowering: the hot path of a repeated step hashes the key and
goes straight to the loaded executable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vkml.compiler.abi import Abi, TensorSpec, scalar_tables, table_entries
from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.types import TensorType, Value
from vkml.graph.node import SCALAR, Node
from vkml.graph.walk import run_region, toposort
from vkml.ops.registry import OPS

# IREE's compile time grows faster than linearly with the ops in one fusion region (a 10,000-op
# elementwise chain: 58 s as one region, 12 s cut every 500 ops). Every SEGMENT_NODES nodes
# the live values pass through a fusion stop (vkml.dialect.fusion_stops), which bounds the
# regions at no run-time cost. Graphs smaller than this are not affected.
SEGMENT_NODES = 500


@dataclass(frozen=True, slots=True)
class Lowered:
    """A lowered schedule: the MLIR module and how to call it."""

    text: str
    abi: Abi


def lower_to_mlir(
    schedule: Sequence[Node],
    roots: Sequence[Node],
    name: str = "main",
    output_args: bool = False,
    fence_float_ops: bool = False,
    queued: bool = False,
    transients: bool = False,
    float64_math: bool = True,
) -> str:
    """The MLIR text of ``lower``."""
    return lower(
        schedule, roots, name, output_args, fence_float_ops, queued, transients, float64_math
    ).text


def lower(
    schedule: Sequence[Node],
    roots: Sequence[Node],
    name: str = "main",
    output_args: bool = False,
    fence_float_ops: bool = False,
    queued: bool = False,
    transients: bool = False,
    float64_math: bool = True,
) -> Lowered:
    """The MLIR module (StableHLO) computing ``roots`` from the schedule's leaves, with its
    calling convention (``Abi``: leaves in, roots out).

    With ``output_args`` the caller passes one more buffer per root, after the leaves, and
    the function writes each result into it. With ``fence_float_ops`` the driver is kept from folding float ops (Vulkan, ADR 0009).
    ``queued`` says the module is compiled for a ``Target.queued`` (``Abi.queued``: the call
    takes a wait and a signal fence last; Vulkan, ADR 0015); the text is the same. With
    ``transients`` the function takes the caller's buffer for the values IREE keeps between
    its dispatches last (``Abi.transients``), instead of allocating them each call.
    ``float64_math`` says the target computes float64 and int64 (``FunctionBuilder.float64_math``).
    """
    b = FunctionBuilder(name, fence_float_ops=fence_float_ops)
    b.transients = transients
    b.float64_math = float64_math
    b.stoppable = True  # a realize can stop the module's device loops (Ctrl-C)
    # the Python numbers' tables come first (``Abi``), one argument per dtype; equal numbers
    # share one entry and one read
    scalars = [n for n in schedule if n.op == SCALAR and not n._computed]
    tables = scalar_tables(scalars)
    arguments = [b.arg(TensorType((len(nodes),), dtype)) for dtype, nodes in tables]
    entries = table_entries(scalars)
    reads: dict[tuple[int, int], Value] = {}

    def read(node: Node) -> Value:
        entry = entries[node]
        if entry not in reads:
            reads[entry] = b.number(arguments[entry[0]], entry[1])
        return reads[entry]

    values = emit_schedule(b, schedule, roots, lambda n: b.arg(TensorType(n.shape, n.dtype)), read)
    position = {node: i for i, node in enumerate(schedule)}
    if output_args:  # after the leaves, one argument per root receives its result
        for k, r in enumerate(roots):
            b.output_arg(TensorType(r.shape, r.dtype), k)
    b.ret([values[position[r]] for r in roots])
    abi = Abi(
        function=name,
        inputs=tuple(TensorSpec(n.dtype, n.shape) for n in schedule if n._computed),
        outputs=tuple(TensorSpec(r.dtype, r.shape) for r in roots),
        scalars=tuple(TensorSpec(dtype, (len(nodes),)) for dtype, nodes in tables),
        output_args=output_args,
        fence=b.uses_fence,
        stop=b.uses_stop,
        queued=queued,
        transients=transients,
    )
    return Lowered(b.module_text(), abi)


def emit_schedule(
    b: FunctionBuilder,
    schedule: Sequence[Node],
    roots: Sequence[Node],
    leaf: Callable[[Node], Value],
    scalar: Callable[[Node], Value] | None = None,
) -> list[Value]:
    """Emit every pending node of ``schedule`` into ``b``; one value per position, a leaf's
    from ``leaf`` (an argument for realize, an argument or a parameter for an export), a
    ``scalar`` node's from ``scalar`` where given (a read of its table), else a constant.

    The side tables (``values``, ``last_use``) are indexed by topological position; nothing
    is written onto the nodes. Every ``SEGMENT_NODES`` emitted nodes the live values pass
    through a fusion stop (compile time, above).
    """
    position: dict[Node, int] = {}
    last_use = [0] * len(schedule)
    for i, node in enumerate(schedule):
        position[node] = i
        last_use[i] = i
        if not node._computed:  # a computed node is a leaf: its sources are not scheduled
            for s in node.src:
                last_use[position[s]] = i
    for r in roots:
        last_use[position[r]] = len(schedule)
    dies: dict[int, list[int]] = {}
    for i, end in enumerate(last_use):
        dies.setdefault(end, []).append(i)
    values: list[Value] = []
    live: set[int] = set()
    emitted = 0
    for i, node in enumerate(schedule):
        if node._computed:
            values.append(leaf(node))
            continue
        if scalar is not None and node.op == SCALAR:
            values.append(scalar(node))
            continue
        values.append(emit_node(b, node, [values[position[s]] for s in node.src]))
        live.add(i)
        for dead in dies.get(i, ()):
            live.discard(dead)
        emitted += 1
        if emitted % SEGMENT_NODES == 0 and len(schedule) - i > 1:
            # constants need no fusion stop: they are cheap to rematerialise on either side
            keep = [
                j for j in sorted(live)
                if isinstance(values[j], Value) and not b.is_constant(values[j])
            ]  # fmt: skip
            for j, v in zip(keep, b.stop_fusion([values[j] for j in keep])):
                values[j] = v
    return values


def emit_node(b: FunctionBuilder, node: Node, operands: list[Value]) -> Value:
    """``node``'s value from its operands' values, by its op's emitter.

    A node that owns regions hands its emitter one callable per region in ``attrs["regions"]``:
    called with the values of the region's parameters, it emits the region's nodes inline and
    returns its results' values. The emitter decides what binds the parameters and how the
    results are used (``cond`` emits both arms and selects).
    """
    attrs = dict(node.attrs)
    if node.regions:
        attrs["regions"] = tuple(
            functools.partial(run_region, r, evaluate=functools.partial(emit_node, b))
            for r in node.regions
        )
    out = TensorType(node.shape, node.dtype)
    value = OPS[node.op].emit(b, operands, out, attrs)
    if isinstance(value, tuple):  # a node with several results: each is read by a result node
        return value  # type: ignore[return-value]
    if value.type != out:
        raise AssertionError(f"emitter of '{node.op}' produced {value.type}, expected {out}")
    return value


def emitted_mlir(nodes: Sequence[Node], passes: bool = False) -> str:
    """The module realize() would compile for ``nodes`` (before, or after, vkml's passes)."""
    # imported here: the passes need iree-base-compiler, which lowering does not (a machine
    # with only the runtime lowers graphs to find them in the cache)
    from vkml.passes.run import run_passes

    roots = list(dict.fromkeys(n for n in nodes if not n._computed))
    text = lower_to_mlir(toposort(roots), roots)
    return run_passes(text) if passes else text
