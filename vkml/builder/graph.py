"""``Graph``: a builder function recorded once and launched many times.

``@vkml.Graph.builder`` rewrites the function once (``vkml.builder.source``). Calling the
builder with arrays records: the rewritten function runs on input placeholders standing for
those arrays (``vkml.trace.capture``), nothing runs, and a ``Graph`` comes back holding the
recorded graph and the arrays, bound by parameter name. ``g()`` is one launch, one invocation
of the compiled graph, and returns the result; ``g(n)`` launches it ``n`` times and returns the
last result; ``g.bind(name=array)`` swaps an array for another of the same shape, dtype and
device. Nothing is parsed, recorded or compiled again. ``g.save(path)`` writes the graph as an
ahead-of-time module that runs without Python (``vkml.aot``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vkml.aot.artifact import Artifact
from vkml.builder import recorder
from vkml.builder.buffer_params import feeds, outputs_of
from vkml.builder.fork import Fork
from vkml.builder.source import rewritten
from vkml.devices.realize import printing_recorded
from vkml.errors import DeviceError, ShapeError
from vkml.frontend.control import turn_limit
from vkml.frontend.creation import tensor
from vkml.frontend.tensor import Tensor
from vkml.graph.walk import region_nodes
from vkml.trace.capture import Captured, capture
from vkml.trace.input_spec import Spec

MAX_TURNS_PER_SYNC = 1024


class Graph:
    """A recorded builder function with its arrays bound. See the module docstring."""

    def __init__(
        self,
        name: str,
        captured: Captured,
        arrays: dict[str, Tensor],
        recorded: tuple[Callable[..., Any], int | None] | None = None,
        buffer: str | Sequence[str] = (),
        forks: int = 0,
    ) -> None:
        self.name = name
        self._captured = captured
        self._forks = forks
        self._arrays = arrays
        self._feeds = feeds(captured, buffer)  # (buffer parameter, output that feeds it)
        self._launches = 0
        self._result: Any = None
        # record=True: the rewritten function and its turns_per_sync, recorded again by
        # vkml.diff.reverse; its compiled reverse passes, by (wrt, seeded outputs)
        self.recorded = recorded
        self.reverses: dict[tuple[Any, ...], Captured] = {}

    @staticmethod
    def builder(
        fn: Callable[..., Any] | None = None,
        *,
        record: bool = False,
        turns_per_sync: int | None = None,
        max_turns: int | None = None,
    ) -> Any:
        """Decorate a function whose ``if``, ``while``, ``for`` and ``match`` on device values
        become control flow inside one compiled graph (docs/builder.md).

        ``@Graph.builder`` or ``@Graph.builder(record=True, turns_per_sync=N)``. ``record``
        keeps what the reverse pass (``vkml.diff.reverse``) needs: every turn of a bounded
        loop is recorded (the trajectory it walks back). ``turns_per_sync``: how many turns of
        a ``while`` on a device condition run between two host syncs (default: the device's,
        ``device.turns_per_sync``). ``max_turns``: every ``while`` on a device condition
        ends after that many turns at most (as if its condition had failed), so a loop whose
        condition never fails still returns; Ctrl-C stops one in any case.
        """
        if not isinstance(record, bool):
            raise TypeError(f"Graph.builder: record must be True or False, got {record!r}")
        if turns_per_sync is not None and (
            not isinstance(turns_per_sync, int) or isinstance(turns_per_sync, bool)
            or not 1 <= turns_per_sync <= MAX_TURNS_PER_SYNC
        ):  # fmt: skip
            raise ValueError(
                f"Graph.builder: turns_per_sync must be an int from 1 to {MAX_TURNS_PER_SYNC}, "
                f"got {turns_per_sync!r}"
            )
        if max_turns is not None:
            turn_limit("Graph.builder", max_turns)
        if fn is None:
            return functools.partial(
                Graph.builder, record=record, turns_per_sync=turns_per_sync, max_turns=max_turns
            )
        return Builder(fn, turns_per_sync, record, max_turns)

    @staticmethod
    def parallel() -> Fork:
        """A fork, in a builder function: ``with vkml.Graph.parallel() as fork:``, then one
        ``with fork.branch():`` block per branch; leaving the ``with`` joins. Each branch is
        computed in dispatches of its own that IREE can run side by side; a branch reads what
        another made only after ``b.wait(value)`` (``with fork.branch() as b:``).
        See docs/builder.md."""
        return Fork()

    # -- launching -----------------------------------------------------------------------------
    def __call__(self, n: int = 1) -> Any:
        """Launch the graph ``n`` times (one invocation each); the last launch's result.
        Each launch leaves the new values of the buffers (``buffer=``) for the next."""
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
            if self._feeds:  # each buffer takes its new value, for the next launch
                outs = outputs_of(result)
                for name, k in self._feeds:
                    self._arrays[name] = outs[k]
                inputs = [self._arrays[name] for name, _ in captured.inputs]
        self._result = result
        return result

    @property
    def arrays(self) -> dict[str, Any]:
        """Name -> array: each parameter's bound array and, after a launch, ``result``."""
        named: dict[str, Any] = dict(self._arrays)
        if self._result is not None:
            named["result"] = self._result
        return named

    @property
    def inputs(self) -> tuple[tuple[str, Spec], ...]:
        """The parameters in order, each with the shape, dtype and device recorded."""
        return self._captured.inputs

    @property
    def captured(self) -> Captured:
        """The recorded graph (``vkml.trace``'s form of it)."""
        return self._captured

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

    def save(self, path: str | Path) -> list[Path]:
        """Write the graph as an ahead-of-time module (``vkml.aot``, docs/deploy.md): one
        function named after the builder, taking the builder's parameters by name and
        returning its result, compiled for the graph's device; realized tensors it reads
        (weights it closes over) go to an ``.irpa`` archive beside it. Returns the files
        written (each written whole or not at all).

        The module runs what one launch runs: device conditions and loops stay inside it.
        """
        device = self._captured.device
        if device is None:
            raise ValueError(f"{self.name}.save: the graph computes nothing; there is no module")
        artifact = Artifact(device, name=self.name).add_captured(self.name, self._captured)
        return artifact.save(path)

    # -- what was built ------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """Where the graph runs: the device's name and its IREE target."""
        device = self._captured.device
        target = getattr(device, "target", None)
        return f"{device} ({target.name})" if target is not None else str(device)

    @property
    def schedule(self) -> Schedule:
        """What one launch does: invocations, nodes, device conditions and loops in it."""
        nodes = self._captured.schedule
        pending = [n for n in nodes if not n._computed]
        every = [*pending, *(m for n in pending for m in region_nodes(n))]
        loops = [n for n in every if n.op == "while"]
        launched = 1 if self._captured.roots else 0
        device = self._captured.device
        queued = device is not None and device.queues_calls and not loops
        return Schedule(
            invocations_per_launch=launched,
            nodes=len(every),
            selects=sum(1 for n in every if n.op == "where"),
            loops=len(loops),
            forks=self._forks,
            syncs_per_launch=0 if queued else launched,
            launches=self._launches,
        )

    def __repr__(self) -> str:
        return f"Graph({self.name}, {self.schedule.nodes} nodes on {self.backend})"


