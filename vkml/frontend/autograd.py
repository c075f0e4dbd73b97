"""Reverse-mode autograd on the lazy graph: backward builds more graph, never runs anything.

``vjp`` walks from an output to the nodes to differentiate with respect to and applies each
op's gradient rule (``OPS[op].gradient``, written against ``vkml.frontend.algebra``) in reverse
topological order. The gradients are ordinary lazy tensors, so the forward and the backward
realize together as one invocation. Nothing is written on a node: which nodes need a
gradient is decided per call, from the graph.

Which tensors require a gradient is a property of the graph, not a flag carried by every
tensor: a leaf is a tensor marked with ``requires_grad_()`` (kept in a weak registry so
``backward()`` can find the tensors to store ``.grad`` on), and any other tensor requires a
gradient when a leaf is among its sources, through float-valued ops, except across a node
made under ``no_grad()`` or by ``detach()``: those are recorded in a weak set and stop
every walk.

No walk here recurses: a 100,000-node chain differentiates like a short one.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from vkml.errors import DTypeError, GradientError, ShapeError
from vkml.graph.node import Node
from vkml.graph.walk import toposort
from vkml.ops.registry import OPS
from vkml.ops.spec import Algebra
from vkml.frontend.tensor import Tensor

# Registries, documented in the module docstring. Weak, so they never keep a tensor alive.
# Leaves are keyed by id: a WeakSet would compare tensors with ``==``, which is elementwise.
_LEAVES: dict[int, weakref.ref[Tensor]] = {}
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
def _grad_enabled() -> Iterator[None]:
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


# -- leaves and requires_grad ----------------------------------------------------------------
def _check_float(what: str, dtype: Any) -> None:
    if not dtype.is_float:
        raise DTypeError(
            f"{what}: only floating-point tensors have gradients, got {dtype}; convert "
            f"first, e.g. x.astype(vkml.float32)"
        )


def _leaf_nodes() -> dict[Node, list[Tensor]]:
    """The nodes of the live leaf tensors (read now: an optimiser may rebind a tensor)."""
    found: dict[Node, list[Tensor]] = {}
    for ref in list(_LEAVES.values()):
        t = ref()
        if t is not None and t._requires_grad:
            found.setdefault(t._node, []).append(t)
    return found


def _unregister(key: int) -> Callable[[object], None]:
    return lambda _: _LEAVES.pop(key, None)


def set_requires_grad(t: Tensor, flag: bool) -> Tensor:
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
    _check_float("requires_grad", t.dtype)
    if not requires_grad(t):  # a computed tensor that already requires grad stays as it is
        t._requires_grad = True
        _LEAVES[id(t)] = weakref.ref(t, _unregister(id(t)))
    return t


def requires_grad(t: Tensor) -> bool:
    """Whether ``backward()`` from ``t`` reaches a leaf (walks ``t``'s graph)."""
    if t._requires_grad:
        return True
    leaves = _leaf_nodes()
    if not leaves:
        return False
    _, reaching = _walk(t._node, leaves.keys())
    return t._node in reaching


# -- the walk and the vector-Jacobian product ------------------------------------------------
def _walk(root: Node, targets: Collection[Node]) -> tuple[list[Node], set[Node]]:
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


def vjp(root: Node, seed: Tensor, targets: Collection[Node]) -> dict[Node, Tensor]:
    """Lazy gradients of ``root`` (weighted by ``seed``) with respect to each reached target.

    A target that ``root`` does not depend on is absent from the result.
    """
    targets = set(targets)
    order, reaching = _walk(root, targets)
    if root not in reaching:
        return {}
    grads: dict[Node, Tensor] = {root: seed}
    found: dict[Node, Tensor] = {}
    with _grad_enabled():
        for node in reversed(order):
            g = grads.pop(node, None)
            if g is None:
                continue
            if node in targets:
                found[node] = g
                continue
            rule = OPS[node.op].gradient if node.op in OPS else None
            if rule is None:
                raise GradientError(f"'{node.op}' has no gradient rule, but a gradient reaches it")
            for src, gs in zip(node.src, rule(node, g, _algebra())):
                if gs is None or src not in reaching:
                    continue
                if gs.shape != src.shape or gs.dtype is not src.dtype:
                    raise AssertionError(
                        f"gradient rule of '{node.op}' gave {gs.dtype}{gs.shape} for a source "
                        f"of {src.dtype}{src.shape}"
                    )
                prev = grads.get(src)
                grads[src] = gs if prev is None else prev + gs
    return found


def _ones_like(t: Tensor) -> Tensor:
    from vkml.frontend.creation import full

    return full(t.shape, 1, t.dtype, t.device)


def _seed(root: Tensor, grad: Any) -> Tensor:
    _check_float("backward", root.dtype)
    if grad is None:
        if root.size != 1:
            raise ShapeError(
                f"backward() without a gradient needs a one-element output, got shape "
                f"{root.shape}; reduce it first (e.g. loss.sum()) or pass one: "
                f"backward(grad=...) with shape {root.shape}"
            )
        return _ones_like(root)
    from vkml.frontend import ops
    from vkml.frontend.creation import tensor

    g = grad if isinstance(grad, Tensor) else tensor(grad, root.dtype, root.device)
    if g.shape != root.shape:
        raise ShapeError(f"backward(grad=...): grad has shape {g.shape}, the output {root.shape}")
    ops.check_same_device("backward", [root._node, g._node])
    return ops.astype(g, root.dtype)


def backward(root: Tensor, grad: Any = None) -> None:
    """``root.backward(grad)``: add d(root)/d(leaf) to every reached leaf's ``.grad``.

    The forward, the gradients and the accumulation realize as one invocation.
    """
    from vkml.frontend.creation import realize

    seed = _seed(root, grad)
    leaves = _leaf_nodes()
    grads = vjp(root._node, seed, leaves.keys())
    if not grads:
        raise GradientError(
            "backward(): the output does not depend on any tensor with requires_grad=True "
            "(or only through no_grad() or detach())"
        )
    updates: list[tuple[Tensor, Tensor]] = []
    for node, g in grads.items():
        for leaf in leaves[node]:
            updates.append((leaf, g if leaf._grad is None else leaf._grad + g))
    realize(root, *(total for _, total in updates))
    for leaf, total in updates:
        leaf._grad = detached(total)


def detached(t: Tensor) -> Tensor:
    """The same value with no history: a gradient never flows through it into ``t``."""
    node = t._node
    if node._computed:  # share the storage; a node without sources has nothing to stop
        return Tensor(Node("data", node.dtype, node.shape, (), (), node.device, node._storage))
    view = Node("reshape", node.dtype, node.shape, (node,), (), node.device)
    _STOPS.add(view)
    return Tensor(view)


# -- the functional API ----------------------------------------------------------------------
def _argnums(argnums: int | Sequence[int], count: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -count <= i < count:
            raise IndexError(f"argnums {i} is out of range for a call with {count} arguments")
    return tuple(i % count for i in nums)


def value_and_grad(
    fn: Callable[..., Tensor], argnums: int | Sequence[int] = 0
) -> Callable[..., Any]:
    """A function returning ``(fn(*args), gradient)`` of a one-element ``fn``, as JAX's.

    Args:
        fn: takes tensors (and anything else) and returns a one-element float tensor.
        argnums: the position (int) or positions (tuple) of the arguments to
            differentiate with respect to.

    Returns:
        A function of the same arguments returning the value and the gradient (a tensor
        for an int ``argnums``, a tuple for a tuple), all lazy: realize them together.
    """

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> tuple[Tensor, Any]:
        nums = _argnums(argnums, len(args))
        inputs = list(args)
        fresh: list[Node] = []
        with _grad_enabled():
            for i in nums:
                x = args[i]
                if not isinstance(x, Tensor):
                    raise DTypeError(f"grad: argument {i} is {type(x).__name__}, not a vkml.Tensor")
                _check_float(f"grad with respect to argument {i}", x.dtype)
                # a fresh node per argument: the one node this call differentiates with
                # respect to (an identity reshape, which lowers to nothing)
                node = Node("reshape", x.dtype, x.shape, (x._node,), (), x.device)
                fresh.append(node)
                inputs[i] = Tensor(node)
            value = fn(*inputs, **kwargs)
            if not isinstance(value, Tensor):
                raise DTypeError(f"grad: fn must return a vkml.Tensor, got {type(value).__name__}")
            _check_float("grad of fn's output", value.dtype)
            if value.size != 1:
                raise ShapeError(
                    f"grad: fn must return a one-element tensor, got shape {value.shape}"
                )
            grads = vjp(value._node, _ones_like(value), fresh)
        out = tuple(grads[n] if n in grads else _zeros(n) for n in fresh)
        return value, out[0] if isinstance(argnums, int) else out

    return value_and_grad_fn


def grad(fn: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """A function returning the gradient of a one-element ``fn`` (see ``value_and_grad``)."""
    both = value_and_grad(fn, argnums)

    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        return both(*args, **kwargs)[1]

    return grad_fn


def _zeros(node: Node) -> Tensor:
    from vkml.frontend.creation import full

    return full(node.shape, 0, node.dtype, node.device)


def _algebra() -> Algebra:
    """The tensor operations gradient rules build the backward graph with."""
    # imported here: the algebra builds ops, and ops import Tensor, which imports this
    # module; the cycle goes when Tensor stops importing autograd (issue 9)
    from vkml.frontend.algebra import ALGEBRA

    return ALGEBRA
