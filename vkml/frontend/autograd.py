"""Reverse-mode autograd on the lazy graph: backward builds more graph, never runs anything.

``vjp`` walks from an output to the nodes to differentiate with respect to and applies each
op's gradient rule (``OPS[op].gradient``, written against ``vkml.ops.spec.Algebra``) in
reverse topological order. The gradients are ordinary lazy tensors of the class of the
tensor differentiated (``Tensor``, which calls in here), so the forward and the backward
realize together as one invocation. Nothing is written on a node: which nodes need a
gradient is decided per call, from the graph; which tensors take part is kept by
``vkml.frontend.grad_mode``.

No walk here recurses: a 100,000-node chain differentiates like a short one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from vkml.devices.realize import realize_nodes
from vkml.errors import DTypeError, GradientError, ShapeError
from vkml.frontend import elementwise
from vkml.frontend.algebra import TensorAlgebra
from vkml.frontend.base import TensorBase
from vkml.frontend.grad_mode import (
    check_float,
    grad_enabled,
    leaf_nodes,
    stop,
    walk,
)
from vkml.frontend.host import data_node, full_node
from vkml.frontend.record import check_same_device, tensor_node
from vkml.graph.node import Node
from vkml.ops.registry import OPS
from vkml.ops.spec import Handle

T = TypeVar("T", bound=TensorBase)


def vjp(root: Node, seed: Handle, targets: Collection[Node]) -> dict[Node, Handle]:
    """Lazy gradients of ``root`` (weighted by ``seed``, a tensor whose class the gradients
    take) with respect to each reached target.

    A target that ``root`` does not depend on is absent from the result.
    """
    targets = set(targets)
    order, reaching = walk(root, targets)
    if root not in reaching:
        return {}
    algebra = TensorAlgebra(type(seed))
    grads: dict[Node, Handle] = {root: seed}
    found: dict[Node, Handle] = {}
    with grad_enabled():
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
            for src, gs in zip(node.src, rule(node, g, algebra)):
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


def _filled(like: TensorBase, node: Node, value: int) -> Handle:
    return type(like)(full_node(node.shape, value, node.dtype, node.device))


def _seed(root: TensorBase, grad: Any) -> Handle:
    check_float("backward", root.dtype)
    if grad is None:
        if root.size != 1:
            raise ShapeError(
                f"backward() without a gradient needs a one-element output, got shape "
                f"{root.shape}; reduce it first (e.g. loss.sum()) or pass one: "
                f"backward(grad=...) with shape {root.shape}"
            )
        return _filled(root, root._node, 1)
    node = (
        tensor_node("backward", grad)
        if isinstance(grad, TensorBase)
        else (data_node(grad, root.dtype, root.device))
    )
    if node.shape != root.shape:
        raise ShapeError(
            f"backward(grad=...): grad has shape {node.shape}, the output {root.shape}"
        )
    check_same_device("backward", [root._node, node])
    return type(root)(elementwise.astype(node, root.dtype))


def backward(root: TensorBase, grad: Any = None) -> None:
    """``root.backward(grad)``: add d(root)/d(leaf) to every reached leaf's ``.grad``.

    The forward, the gradients and the accumulation realize as one invocation.
    """
    seed = _seed(root, grad)
    leaves = leaf_nodes()
    grads = vjp(root._node, seed, leaves.keys())
    if not grads:
        raise GradientError(
            "backward(): the output does not depend on any tensor with requires_grad=True "
            "(or only through no_grad() or detach())"
        )
    updates: list[tuple[TensorBase, Handle]] = []
    for node, g in grads.items():
        for leaf in leaves[node]:
            updates.append((leaf, g if leaf._grad is None else leaf._grad + g))
    realize_nodes([root._node, *(total._node for _, total in updates)])
    for leaf, total in updates:
        leaf._grad = detached(total)


def detached(t: T) -> T:
    """The same value with no history: a gradient never flows through it into ``t``."""
    node = t._node
    if node._computed:  # share the storage; a node without sources has nothing to stop
        return type(t)(Node("data", node.dtype, node.shape, (), (), node.device, node._storage))
    view = Node("reshape", node.dtype, node.shape, (node,), (), node.device)
    stop(view)
    return type(t)(view)


# -- the functional API ----------------------------------------------------------------------
def _argnums(argnums: int | Sequence[int], count: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"argnums {argnums!r} must be an int or a tuple of ints")
        if not -count <= i < count:
            raise IndexError(f"argnums {i} is out of range for a call with {count} arguments")
    return tuple(i % count for i in nums)


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """A function returning ``(fn(*args), gradient)`` of a one-element ``fn``, as JAX's.

    Args:
        fn: takes tensors (and anything else) and returns a one-element float tensor.
        argnums: the position (int) or positions (tuple) of the arguments to
            differentiate with respect to.

    Returns:
        A function of the same arguments returning the value and the gradient (a tensor
        for an int ``argnums``, a tuple for a tuple), all lazy: realize them together.
    """

    if not callable(fn):
        raise TypeError(f"grad: fn must be a function of tensors, got {type(fn).__name__}")

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        nums = _argnums(argnums, len(args))
        inputs = list(args)
        fresh: list[Node] = []
        with grad_enabled():
            for i in nums:
                x = args[i]
                if not isinstance(x, TensorBase):
                    raise DTypeError(f"grad: argument {i} is {type(x).__name__}, not a vkml.Tensor")
                check_float(f"grad with respect to argument {i}", x.dtype)
                # a fresh node per argument: the one node this call differentiates with
                # respect to (an identity reshape, which lowers to nothing)
                node = Node("reshape", x.dtype, x.shape, (x._node,), (), x.device)
                fresh.append(node)
                inputs[i] = type(x)(node)
            value = fn(*inputs, **kwargs)
            if not isinstance(value, TensorBase):
                raise DTypeError(f"grad: fn must return a vkml.Tensor, got {type(value).__name__}")
            check_float("grad of fn's output", value.dtype)
            if value.size != 1:
                raise ShapeError(
                    f"grad: fn must return a one-element tensor, got shape {value.shape}"
                )
            grads = vjp(value._node, _filled(value, value._node, 1), fresh)
        out = tuple(grads[n] if n in grads else _filled(value, n, 0) for n in fresh)
        return value, out[0] if isinstance(argnums, int) else out

    return value_and_grad_fn


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """A function returning the gradient of a one-element ``fn`` (see ``value_and_grad``)."""
    both = value_and_grad(fn, argnums)

    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        return both(*args, **kwargs)[1]

    return grad_fn
