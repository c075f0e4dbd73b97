"""``cond``: a conditional on a device value, recorded as one node that owns two regions.

Each arm is a Python function called once, now, on region parameters that stand for the
operands; what it builds becomes its region (``vkml.graph.node.Region``). A value an arm
reads without receiving it (a tensor it closes over, a constant it makes) is **lifted**: it
becomes one more operand of the ``cond`` node and one more parameter of both regions, so a
region's nodes refer to its parameters and each other only, as ``Region`` requires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vkml.devices.realize import refusing
from vkml.dtypes import bool_, uint32
from vkml.errors import DTypeError, ShapeError
from vkml.frontend import ops, views
from vkml.frontend.base import TensorBase
from vkml.frontend.eager import suspended
from vkml.frontend.tensor import Tensor, wrap
from vkml.graph.node import PARAM, Node, Region, param
from vkml.graph.walk import toposort

Arm = Callable[..., Any]


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
    condition = _condition(pred)
    nodes = [ops.tensor_node("cond", x) for x in operands]
    device = ops.check_same_device("cond", [condition, *nodes])
    arms = [
        _record_arm(name, fn, nodes, device)
        for name, fn in (("on_true", on_true), ("on_false", on_false))
    ]
    (t_result, t_params, t_order), (f_result, f_params, f_order) = arms
    if t_result.dtype is not f_result.dtype or t_result.shape != f_result.shape:
        raise (DTypeError if t_result.dtype is not f_result.dtype else ShapeError)(
            f"'cond': the arms return {t_result.dtype.name}{list(t_result.shape)} (on_true) and "
            f"{f_result.dtype.name}{list(f_result.shape)} (on_false); both must return the "
            f"same dtype and shape"
        )
    lifted = list(
        dict.fromkeys(
            [*_outside(t_result, t_params, t_order), *_outside(f_result, f_params, f_order)]
        )
    )
    regions = tuple(
        _region(result, params, order, lifted, device) for result, params, order in arms
    )
    node = Node(
        "cond", t_result.dtype, t_result.shape, (condition, *nodes, *lifted), (), device,
        regions=regions,
    )  # fmt: skip
    return wrap(node)


def _condition(pred: Any) -> Node:
    if not isinstance(pred, TensorBase):
        raise DTypeError(
            f"'cond': pred must be a one-element bool or uint32 tensor, got "
            f"{type(pred).__name__}; a Python value decides in Python: use if/else"
        )
    node = pred.node
    if node.dtype not in (bool_, uint32) or len(node.shape) > 0 and pred.size != 1:
        raise (DTypeError if node.dtype not in (bool_, uint32) else ShapeError)(
            f"'cond': pred must be a one-element bool or uint32 tensor, got "
            f"{node.dtype.name}{list(node.shape)}"
        )
    if node.shape:
        node = views.reshape(node, ())
    return ops.compare("ne", node, 0) if node.dtype is uint32 else node


def _record_arm(
    name: str, fn: Arm, operands: Sequence[Node], device: Any
) -> tuple[Node, list[Node], list[Node]]:
    """The node ``fn`` returns on parameters standing for ``operands``, the parameters, and
    every node its result needs (outside ones included), sources first."""
    if not callable(fn):
        raise TypeError(f"'cond': {name} must be callable, got {type(fn).__name__}")
    params = [param(i, n.dtype, n.shape, device) for i, n in enumerate(operands)]
    reason = (
        f"'cond' is recording {name}: its values exist only on the device, at each realize, "
        f"so it cannot observe one (numpy(), item(), realize()); return the value instead"
    )
    with refusing(reason), suspended():
        result = fn(*(Tensor(p) for p in params))
    if not isinstance(result, TensorBase):
        raise TypeError(f"'cond': {name} must return a tensor, got {type(result).__name__}")
    return result.node, params, toposort([result.node])


def _inside(params: Sequence[Node], order: Sequence[Node]) -> set[Node]:
    """The nodes of ``order`` that depend on a parameter: the arm's own."""
    inside = set(params)
    for node in order:
        if node.op != PARAM and any(s in inside for s in node.src):
            inside.add(node)
    return inside


def _outside(result: Node, params: Sequence[Node], order: Sequence[Node]) -> list[Node]:
    """The values the arm reads that do not depend on its parameters, in first-use order."""
    inside = _inside(params, order)
    if result not in inside:
        return [result]
    found: dict[Node, None] = {}
    for node in order:
        if node in inside:
            for s in node.src:
                if s not in inside:
                    found[s] = None
    return list(found)


def _region(
    result: Node, params: list[Node], order: Sequence[Node], lifted: Sequence[Node], device: Any
) -> Region:
    """The arm rebuilt over ``params`` and one more parameter per lifted value."""
    inside = _inside(params, order)
    first = len(params)
    extra = [param(first + j, n.dtype, n.shape, device) for j, n in enumerate(lifted)]
    mapping: dict[Node, Node] = {**dict(zip(params, params)), **dict(zip(lifted, extra))}
    for node in order:
        if node in inside and node.op != PARAM:
            mapping[node] = Node(
                node.op, node.dtype, node.shape, tuple(mapping[s] for s in node.src),
                node.attrs, node.device, regions=node.regions,
            )  # fmt: skip
    return Region((*params, *extra), (mapping[result],))