@dataclass(frozen=True)
class Schedule:
    """``invocations_per_launch`` compiled calls, ``nodes`` recorded ops (inside loops and
    conditionals too), ``selects`` of which choose on the device (device conditions,
    predicated loop turns), ``loops`` on device conditions, ``forks`` recorded (their
    branches run side by side in the one invocation), ``syncs_per_launch`` host waits
    (one, the call's end, where the device does not queue calls; none for a launch queued on
    Vulkan, whose result is waited for where it is read; each loop adds one per
    ``turns_per_sync`` turns it runs: a number only the data decides), and how many
    ``launches`` have run."""

    invocations_per_launch: int
    nodes: int
    selects: int
    loops: int
    forks: int
    syncs_per_launch: int
    launches: int


class Builder:
    """A decorated builder function: call it with arrays to record a ``Graph``."""

    def __init__(
        self, fn: Callable[..., Any], turns_per_sync: int | None = None, record: bool = False,
        max_turns: int | None = None,
    ) -> None:  # fmt: skip
        self.fn = fn
        self.turns_per_sync = turns_per_sync
        self.record = record
        self.max_turns = max_turns
        self.recorded_fn = rewritten(fn)  # once: a second call does not parse again
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, buffer: str | Sequence[str] = (), **kwargs: Any) -> Graph:
        """Record the function on ``args`` (nothing runs). ``buffer`` names the parameters
        whose arrays the graph keeps across launches (``vkml.builder.buffer_params``)."""
        if kwargs:
            raise TypeError(f"{self.fn.__name__}: pass the arrays positionally")
        arrays = [a if isinstance(a, Tensor) else tensor(a) for a in args]
        with (
            recorder.recording(self.turns_per_sync, self.record, self.max_turns) as forks,
            printing_recorded(),
        ):
            captured = capture(self.recorded_fn, *arrays)
        names = [name for name, _ in captured.inputs]
        kept = (self.recorded_fn, self.turns_per_sync) if self.record else None
        arrays_by_name = dict(zip(names, arrays))
        return Graph(self.fn.__name__, captured, arrays_by_name, kept, buffer, len(forks))
