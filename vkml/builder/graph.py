"""``Graph``: a builder function recorded once and launched many times.

``@vkml.Graph.builder`` rewrites the function once (``vkml.builder.source``). Calling the
builder with arrays records: the rewritten function runs on input placeholders standing for
those arrays (``vkml.trace.capture``), nothing runs, and a ``Graph`` comes back holding the
recorded graph and the arrays, bound by parameter name. ``g()`` is one launch, one invocation
of the compiled graph, and returns the result; ``g(n)`` launches it ``n`` times and returns the
last result; ``g.bind(name=array)`` swaps an array for another of the same shape, dtype and
device. Nothing is parsed, recorded or compiled again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vkml.builder.source import rewritten
from vkml.errors import DeviceError, ShapeError
from vkml.frontend.creation import tensor
from vkml.frontend.tensor import Tensor
from vkml.graph.walk import region_nodes
from vkml.trace.capture import Captured, capture


class Graph:
    """A recorded builder function with its arrays bound. See the module docstring."""

    def __init__(self, name: str, captured: Captured, arrays: dict[str, Tensor]) -> None:
        self.name = name
        self._captured = captured
        self._arrays = arrays
        self._launches = 0

    @staticmethod
    def builder(fn: Callable[..., Any] | None = None, *, record: bool = False) -> Any:
        """Decorate a function whose ``if``, ``while``, ``for`` and ``match`` on device values
        become control flow inside one compiled graph (docs/builder.md).

        ``@Graph.builder`` or ``@Graph.builder(record=True)``; ``record`` is accepted for the
        reverse pass of issue 10, which is not built yet (it is an error to ask for it).
        """
        if record:
            raise NotImplementedError(
                "Graph.builder(record=True) (the reverse pass, vkml.diff.reverse) is not built "
                "yet; differentiate the function with vkml.grad instead"
            )
        if fn is None:
            return functools.partial(Graph.builder, record=record)
        return Builder(fn)

    # -- launching -----------------------------------------------------------------------------
    def __call__(self, n: int = 1) -> Any:
        """Launch the graph ``n`` times (one invocation each); the last launch's result."""
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"{self.name}: launch count must be a positive int, got {n!r}")
        captured = self._captured
        inputs = [self._arrays[name] for name, _ in captured.inputs]
        for t in inputs:
            t.realize()
        result = None
        for _ in range(n):
            result = captured(*inputs)
            self._launches += 1
        return result

    def bind(self, **arrays: Any) -> Graph:
        """Swap the arrays bound to the named parameters; each must have the shape, dtype and
        device recorded. Returns the graph."""
        specs = dict(self._captured.inputs)
        checked: dict[str, Tensor] = {}
        for name, value in arrays.items():
            if name not in specs:
                raise TypeError(
                    f"{self.name}.bind: no parameter {name!r}; parameters: {', '.join(specs)}"
                )
            spec = specs[name]
            t = (
                tensor(value, device=spec.device)
                if isinstance(value, (np.ndarray, np.generic))
                else value
            )
            if not isinstance(t, Tensor):
                raise TypeError(f"{self.name}.bind: {name} must be a tensor or a NumPy array")
            if t.shape != spec.shape or t.dtype is not spec.dtype:
                raise ShapeError(
                    f"{self.name}.bind: {name} was recorded as {spec}, got "
                    f"{t.dtype.name}{list(t.shape)}; record the builder again for another shape"
                )
            if t.device is not spec.device:
                raise DeviceError(
                    f"{self.name}.bind: {name} is on {t.device}, the graph runs on {spec.device}"
                )
            checked[name] = t
        self._arrays.update(checked)
        return self

    # -- what was built ------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """Where the graph runs: the device's name and its IREE target."""
        device = self._captured.device
        target = getattr(device, "target", None)
        return f"{device} ({target.name})" if target is not None else str(device)

    @property
    def schedule(self) -> Schedule:
        """What one launch does: invocations, nodes and the device conditions in it."""
        nodes = self._captured.schedule
        pending = [n for n in nodes if not n._computed]
        inner = [m for n in pending for m in region_nodes(n)]
        selects = sum(1 for n in pending if n.op == "where")
        return Schedule(
            invocations_per_launch=1 if self._captured.roots else 0,
            nodes=len(pending) + len(inner),
            selects=selects,
            syncs_per_launch=1 if self._captured.roots else 0,
            launches=self._launches,
        )

    def __repr__(self) -> str:
        return f"Graph({self.name}, {self.schedule.nodes} nodes on {self.backend})"


@dataclass(frozen=True)
class Schedule:
    """``invocations_per_launch`` compiled calls, ``nodes`` recorded ops, ``selects`` of which
    choose on the device (device conditions, predicated loop turns), ``syncs_per_launch`` host
    waits, and how many ``launches`` have run."""

    invocations_per_launch: int
    nodes: int
    selects: int
    syncs_per_launch: int
    launches: int


class Builder:
    """A decorated builder function: call it with arrays to record a ``Graph``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.recorded_fn = rewritten(fn)  # once: a second call does not parse again
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Graph:
        if kwargs:
            raise TypeError(f"{self.fn.__name__}: pass the arrays positionally")
        arrays = [a if isinstance(a, Tensor) else tensor(a) for a in args]
        captured = capture(self.recorded_fn, *arrays)
        names = [name for name, _ in captured.inputs]
        return Graph(self.fn.__name__, captured, dict(zip(names, arrays)))
