"""realize(): the seven steps that turn pending nodes into computed ones.

1. topological order (iterative; computed nodes are leaves, so nothing runs twice)
2. one device per graph (DeviceError naming both otherwise)
3. support check per node (UnsupportedOperatorError with the remedy; never a fallback)
4. coverage record, when ``VKML_COVERAGE`` names a file
5. bind: the leaves' storage becomes the arguments
6. one invocation of one function built from the whole schedule, one result per distinct
   value (roots that compute the same value share it)
7. bind each root's result storage, then mark the roots computed

A failure at any step leaves every node exactly as it was: unrealized and re-realizable.
(A graph whose module IREE cannot load for its dispatches' bindings is realized in parts,
``_realize_in_parts``, and so is a graph of more than ``PART_NODES`` pending nodes,
``_realize_in_segments``; a failure in a later part leaves the earlier parts' nodes computed.)

While a function is being captured (``vkml.trace``) realizing is refused (``refusing``): a
value observed then would be baked into the captured graph as a constant.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from vkml.devices.coverage import record_coverage
from vkml.devices.device import Device
from vkml.devices.memory import check_fits_memory
from vkml.errors import (
    BindingLimitError,
    CompileMemoryError,
    DeviceError,
    TraceError,
    UnsupportedOperatorError,
)
from vkml.graph.node import Node, is_placeholder
from vkml.graph.walk import region_nodes, same_values, toposort
from vkml.runtime import bump

log = logging.getLogger("vkml")

# The most pending nodes one compiled module is made of. A longer graph is realized in parts
# of at most this many (``_realize_in_segments``): IREE's compile time and memory grow with a
# module's size (a 3,747-op fuzzed graph took it to 23.7 GB), and the parts of a long graph
# made by a loop often share one structure, hence one module (a 10**6-op chain compiles a few
# modules, not one of 10**6 ops). Measured by benchmark 6 (benchmarks/README.md).
PART_NODES = 2000

# Tests set this to observe the order of the steps; None in normal use.
STEP_HOOK: Callable[[str], None] | None = None


# Why realizing is refused in this context (a function is being captured), or None.
_REFUSED: ContextVar[str | None] = ContextVar("vkml_realize_refused", default=None)


@contextmanager
def refusing(reason: str) -> Iterator[None]:
    """Refuse every realize in this context (thread, task) with ``TraceError(reason)``."""
    token = _REFUSED.set(reason)
    try:
        yield
    finally:
        _REFUSED.reset(token)


_PRINTS_RECORDED: ContextVar[bool] = ContextVar("vkml_prints_recorded", default=False)


@contextmanager
def printing_recorded() -> Iterator[None]:
    """In this context printing a tensor shows what it stands for (op, shape, dtype, device)
    without realizing it: a graph builder records in it, so ``print`` works there."""
    token = _PRINTS_RECORDED.set(True)
    try:
        yield
    finally:
        _PRINTS_RECORDED.reset(token)


def prints_recorded() -> bool:
    """Whether printing a tensor shows what it stands for (``printing_recorded``)."""
    return _PRINTS_RECORDED.get()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_line() -> str:
    """``file:line`` of the innermost frame outside vkml: the user's line that observed."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE + os.sep):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "an unknown line"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _step(name: str) -> None:
    if STEP_HOOK is not None:
        STEP_HOOK(name)


def plan(roots: Sequence[Node], inputs: Sequence[Node] = ()) -> tuple[list[Node], Device]:
    """Steps 1 to 4: the schedule of pending ``roots`` and the one device it runs on.

    ``inputs`` are the input placeholders of a captured function: the schedule starts with
    them, in order, whether or not a root reads them. Any other placeholder is refused: it
    has a value only inside a call of the function it belongs to.
    """
    _step("toposort")
    schedule = toposort([*inputs, *roots]) if inputs else toposort(roots)
    _step("device")
    device = schedule[0].device
    allowed = set(inputs) if inputs else ()
    for node in schedule:
        if node.device is not device:
            raise DeviceError(
                f"'realize' operands are on different devices: {device} and {node.device}"
            )
        # a leaf without storage: an input placeholder (computed, never bound)
        if node._computed and node._storage is None and node not in allowed:
            raise TraceError(
                f"this value depends on the input {node.attr('name')!r} of a captured "
                f"function, which has a value only when the captured function is called; "
                f"call it (or realize outside the function you capture)"
            )
    _step("support")
    supports = device.supports
    for node in schedule:
        if not node._computed:
            if not supports(node.op, node.dtype):
                _refuse(device, node)
            if node.regions:
                for inner in region_nodes(node):
                    if not supports(inner.op, inner.dtype):
                        _refuse(device, inner)
    _step("coverage")
    path = os.environ.get("VKML_COVERAGE")
    if path:
        record_coverage(path, schedule, device.name)
    return schedule, device


def _refuse(device: Device, node: Node) -> None:
    remedy = "cpu" if device.kind != "cpu" else "reference"
    raise UnsupportedOperatorError(node.op, node.dtype.name, device.name, remedy)


def distinct_roots(schedule: Sequence[Node], roots: list[Node]) -> tuple[list[Node], list[int]]:
    """The roots that compute different values, and for each root the index of its value
    among them: two roots of one value share one result (IREE would merge them anyway, and
    its Vulkan runtime failed on a module returning one value into two output buffers)."""
    if len(roots) < 2:
        return roots, list(range(len(roots)))
    numbers = same_values(schedule)
    index: dict[int, int] = {}
    distinct: list[Node] = []
    first: list[int] = []
    for node in roots:
        k = index.setdefault(numbers[node], len(distinct))
        if k == len(distinct):
            distinct.append(node)
        first.append(k)
    return distinct, first


