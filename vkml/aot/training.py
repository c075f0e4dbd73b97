"""A compiled training step as an exported function: the batch and the state in, the loss and
the new state out, so a training loop can run from C or ``iree-run-module``.

The state is what ``opt.compile_step`` rebinds after each step: the parameters, the
optimiser's state and learning rate, and deferred state such as a dropout key. Its arguments
follow the batch, named after the parameters (``weights=`` names them: ``0.weight``,
``0.weight.momentum_buffer``, ``lr``, ...); the outputs are ``loss`` and then every state value
the step changes, under the same name as its argument and in the same order, so a caller feeds
each output back into the argument of its name.
"""

from __future__ import annotations

from vkml.aot.plan import Plan
from vkml.graph.node import Node
from vkml.nn.step import BATCH, STATE, CompiledStep
from vkml.trace.capture import parameter_names
from vkml.trace.input_spec import Spec


def step_plan(step: CompiledStep, specs: list[Spec], names: dict[Node, str]) -> Plan:
    """The plan of ``step`` captured on batches of ``specs``; ``names`` names realized nodes
    (a module's parameters and buffers)."""
    recording = step.record(*specs)
    captured = recording.captured
    batch = parameter_names(step.loss_fn, len(specs))
    state_names = step.state_names(names)
    arguments: dict[Node, str] = {}
    state: list[tuple[Node, object]] = []
    for (kind, source), argument in zip(recording.inputs, captured.arguments):
        if kind == BATCH:
            arguments[argument.node] = batch[source]
        elif kind == STATE:
            name = state_names.get(id(source)) or names.get(argument.node) or f"state{len(state)}"
            arguments[argument.node] = name
            state.append((argument.node, source))
    updated = {id(t): 1 + k for k, t in enumerate(recording.outputs)}
    outputs = [("loss", 0)]
    outputs += [(arguments[node], updated[id(t)]) for node, t in state if id(t) in updated]
    return Plan(captured, arguments, tuple(outputs), "tuple")
