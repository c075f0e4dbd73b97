"""Control flow on device values: ``cond`` and ``while_loop``, each one node that owns regions
(recorded from Python functions by ``vkml.frontend.regions``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vkml.dtypes import bool_, int32, uint32
from vkml.errors import DTypeError, ShapeError
from vkml.frontend import elementwise, regions, views
from vkml.frontend.base import TensorBase
from vkml.frontend.record import check_same_device, record, tensor_node
from vkml.frontend.tensor import Tensor, wrap
from vkml.graph.node import Node

Arm = Callable[..., Any]


def fusion_stop(x: Tensor) -> Tensor:
    """``x``, computed in dispatches of its own: IREE fuses nothing across the boundary
    (the end of a graph builder's fork branch; ``vkml.ops.control``)."""
    return Tensor(record("fusion_stop", x))


def cond(pred: Any, on_true: Arm, on_false: Arm, *operands: Any) -> Tensor:
    """``on_true(*operands)`` where the one-element ``pred`` is true, else ``on_false(*operands)``,
    decided on the device at every realize.

    Both arms are recorded now (each function is called once, on stand-ins for the operands)
    and compiled into the same kernel: the device computes both and selects one, with no
    host round trip; the reference device runs only the chosen arm. The two give the same
    bits. Arms must return one tensor each, of the same dtype and shape.

    Args:
        pred: a one-element bool or uint32 tensor (uint32: nonzero is true).
        on_true, on_false: functions of the operands returning a tensor.
        operands: tensors on ``pred``'s device.

    Raises:
        DTypeError, ShapeError: ``pred`` is not a one-element bool/uint32 tensor, or the arms
            return different dtypes or shapes.
        TraceError: an arm observes a value (``numpy()``, ``item()``): arms only record.
    """
    condition = _condition("cond", pred)
    nodes = [tensor_node("cond", x) for x in operands]
    device = check_same_device("cond", [condition, *nodes])
    arms = [
        regions.trace_region("cond", name, fn, nodes, device)
        for name, fn in (("on_true", on_true), ("on_false", on_false))
    ]
    for arm, name in zip(arms, ("on_true", "on_false")):
        if len(arm.results) != 1:
            raise TypeError(f"'cond': {name} must return one tensor, got {len(arm.results)}")
    t, f = arms[0].results[0], arms[1].results[0]
    if t.dtype is not f.dtype or t.shape != f.shape:
        raise (DTypeError if t.dtype is not f.dtype else ShapeError)(
            f"'cond': the arms return {t.dtype.name}{list(t.shape)} (on_true) and "
            f"{f.dtype.name}{list(f.shape)} (on_false); both must return the same dtype and shape"
        )
    lifted = regions.lifted(*arms)
    owned = tuple(regions.region(arm, lifted, device) for arm in arms)
    node = Node("cond", t.dtype, t.shape, (condition, *nodes, *lifted), (), device, regions=owned)
    return wrap(node)


def while_loop(
    keep_going: Arm, body: Arm, *init: Any, max_turns: int | None = None
) -> tuple[Tensor, ...]:
    """The values ``body`` gives, applied to ``init`` while ``keep_going`` of them holds: a
    loop run on the device (a ``stablehlo.while``), ``jax.lax.while_loop``'s meaning.

    A realize running the loop stops it at Ctrl-C (``KeyboardInterrupt`` within a turn; the
    process stays usable).

    Args:
        keep_going: a function of the carried values returning a one-element bool or uint32
            tensor.
        body: a function of the carried values returning their next values (a tuple, or one
            tensor when there is one), each of the same dtype and shape as before.
        init: the first values, tensors on one device.
        max_turns: at most this many turns: the loop also ends when the body has run
            ``max_turns`` times (None: only ``keep_going`` ends it).

    Returns:
        The carried values when ``keep_going`` first fails, one tensor each.

    Raises:
        DTypeError, ShapeError: a condition that is not one bool/uint32 element, or a body
            that changes a value's dtype or shape.
        TraceError: either function observes a value.
    """
    if not init:
        raise TypeError("'while_loop': needs at least one carried value")
    if max_turns is not None:
        return _bounded(keep_going, body, init, turn_limit("while_loop", max_turns))
    if not callable(keep_going):
        raise TypeError(
            f"'while_loop': keep_going must be callable, got {type(keep_going).__name__}"
        )
    nodes = [tensor_node("while_loop", x) for x in init]
    device = check_same_device("while_loop", nodes)

    def condition(*values: Tensor) -> Tensor:
        return Tensor(_condition("while_loop", keep_going(*values)))

    test = regions.trace_region("while_loop", "keep_going", condition, nodes, device)
    step = regions.trace_region("while_loop", "body", body, nodes, device)
    _check_carried(step.results, nodes)
    lifted = regions.lifted(test, step)
    owned = (
        regions.region(test, lifted, device),
        _passing(regions.region(step, lifted, device), len(nodes)),
    )
    carried = [*nodes, *lifted]
    results = tuple((n.dtype.name, n.shape) for n in carried)
    loop = Node(
        "while", nodes[0].dtype, nodes[0].shape, tuple(carried), (("results", results),), device,
        regions=owned,
    )  # fmt: skip
    return tuple(
        Tensor(Node("result", n.dtype, n.shape, (loop,), (("index", i),), device))
        for i, n in enumerate(nodes)
    )


def _check_carried(results: Sequence[Node], nodes: Sequence[Node]) -> None:
    """A loop body gives one value per carried value, each of its dtype and shape."""
    if len(results) != len(nodes):
        raise TypeError(
            f"'while_loop': body must return {len(nodes)} values (one per carried value), "
            f"got {len(results)}"
        )
    for i, (new, old) in enumerate(zip(results, nodes)):
        if new.dtype is not old.dtype or new.shape != old.shape:
            raise (DTypeError if new.dtype is not old.dtype else ShapeError)(
                f"'while_loop': body changes carried value {i} from {old.dtype.name}"
                f"{list(old.shape)} to {new.dtype.name}{list(new.shape)}; a loop keeps them"
            )


def turn_limit(op: str, max_turns: Any) -> int:
    """``max_turns`` as a number of turns: a non-negative int below 2**31."""
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or not 0 <= max_turns < 2**31:
        raise ValueError(
            f"'{op}': max_turns must be an int from 0 to 2**31 - 1 (or None), got {max_turns!r}"
        )
    return max_turns


def _bounded(keep_going: Arm, body: Arm, init: tuple[Any, ...], limit: int) -> tuple[Tensor, ...]:
    """``while_loop`` that also ends after ``limit`` turns: a turn count carried last."""
    device = check_same_device("while_loop", [tensor_node("while_loop", x) for x in init])
    count = Tensor(Node("full", int32, (), (), (("value", 0),), device))

    def test(*values: Tensor) -> Tensor:
        holds = _condition("while_loop", keep_going(*values[:-1]))
        return Tensor(elementwise.where(holds, Tensor(record("lt", values[-1], limit)), False))

    def step(*values: Tensor) -> tuple[Tensor, ...]:
        new = body(*values[:-1])
        new = new if isinstance(new, tuple) else (new,)
        return (*new, Tensor(record("add", values[-1], 1)))

    return while_loop(test, step, *init, count)[:-1]


def _passing(body: Any, carried: int) -> Any:
    """``body`` returning its lifted parameters unchanged after the carried values: a loop's
    body region gives the next value of every value the loop carries."""
    return type(body)(body.params, (*body.results, *body.params[carried:]))


def _condition(op: str, pred: Any) -> Node:
    """``pred`` as a 0-d bool node (uint32: nonzero is true)."""
    if not isinstance(pred, TensorBase):
        raise DTypeError(
            f"'{op}': the condition must be a one-element bool or uint32 tensor, got "
            f"{type(pred).__name__}; a Python value decides in Python: use if/else"
        )
    node = pred.node
    if node.dtype not in (bool_, uint32) or (len(node.shape) > 0 and pred.size != 1):
        raise (DTypeError if node.dtype not in (bool_, uint32) else ShapeError)(
            f"'{op}': the condition must be a one-element bool or uint32 tensor, got "
            f"{node.dtype.name}{list(node.shape)}"
        )
    if node.shape:
        node = views.reshape(node, ())
    return record("ne", node, 0) if node.dtype is uint32 else node
