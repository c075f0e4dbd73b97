"""``capture(fn, *args)``: the graph a function builds, kept with named inputs and outputs.

``fn`` runs once, on input placeholders (``vkml.graph.node.placeholder``), one per
positional argument, with the shape, dtype and device of the example given for it (a
tensor, a NumPy array or a ``vkml.trace.input_spec``). Nothing is computed: realizing inside
``fn`` is refused (a value observed while capturing would be baked into the graph), and eager
mode is off for its duration. What ``fn`` returns (a tensor, a tuple or list of them, or a
dict from names to them) are the outputs.

The ``Captured`` keeps the graph's schedule and its **arguments** in the order the compiled
function takes them: each is an input placeholder or a **captured** leaf, a realized tensor
``fn`` read without receiving it (a closed-over constant, a model's parameter). A call
passes one storage per argument; ``Captured.__call__`` fills the inputs from its arguments and
the captured leaves from their own storage, while ``opt.compile_step`` passes a parameter's
current storage instead (its state handles are rebound after each step).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vkml.devices.device import Call, Device
from vkml.devices.realize import distinct_roots, plan, realize_nodes, refusing
from vkml.errors import BindingLimitError, DeviceError, ShapeError, TraceError
from vkml.frontend.creation import tensor
from vkml.frontend.eager import suspended
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node, placeholder
from vkml.runtime import bump
from vkml.trace.arguments import in_order
from vkml.trace.input_spec import Spec, spec_of

# How an output is found after a call: (ROOT, k) the k-th result of the invocation,
# (ARGUMENT, i) the storage of the i-th argument (fn returned an input or captured leaf as
# it was),
# (HELD, node) a realized node that is no argument of the graph (fn returned it untouched)
ROOT, ARGUMENT, HELD = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of the captured function, in calling order: the leaf ``node``, and
    ``input``, its position among ``fn``'s parameters (None for a captured leaf)."""

    node: Node
    input: int | None


def capture(fn: Callable[..., Any], *args: Any) -> Captured:
    """The graph ``fn(*args)`` builds, with nothing run; see the module docstring.

    Args:
        fn: builds tensors from its positional arguments (and anything it closes over).
        args: one example per positional argument: a tensor, a NumPy array or a ``spec``.
            Only their shape, dtype and device are used.

    Raises:
        TraceError: ``fn`` realized a value, or returned something that is not tensors.
        DeviceError: the inputs, or what ``fn`` builds from them, are on several devices.
    """
    if not callable(fn):
        raise TypeError(f"capture: fn must be callable, got {type(fn).__name__}")
    name = getattr(fn, "__name__", type(fn).__name__)
    names = parameter_names(fn, len(args))
    specs = [spec_of(n, a) for n, a in zip(names, args)]
    devices = {s.device for s in specs}
    if len(devices) > 1:
        raise DeviceError(
            f"capture: the inputs of {name!r} are on different devices: "
            + ", ".join(f"{n} on {s.device}" for n, s in zip(names, specs))
        )
    nodes = [placeholder(n, s.dtype, s.shape, s.device) for n, s in zip(names, specs)]
    reason = (
        f"{name!r} is being captured: its values exist only when the captured function is "
        f"called, so it cannot observe one (numpy(), item(), realize(), printing a value); "
        f"return the value instead, or observe it outside the function"
    )
    with refusing(reason), suspended():
        result = fn(*(Tensor(n) for n in nodes))
    return Captured(name, tuple(zip(names, specs)), nodes, result)


