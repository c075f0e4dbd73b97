"""``vkml.diff.reverse``: the reverse pass of a graph recorded with ``record=True``.

The reverse of a builder graph is itself one compiled graph: the builder's function recorded
again with the arguments to differentiate marked (once per choice of ``wrt`` and seeds, then
kept), its outputs weighted by the seeds, and each op's gradient rule applied last to first
(``vkml.frontend.autograd.vjp``). A device condition is a select, whose gradient goes to the
arm that was chosen; the turns of a bounded loop are recorded one by one (``record=True``
keeps them unrolled: that is the loop's stored trajectory), so their gradients run last to
first. A ``while`` on a device condition keeps no trajectory and is refused.

Names are the ones ``Graph.arrays`` maps: the builder's parameters (``wrt``) and ``result``
(``seeds``); anything else is a temporary, with no array that outlives a launch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vkml.builder import recorder
from vkml.builder.graph import Graph
from vkml.errors import DTypeError, GradientError, ShapeError
from vkml.frontend.autograd import vjp
from vkml.frontend.creation import full, tensor
from vkml.frontend.grad_mode import grad_enabled
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node
from vkml.graph.walk import region_nodes
from vkml.trace.capture import capture
from vkml.trace.input_spec import Spec

RESULT = "result"
ONE = "one"  # the seed of a one-element result left unseeded: 1


def reverse(
    graph: Graph, seeds: Mapping[str, Any] | None = None, wrt: str | Sequence[str] | None = None
) -> dict[str, Tensor]:
    """The gradients of ``graph``'s result with respect to its arguments, by name.

    Args:
        graph: a graph recorded with ``@vkml.Graph.builder(record=True)``.
        seeds: ``{"result": seed}``: the gradient with respect to the result, shaped as the
            result (a tensor or array; a tuple, list or dict of them for a result of several
            values, None for a value that seeds nothing). Left out, the result must be one
            one-element float tensor, seeded with 1.
        wrt: the parameter names to differentiate with respect to (default: every float
            parameter).

    Returns:
        ``{name: gradient}`` for each name of ``wrt``, computed (one invocation, the forward
        included) on the arrays bound now (``graph.bind``).
    """
    source = graph.recorded
    if source is None:
        raise GradientError(
            f"vkml.diff.reverse: {graph.name} was recorded without record=True, which keeps "
            f"what the reverse pass needs; decorate it with @vkml.Graph.builder(record=True)"
        )
    params = [name for name, _ in graph.inputs]
    names = _wrt(graph, wrt)
    _refuse_device_loops(graph)
    outputs = [node for _, node in graph.captured.outputs]
    seeded = _seeds(graph, seeds, outputs)
    given = [s for s in seeded if isinstance(s, Tensor)]
    kinds = tuple("array" if isinstance(s, Tensor) else s for s in seeded)
    key = (tuple(names), kinds)
    backward = graph.reverses.get(key)
    if backward is None:
        fn, turns = source
        examples = [spec for _, spec in graph.inputs] + [
            Spec(s.shape, s.dtype, s.device) for s in given
        ]
        wrt_at = [params.index(n) for n in names]
        backward = capture(_reverse_of(fn, turns, len(params), wrt_at, kinds), *examples)
        graph.reverses[key] = backward
    arrays = [graph.arrays[n] for n in params]
    grads = backward(*arrays, *given)
    grads = (grads,) if isinstance(grads, Tensor) else grads
    return dict(zip(names, grads))


def _wrt(graph: Graph, wrt: str | Sequence[str] | None) -> list[str]:
    specs = dict(graph.inputs)
    if wrt is None:
        return [name for name, spec in graph.inputs if spec.dtype.is_float]
    names = [wrt] if isinstance(wrt, str) else list(wrt)
    for name in names:
        if name == RESULT:
            raise GradientError(
                f"vkml.diff.reverse: {RESULT!r} is the output of {graph.name}; seed it with "
                f"seeds={{'result': ...}} and name parameters in wrt"
            )
        if name not in specs:
            raise GradientError(
                f"vkml.diff.reverse: {name!r} is not a parameter of {graph.name} "
                f"({', '.join(specs)}): a temporary has no array that outlives a launch, so "
                f"there is nothing to differentiate with respect to; make it a parameter"
            )
        if not specs[name].dtype.is_float:
            raise DTypeError(
                f"vkml.diff.reverse: parameter {name!r} is {specs[name].dtype.name}; gradients "
                f"exist only with respect to floating-point arrays"
            )
    if len(set(names)) != len(names):
        raise GradientError(f"vkml.diff.reverse: wrt names a parameter twice: {names}")
    return names


def _refuse_device_loops(graph: Graph) -> None:
    schedule = graph.captured.schedule
    every = [*schedule, *(m for n in schedule for m in region_nodes(n))]
    if any(n.op == "while" for n in every):
        raise GradientError(
            f"vkml.diff.reverse: {graph.name} holds a 'while' on a device condition, whose "
            f"turns are not stored; bound it to differentiate through it: "
            f"'for _ in range(N): if not condition: break' keeps its trajectory"
        )


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    return [value]


def _seeds(graph: Graph, seeds: Mapping[str, Any] | None, outputs: list[Node]) -> list[Any]:
    """Per output of the graph, in order: its seed tensor, ``ONE`` (a one-element result
    seeded with 1, made inside the reverse graph) or None (no gradient flows from it)."""
    if seeds is None:
        if len(outputs) != 1 or outputs[0].shape != () and outputs[0].shape != (1,):
            raise ShapeError(
                f"vkml.diff.reverse: {graph.name}'s result is not one one-element value; "
                f"pass seeds={{'result': ...}} shaped as the result"
            )
        seeds = {RESULT: None}
    unknown = set(seeds) - {RESULT}
    if unknown:
        raise GradientError(
            f"vkml.diff.reverse: seeds names {sorted(unknown)}; only {RESULT!r} (the graph's "
            f"output) can be seeded"
        )
    given = _flat(seeds[RESULT]) if seeds[RESULT] is not None else [None]
    if len(given) != len(outputs):
        raise ShapeError(
            f"vkml.diff.reverse: {len(given)} seeds for a result of {len(outputs)} values"
        )
    made: list[Any] = []
    for i, (seed, out) in enumerate(zip(given, outputs)):
        if seed is None and seeds[RESULT] is not None:
            made.append(None)
            continue
        if not out.dtype.is_float:
            raise DTypeError(
                f"vkml.diff.reverse: result value {i} is {out.dtype.name}, which has no gradient; "
                f"seed it with None"
            )
        if seed is None:
            made.append(ONE)
            continue
        t = seed if isinstance(seed, Tensor) else tensor(seed, device=out.device)
        if t.shape != out.shape:
            raise ShapeError(
                f"vkml.diff.reverse: the seed of result value {i} has shape {t.shape}, the "
                f"value {out.shape}"
            )
        made.append(t.astype(out.dtype))
    return made


def _reverse_of(
    fn: Callable[..., Any], turns: int | None, count: int, wrt_at: list[int], kinds: tuple[Any, ...]
) -> Callable[..., Any]:
    """The function the reverse graph is captured from: the builder's function on the
    arguments, then the gradients of its seeded outputs (``kinds``, as ``_seeds`` says; the
    seed arrays follow the arguments) with respect to ``wrt_at``."""

    def reverse_pass(*args: Tensor) -> tuple[Tensor, ...]:
        inputs, given = list(args[:count]), iter(args[count:])
        fresh: list[Node] = []
        with grad_enabled():
            for i in wrt_at:  # a node of its own per argument: what the gradient is taken at
                x = inputs[i]
                fresh.append(Node("reshape", x.dtype, x.shape, (x._node,), (), x.device))
                inputs[i] = Tensor(fresh[-1])
            with recorder.recording(turns, unrolled=True):
                outs = _flat(fn(*inputs))
            total: dict[Node, Tensor] = {}
            for out, kind in zip(outs, kinds):
                if kind is None:
                    continue
                seed = (
                    full(out.shape, 1, dtype=out.dtype, device=out.device)
                    if kind == ONE
                    else next(given)
                )
                for node, g in vjp(out._node, seed, fresh).items():
                    total[node] = g if node not in total else total[node] + g
        return tuple(
            total[n] if n in total else full(n.shape, 0, dtype=n.dtype, device=n.device)
            for n in fresh
        )

    return reverse_pass


__all__ = ["reverse"]
