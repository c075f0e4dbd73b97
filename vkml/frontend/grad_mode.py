"""Which tensors take part in gradients: ``no_grad()``, the nodes gradients stop at, the
leaves, and the walk that finds the nodes a gradient flows through.

This is the state autograd reads, kept below ``Tensor`` (which marks nodes made under
``no_grad()`` and keeps ``requires_grad``) and below ``vkml.frontend.autograd`` (which builds
the backward graph).

Which tensors require a gradient is a property of the graph, not a flag carried by every
tensor: a leaf is a tensor marked with ``requires_grad_()`` (kept in a weak registry so
``backward()`` can find the tensors to store ``.grad`` on), and any other tensor requires a
gradient when a leaf is among its sources, through float-valued ops, except across a node
made under ``no_grad()`` or by ``detach()``: those are recorded in a weak set and stop
every walk.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

from vkml.errors import DTypeError, GradientError
from vkml.frontend.base import TensorBase
from vkml.graph.node import Node
from vkml.graph.walk import toposort

# Registries, documented in the module docstring. Weak, so they never keep a tensor alive.
# Leaves are keyed by id: a WeakSet would compare tensors with ``==``, which is elementwise.
_LEAVES: dict[int, weakref.ref[TensorBase]] = {}
_STOPS: weakref.WeakSet[Node] = weakref.WeakSet()


class _NoGradState(threading.local):
    depth = 0


_STATE = _NoGradState()
_LOCK = threading.Lock()
# How many threads are inside no_grad() now: Tensor() reads this one global on every op and
# looks at its thread's own state only when it is non-zero.
NO_GRAD_ACTIVE = 0


def _enter_no_grad() -> None:
    global NO_GRAD_ACTIVE
    if _STATE.depth == 0:
        with _LOCK:
            NO_GRAD_ACTIVE += 1
    _STATE.depth += 1


def _exit_no_grad() -> None:
    global NO_GRAD_ACTIVE
    _STATE.depth -= 1
    if _STATE.depth == 0:
        with _LOCK:
            NO_GRAD_ACTIVE -= 1


@contextmanager
def no_grad() -> Iterator[None]:
    """Within this block (in this thread) new tensors do not take part in gradients.

    A tensor made here is a constant to every later ``backward()``: gradients stop at it.
    Usable as a decorator too (``@vkml.no_grad()``), as PyTorch's.
    """
    _enter_no_grad()
    try:
        yield
    finally:
        _exit_no_grad()


@contextmanager
def grad_enabled() -> Iterator[None]:
    """Undo an enclosing no_grad() for this thread: backward and vkml.grad record gradients."""
    saved = _STATE.depth
    if saved:
        _STATE.depth = 1
        _exit_no_grad()
    try:
        yield
    finally:
        if saved:
            _enter_no_grad()
            _STATE.depth = saved


def is_grad_enabled() -> bool:
    return _STATE.depth == 0


def on_new_tensor(node: Node) -> None:
    """Called by ``Tensor()`` while some thread is in no_grad(): mark the node a stop."""
    if _STATE.depth and node.src:
        _STOPS.add(node)


def stop(node: Node) -> None:
    """Make ``node`` a stop: gradients never flow through it (``detach()``)."""
    _STOPS.add(node)


# -- leaves and requires_grad ----------------------------------------------------------------
def check_float(what: str, dtype: Any) -> None:
    if not dtype.is_float:
        raise DTypeError(
            f"{what}: only floating-point tensors have gradients, got {dtype}; convert "
            f"first, e.g. x.astype(vkml.float32)"
        )


def leaf_nodes() -> dict[Node, list[TensorBase]]:
    """The nodes of the live leaf tensors (read now: an optimiser may rebind a tensor)."""
    found: dict[Node, list[TensorBase]] = {}
    for ref in list(_LEAVES.values()):
        t = ref()
        if t is not None and t._requires_grad:
            found.setdefault(t._node, []).append(t)
    return found


def _unregister(key: int) -> Callable[[object], None]:
    def forget(_: object) -> None:
        _LEAVES.pop(key, None)

    return forget


def set_requires_grad(t: TensorBase, flag: bool) -> TensorBase:
    """``t.requires_grad_(flag)``: make ``t`` a leaf to differentiate with respect to, or not."""
    if t._requires_grad:
        if not flag:
            t._requires_grad = False
            _LEAVES.pop(id(t), None)
        return t
    if not flag:
        if requires_grad(t):
            raise GradientError(
                "requires_grad_(False) applies to leaf tensors; this tensor is computed from "
                "one that requires grad. Use t.detach() for a copy that does not"
            )
        return t
    check_float("requires_grad", t.dtype)
    if not requires_grad(t):  # a computed tensor that already requires grad stays as it is
        t._requires_grad = True
        _LEAVES[id(t)] = weakref.ref(t, _unregister(id(t)))
    return t


def requires_grad(t: TensorBase) -> bool:
    """Whether ``backward()`` from ``t`` reaches a leaf (walks ``t``'s graph)."""
    if t._requires_grad:
        return True
    leaves = leaf_nodes()
    if not leaves:
        return False
    _, reaching = walk(t._node, leaves.keys())
    return t._node in reaching


# -- the walk ---------------------------------------------------------------------------------
def walk(root: Node, targets: Collection[Node]) -> tuple[list[Node], set[Node]]:
    """The nodes between ``root`` and ``targets`` that a gradient can flow through.

    Returns them sources-first, and the set of them. Unlike ``graph.toposort`` this walk
    goes on below computed nodes (a realized loss still has its sources), and it stops at
    targets, at no_grad/detach nodes and at non-float nodes (no gradient flows through them).
    """
    targets = targets if isinstance(targets, (set, frozenset)) else set(targets)

    def descend(node: Node) -> bool:
        return not (node in targets or not node.dtype.is_float or node in _STOPS)

    order = toposort([root], descend)
    reaching: set[Node] = set()
    kept: list[Node] = []
    for node in order:
        if node in targets or (
            node.dtype.is_float and any(s in reaching for s in node.src) and node not in _STOPS
        ):
            reaching.add(node)
            kept.append(node)
    return kept, reaching