class Captured:
    """A captured function: ``inputs`` (name, spec) in parameter order, ``outputs`` (name,
    node), ``arguments`` in calling order, ``schedule`` and ``device``.

    ``run(storages)`` is one invocation on one storage per argument, returning one per
    output; calling it with tensors or NumPy arrays (one per input) returns the outputs as
    tensors, in the structure ``fn`` returned them.
    """

    def __init__(
        self, name: str, inputs: tuple[tuple[str, Spec], ...], nodes: list[Node], result: Any
    ) -> None:
        self.name = name
        self.inputs = inputs
        self._structure, outputs = _flatten(name, result)
        self.outputs: tuple[tuple[str, Node], ...] = tuple(outputs)
        roots = list(dict.fromkeys(n for _, n in outputs if not n._computed))
        # every input is an argument, first and in parameter order, whether or not it is read
        self.schedule, device = plan(roots, nodes) if roots or nodes else ([], None)
        self.roots, first = distinct_roots(self.schedule, roots)
        self.device: Device | None = device
        self.arguments = tuple(
            Argument(n, i if i < len(nodes) else None)
            for i, n in enumerate(n for n in self.schedule if n._computed)
        )
        position = {a.node: i for i, a in enumerate(self.arguments)}
        root_index = {n: first[k] for k, n in enumerate(roots)}
        # where each output comes from: (ROOT, k), (ARGUMENT, i) or (HELD, node)
        self.sources: list[tuple[int, Any]] = []
        for _, n in outputs:
            if n in root_index:
                self.sources.append((ROOT, root_index[n]))
            elif n in position:
                self.sources.append((ARGUMENT, position[n]))
            else:
                self.sources.append((HELD, n))
        self._call: Call | None = None

    @property
    def structure(self) -> str:
        """How ``fn`` returned its outputs: "one" tensor, a "tuple", a "list" or a "dict"."""
        return str(self._structure[0])

    @property
    def captured(self) -> list[Node]:
        """The leaves ``fn`` read without receiving them, in calling order."""
        return [a.node for a in self.arguments if a.input is None]

    def compile(self) -> Captured:
        """Find or compile the executable now (the first call does it otherwise).

        Raises:
            BindingLimitError: IREE would not load the module (see ``run``).
        """
        if self._call is None and self.device is not None and self.roots:
            try:
                self._call, _ = self.device.prepare(self.schedule, self.roots)
            except BindingLimitError as exc:
                raise self._unloadable(exc) from exc
        return self

    def _unloadable(self, exc: BindingLimitError) -> BindingLimitError:
        assert self.device is not None
        return BindingLimitError(
            f"{self.name!r} is captured as one module, and IREE would not load or run it on "
            f"{self.device.name}: one of its dispatches binds more buffers than the device "
            f"allows (long chains of one-element values, each a result). realize() computes "
            f"such a graph in parts, but a captured function is one invocation: call "
            f"{self.name!r} uncaptured, or capture it as smaller functions (fewer results "
            f"each). Nothing ran. ({exc})"
        )

    def run(self, storages: Sequence[Any]) -> list[Any]:
        """One invocation on ``storages`` (one per argument, in calling order); one storage
        per output.

        Raises:
            BindingLimitError: IREE would not load (Vulkan) or run (cpu) the module, one of
                whose dispatches binds more buffers than the device allows; unlike realize,
                a captured function is not split.
        """
        results: list[Any] = []
        if self.roots:
            self.compile()
            assert self._call is not None
            try:
                results = self._call(storages)
            except BindingLimitError as exc:  # local-task refuses at the call, not the load
                raise self._unloadable(exc) from exc
            bump("realizes")
        out = []
        for kind, source in self.sources:
            if kind == ROOT:
                out.append(results[source])
            elif kind == ARGUMENT:
                out.append(storages[source])
            else:
                out.append(source._storage)
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs for the inputs (one tensor or NumPy array each, by position or by
        name), as tensors."""
        args = tuple(
            in_order(f"{self.name!r} (captured)", [n for n, _ in self.inputs], args, kwargs)
        )
        values = [self._check(n, s, a) for (n, s), a in zip(self.inputs, args)]
        pending = [v._node for v in values if not v._node._computed]
        if pending:
            realize_nodes(pending)
        storages = [
            values[a.input]._node._storage if a.input is not None else a.node._storage
            for a in self.arguments
        ]
        results = self.run(storages)
        tensors = [
            Tensor(Node("data", n.dtype, n.shape, (), (), n.device, storage))
            for (_, n), storage in zip(self.outputs, results)
        ]
        return _unflatten(self._structure, tensors)

    def _check(self, name: str, expected: Spec, value: Any) -> Tensor:
        if isinstance(value, (np.ndarray, np.generic)):
            value = tensor(value, device=expected.device)
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{self.name!r} (captured): input {name!r} must be a vkml Tensor or a NumPy "
                f"array, got {type(value).__name__}"
            )
        if value.shape != expected.shape or value.dtype is not expected.dtype:
            raise ShapeError(
                f"{self.name!r} (captured): input {name!r} must be "
                f"{expected.dtype.name}{list(expected.shape)}, got "
                f"{value.dtype.name}{list(value.shape)}; capture the function again for "
                f"inputs of another shape or dtype"
            )
        if value.device is not expected.device:
            raise DeviceError(
                f"{self.name!r} (captured): input {name!r} is on {value.device}, the function "
                f"was captured for {expected.device}; move it with .to('{expected.device}')"
            )
        return value

    def __repr__(self) -> str:
        ins = ", ".join(f"{n}: {s.dtype.name}{list(s.shape)}" for n, s in self.inputs)
        outs = ", ".join(f"{n}: {x.dtype.name}{list(x.shape)}" for n, x in self.outputs)
        return f"Captured({self.name}({ins}) -> ({outs}), {len(self.schedule)} nodes)"


def parameter_names(fn: Callable[..., Any], count: int) -> list[str]:
    """A name per positional argument: ``fn``'s parameter names, ``args0``, ``args1`` ...
    for a ``*args`` parameter, ``arg0`` ... where ``fn`` has no signature."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names: list[str] = []
    for p in parameters:
        if len(names) == count:
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names += [f"{p.name}{i}" for i in range(count - len(names))]
    names += [f"arg{i}" for i in range(len(names), count)]
    return names


# The structure of fn's result: ("one",), ("tuple", n), ("list", n) or ("dict", keys).
Structure = tuple[Any, ...]


def _flatten(name: str, result: Any) -> tuple[Structure, list[tuple[str, Node]]]:
    def node_of(key: str, value: Any) -> Node:
        if not isinstance(value, Tensor):
            raise TraceError(
                f"capture: {name!r} returned {type(value).__name__} as {key}; a captured "
                f"function returns a tensor, a tuple or list of tensors, or a dict of them"
            )
        return value._node

    if isinstance(result, Tensor):
        return ("one",), [("result", result._node)]
    if isinstance(result, (tuple, list)):
        kind = "tuple" if isinstance(result, tuple) else "list"
        outs = [(f"result{i}", node_of(f"result[{i}]", v)) for i, v in enumerate(result)]
        return (kind, len(outs)), outs
    if isinstance(result, dict):
        for key in result:
            if not isinstance(key, str):
                raise TraceError(
                    f"capture: {name!r} returned a dict with the key {key!r}; output names "
                    f"are strings"
                )
        return ("dict", tuple(result)), [(k, node_of(f"[{k!r}]", v)) for k, v in result.items()]
    node_of("its result", result)  # raises
    raise AssertionError("unreachable")


def _unflatten(structure: Structure, tensors: list[Tensor]) -> Any:
    kind = structure[0]
    if kind == "one":
        return tensors[0]
    if kind == "tuple":
        return tuple(tensors)
    if kind == "list":
        return list(tensors)
    return dict(zip(structure[1], tensors))
