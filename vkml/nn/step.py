"""A training step recorded once and replayed: ``Optimizer.compile_step``.

``opt.step(closure)`` is already one invocation, but each call builds the step's graph again
in Python (the forward, autograd's backward, the update), walks it to find its structure and
only then finds the compiled executable in memory. For a small model that Python work costs
more than the invocation. A ``CompiledStep`` does it once: its first call captures the
step (``vkml.trace.capture``: the graph ``opt.step(closure)`` would realize, built on input
placeholders for the batch, with the loss and every new state value as outputs), then sorts
the captured graph's arguments into three kinds:

* **batch**: the inputs, the tensors passed to the call, in argument order;
* **state**: the nodes the parameters, the optimiser's state and learning rate, and any
  deferred state (a dropout key) held when the step began;
* **constants**: everything else the loss reads (a tensor captured by ``loss_fn``).

Every call, the first included, is then the same: one invocation of the captured graph on
the batch's storage and the state's current storage, and the state rebound to its results.

Later calls with batches of the same shapes, dtypes and device hand the new batch's storage
and the state's *current* storage to the recorded invocation and rebind the state to its
results: no node is built and no graph is walked. What that assumes, as ``jax.jit`` does:
``loss_fn`` computes the same graph each time (Python control flow is decided at the first
call, and a module's train/eval mode is read then), and tensors it captures are constants.
A new batch signature records again; a state tensor whose shape or dtype changed
(``load_state_dict`` of another model) is refused with the remedy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from vkml.devices.realize import realize_nodes
from vkml.errors import DeviceError, ShapeError
from vkml.frontend.creation import tensor
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node
from vkml.nn.module import materialize
from vkml.trace.capture import Captured, capture


@runtime_checkable
class Optimizer(Protocol):
    """What a compiled step uses of its optimiser (``vkml.nn.optim.Optimizer``, which makes
    compiled steps, so this module does not import it)."""

    params: list[Tensor]
    state: list[dict[str, Tensor]]
    shared: dict[str, Tensor]
    steps: int
    device: Any
    _lr: Tensor

    def _build(
        self, closure: Callable[[], Tensor] | None
    ) -> tuple[Tensor | None, list[tuple[Tensor, Tensor]], dict[Node, Tensor]]: ...


Signature = tuple[tuple[tuple[int, ...], str], ...]

# how a recorded input is found at each call: (BATCH, i) the i-th argument, (STATE, tensor)
# a state handle's current node, (CONST, node) the node captured when recording
BATCH, STATE, CONST = 0, 1, 2


class Recording:
    """One captured step: the graph, where each argument comes from (``inputs``: ``(BATCH, i)``,
    ``(STATE, handle)`` or ``(CONST, node)`` per argument), and the state handle each result
    after the loss is rebound to (``outputs``)."""

    __slots__ = ("captured", "inputs", "outputs")

    def __init__(
        self, captured: Captured, inputs: list[tuple[int, Any]], outputs: list[Tensor]
    ) -> None:
        self.captured = captured
        self.inputs = inputs  # where each argument's storage comes from, in calling order
        self.outputs = outputs  # the handle each result after the loss is rebound to


class CompiledStep:
    """``opt.compile_step(loss_fn)``: call it with a batch, get the loss (realized).

    Each call is one invocation, the same as ``opt.step(lambda: loss_fn(*batch))`` computes,
    bit for bit; from the second call with a batch signature on, without building a graph.
    """

    def __init__(self, optimizer: Optimizer, loss_fn: Callable[..., Tensor]) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"CompiledStep: optimizer must be a vkml.nn optimiser (SGD, Adam, AdamW), got "
                f"{type(optimizer).__name__}; make a step with opt.compile_step(loss_fn)"
            )
        if not callable(loss_fn):
            raise TypeError(f"compile_step: loss_fn must be callable, got {type(loss_fn).__name__}")
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self._recordings: dict[Signature, Recording] = {}

    @property
    def recordings(self) -> int:
        """How many batch signatures have been recorded (each compiled once)."""
        return len(self._recordings)

    def __call__(self, *batch: Any) -> Tensor:
        args = [self._as_tensor(i, b) for i, b in enumerate(batch)]
        signature = tuple((a.shape, a.dtype.name) for a in args)
        recording = self._recordings.get(signature)
        if recording is None:
            recording = self._record(args)
            self._recordings[signature] = recording
        return self._replay(recording, args)

    # -- recording ---------------------------------------------------------------------------
    def record(self, *batch: Any) -> Recording:
        """The step captured for batches like ``batch`` (tensors, NumPy arrays or
        ``vkml.spec``), without running it: what ``vkml.aot.export`` exports."""
        return self._record(list(batch))

    def state_names(self, names: Mapping[Node, str] | None = None) -> dict[int, str]:
        """A name for each state handle, by ``id``: a parameter's from ``names`` (a node ->
        name map, such as a module's parameter names) or ``param{i}``, its optimiser state
        ``{parameter}.{key}``, shared state by its key, the learning rate ``lr``."""
        opt = self.optimizer
        names = names or {}
        found: dict[int, str] = {id(opt._lr): "lr"}
        for key, t in opt.shared.items():
            found[id(t)] = key
        for i, (p, state) in enumerate(zip(opt.params, opt.state)):
            pname = names.get(p._node, f"param{i}")
            found[id(p)] = pname
            for key, t in state.items():
                found[id(t)] = f"{pname}.{key}"
        return found

    def _record(self, args: list[Any]) -> Recording:
        opt = self.optimizer
        held = {t._node: t for t in self._state_handles()}
        outputs: list[Tensor] = []
        deferred: dict[Node, Tensor] = {}

        def training_step(*batch: Tensor) -> list[Tensor]:
            loss, rebound, later = opt._build(lambda: self.loss_fn(*batch))
            if loss is None:
                raise ValueError("compile_step: loss_fn returned None; it must return the loss")
            deferred.update(later)
            new_values = [loss]
            for t, new in rebound:
                if new._node.computed:
                    if held.get(new._node) is t:
                        continue  # unchanged by the step
                    raise ValueError(
                        "compile_step: the optimiser's new value of a state tensor is another "
                        "tensor's value, which a replay cannot follow; use opt.step(closure)"
                    )
                outputs.append(t)
                new_values.append(new)
            return new_values

        try:
            captured = capture(training_step, *args)  # inputs named batch0, batch1, ...
        finally:
            # capturing ran the forward, which moved each deferred handle (a dropout key) to
            # its advanced value: the graph reads the value before, and so does the call
            for before, t in deferred.items():
                t._rebind(before)
        inputs: list[tuple[int, Any]] = []
        for argument in captured.arguments:
            leaf = argument.node
            if argument.input is not None:
                inputs.append((BATCH, argument.input))
            elif leaf in held or leaf in deferred:
                inputs.append((STATE, held[leaf] if leaf in held else deferred[leaf]))
            else:
                inputs.append((CONST, leaf))
        return Recording(captured, inputs, outputs)

    def _state_handles(self) -> list[Tensor]:
        opt = self.optimizer
        handles = [*opt.params, *opt.shared.values(), opt._lr]
        for state in opt.state:
            handles += state.values()
        return handles

    # -- replaying ---------------------------------------------------------------------------
    def _replay(self, recording: Recording, args: list[Tensor]) -> Tensor:
        captured = recording.captured
        storages = []
        for (kind, source), argument in zip(recording.inputs, captured.arguments):
            leaf = argument.node
            if kind == BATCH:
                node = args[source]._node
                realize_nodes([node])  # a lazy batch: one realize first
            elif kind == STATE:
                node = source._node
                if node.shape != leaf.shape or node.dtype is not leaf.dtype:
                    raise ShapeError(
                        f"compile_step: a state tensor changed from {leaf.dtype.name}"
                        f"{list(leaf.shape)} to {node.dtype.name}{list(node.shape)} since the "
                        "step was recorded; make a new optimiser and compile_step for it"
                    )
                if not node._computed:  # set lazily since the last step: one realize first
                    materialize([source])
                    node = source._node
            else:
                node = source
            storages.append(node._storage)
        results = captured.run(storages)
        device = self.optimizer.device
        outputs = captured.outputs
        for t, (_, root), storage in zip(recording.outputs, outputs[1:], results[1:]):
            t._rebind(Node("data", root.dtype, root.shape, (), (), device, storage))
        self.optimizer.steps += 1
        loss = outputs[0][1]
        return Tensor(Node("data", loss.dtype, loss.shape, (), (), device, results[0]))

    def _as_tensor(self, i: int, value: Any) -> Tensor:
        device = self.optimizer.device
        if isinstance(value, Tensor):
            if value.device is not device:
                raise DeviceError(
                    f"compile_step: batch argument {i} is on {value.device}, the parameters on "
                    f"{device}; move it with .to('{device}')"
                )
            return value
        if isinstance(value, np.ndarray):
            return tensor(value, device=device)
        raise TypeError(
            f"compile_step: batch argument {i} must be a vkml Tensor or a NumPy array, got "
            f"{type(value).__name__}"
        )