def _pending(schedule: Sequence[Node]) -> int:
    return sum(1 for n in schedule if not n._computed)


def _realize_in_segments(schedule: Sequence[Node], roots: list[Node]) -> None:
    """Realize a long schedule in consecutive parts of at most ``PART_NODES`` pending nodes:
    each part realizes what later parts (or the roots) read of it, so the next part starts
    from those values. One pass over the schedule; each part's own walk sees only its part.
    Every op is a pure function of its sources: the parts give the bits the whole would."""
    pending = [n for n in schedule if not n._computed]
    last_use = {n: i for i, n in enumerate(pending)}
    for i, node in enumerate(pending):
        for s in node.src:
            if s in last_use:
                last_use[s] = i
    wanted = set(roots)
    log.warning(
        "vkml: realizing a %d-node graph in %d parts of up to %d nodes (parts of one "
        "structure share their compiled module)",
        len(pending), -(-len(pending) // PART_NODES), PART_NODES,
    )  # fmt: skip
    for start in range(0, len(pending) - PART_NODES, PART_NODES):
        end = start + PART_NODES
        frontier = [n for n in pending[start:end] if last_use[n] >= end or n in wanted]
        if frontier:
            realize_nodes(frontier)
    realize_nodes(roots)


def _realize_in_parts(roots: list[Node]) -> None:
    """Realize ``roots`` in parts, each by ``realize_nodes`` (and so again in parts where a
    part's module cannot be loaded either): half of the roots each; for one root, a node
    half-way down what it still needs, then the root from it, again until the root's module
    loads. Every op is a pure function of its sources, so the parts give the bits the whole
    would have.

    IREE 3.13 puts chains of one-element ops into one dispatch with a binding per value it
    reads or writes; Vulkan refuses to load a module with a dispatch of more than 32, cpu to
    run one of more than 64 (``BindingLimitError``). vkml-bound-scalar-dispatches cuts most
    such chains, but not those where several values cross a cut (IREE computed those cuts
    wrongly, benchmarks/results/stress-findings.md). A module IREE's compiler needs more
    memory for than it may use (``CompileMemoryError``) is split the same way.

    Raises:
        BindingLimitError: a single op's module cannot be loaded (nothing left to split).
        CompileMemoryError: a single op's module cannot be compiled in the memory allowed.
    """
    if len(roots) > 1:
        half = len(roots) // 2
        realize_nodes(roots[:half])
        realize_nodes(roots[half:])
        return
    (root,) = roots
    while True:  # a loop, not recursion: a root may need many parts (a wide fan-in)
        before = [n for n in toposort([root]) if not n._computed and n is not root]
        if not before:  # a lone op: its module's own failure is the answer
            try:
                realize_nodes(roots, in_parts=False)
                return
            except BindingLimitError:
                raise BindingLimitError(
                    f"IREE could not load the module of one {root.op} op on "
                    f"{root.device.name}: it binds more buffers than the device allows. This "
                    f"is vkml's bug; please report it"
                ) from None
        realize_nodes([before[len(before) // 2]])
        try:
            realize_nodes(roots, in_parts=False)
            return
        except (BindingLimitError, CompileMemoryError):
            continue


def realize_nodes(nodes: Sequence[Node], in_parts: bool = True) -> None:
    """Compute every node in ``nodes`` that is not computed yet, in one invocation (or, when
    IREE cannot load or run its module for the bindings, in parts unless ``in_parts`` is False:
    ``_realize_in_parts``)."""
    roots: list[Node] = []
    for node in nodes:
        if not node._computed and node not in roots:
            roots.append(node)
    inputs = [n for n in nodes if is_placeholder(n)]
    if not roots and not inputs:
        return
    refused = _REFUSED.get()
    if refused is not None:
        raise TraceError(f"{refused} (observed at {_user_line()})")
    if inputs:
        raise TraceError(
            f"input {inputs[0].attr('name')!r} of a captured function has a value only inside a "
            f"call of it; call the captured function and read its result "
            f"(observed at {_user_line()})"
        )
    schedule, device = plan(roots)
    if in_parts and device.kind != "reference" and _pending(schedule) > PART_NODES:
        _realize_in_segments(schedule, roots)
        return
    # before compiling: IREE would otherwise fail to compile a 2**40-element arange for Vulkan
    # (its 32-bit SPIR-V indexing) before it could refuse the allocation
    check_fits_memory("realizing", [(n.shape, n.dtype) for n in roots], device.name)
    _step("bind")
    distinct, first = distinct_roots(schedule, roots)
    try:
        call, leaves = device.prepare(schedule, distinct)
        _step("invoke")
        results = call([leaf._storage for leaf in leaves])
    except BindingLimitError:  # refused at the load (Vulkan) or at the call (local-task)
        if not in_parts:
            raise
        _realize_in_parts(roots)
        return
    except CompileMemoryError:  # IREE needed more memory than it may use: halve the graph
        if not in_parts or _pending(schedule) < 2:
            raise
        _realize_in_parts(roots)
        return
    _step("mark")
    for node, k in zip(roots, first):
        node._bind(results[k])
    for node in roots:
        node._mark_computed()
    bump("realizes")
