"""The calling convention of a compiled module, written down: ``Abi``.

Built by the lowering (``vkml.compiler.lower.lower``) from what it emitted, never recovered
from the text afterwards. A module vkml compiles takes, in this order:

0. one 1-d table per dtype of the graph's Python numbers (its ``scalar`` nodes, grouped by
   ``scalar_tables``), each holding every distinct number once: a new number is new data,
   not a new module;
1. one argument per input (the graph's leaves, in schedule order);
2. with ``output_args``, one buffer per output, which the function writes its result into
   (``iree.abi.output``; Vulkan, so a result is read back by mapping, not copying);
2b. with ``stop``, a ``tensor<2xi32>`` of zeros that the caller may set to ones while the
   call runs: every device loop ends at its next turn (Ctrl-C, ``vkml.runtime.stop``);
3. with ``fence``, a last ``tensor<i32>`` holding 0: the operand that keeps a driver from
   folding float arithmetic (``FunctionBuilder._unfusable``, ADR 0009);
4. with ``transients``, a ``!hal.buffer`` for the values IREE keeps between dispatches
   (``iree.abi.transients``; the module's reflection says how large,
   ``iree.abi.transients.size.constant``): a queue allocation and a deallocation per call
   less, ~0.3-0.5 ms each on an H100 (ADR 0015);
5. with ``queued``, a wait fence and a signal fence (IREE's "coarse-fences" model, compiled
   for a ``Target.queued``): the call returns once its work is queued, and the signal fence
   is reached when it is done (ADR 0015: a synchronous call cost ~0.5 ms more on an H100);

and returns one tensor per output. The cache stores the manifest (``to_json``) inside each
entry beside the ``.vmfb`` bytes, so a module is never called with a convention other than
the one it was compiled for.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vkml.dtypes import DType, to_dtype
from vkml.errors import DTypeError
from vkml.graph.node import Node

# Bumped whenever the manifest's fields change meaning; a reader refuses other versions.
ABI_VERSION = 5


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """The dtype and shape of one argument or result."""

    dtype: DType
    shape: tuple[int, ...]

    def as_json(self) -> dict[str, Any]:
        return {"dtype": self.dtype.name, "shape": list(self.shape)}


@dataclass(frozen=True, slots=True)
class Abi:
    """How to call one compiled function: its name, inputs, outputs and trailing arguments."""

    function: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    output_args: bool = False
    fence: bool = False
    queued: bool = False
    transients: bool = False
    scalars: tuple[TensorSpec, ...] = ()  # the tables of Python numbers, before the inputs
    stop: bool = False

    @property
    def argument_count(self) -> int:
        """How many tensor arguments the function takes, the multiply fence included (the
        transient storage and the queue fences are not tensors)."""
        outputs = len(self.outputs) if self.output_args else 0
        return len(self.scalars) + len(self.inputs) + outputs + int(self.stop) + int(self.fence)

    def to_json(self) -> str:
        """The manifest: compact JSON with sorted keys, the same bytes for the same ABI."""
        return json.dumps(
            {
                "abi_version": ABI_VERSION,
                "function": self.function,
                "inputs": [s.as_json() for s in self.inputs],
                "outputs": [s.as_json() for s in self.outputs],
                "scalars": [s.as_json() for s in self.scalars],
                "stop": self.stop,
                "output_args": self.output_args,
                "fence": self.fence,
                "queued": self.queued,
                "transients": self.transients,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Abi:
        """Read a manifest written by ``to_json``.

        Raises:
            ValueError: the text is not such a manifest; the message names what is wrong.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"ABI manifest is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"ABI manifest must be a JSON object, got {type(data).__name__}")  # noqa: TRY004
        version = data.get("abi_version")
        if version != ABI_VERSION:
            raise ValueError(
                f"ABI manifest version {version!r} is not {ABI_VERSION}, the one this vkml "
                f"reads; recompile the module with this vkml"
            )
        try:
            return cls(
                function=_field(data, "function", str),
                inputs=tuple(_spec(s) for s in _field(data, "inputs", list)),
                outputs=tuple(_spec(s) for s in _field(data, "outputs", list)),
                scalars=tuple(_spec(s) for s in _field(data, "scalars", list)),
                stop=_field(data, "stop", bool),
                output_args=_field(data, "output_args", bool),
                fence=_field(data, "fence", bool),
                queued=_field(data, "queued", bool),
                transients=_field(data, "transients", bool),
            )
        except (TypeError, KeyError, DTypeError) as exc:
            raise ValueError(f"ABI manifest has a malformed tensor: {exc}") from exc


def scalar_tables(scalars: Sequence[Node]) -> list[tuple[DType, list[Node]]]:
    """The ``scalar`` nodes of a schedule (in schedule order) grouped into the tables a
    module takes them in: one per dtype, in the order each dtype first appears, holding each
    distinct number once (the first node that gives it), in order of first appearance."""
    tables: dict[DType, dict[str, Node]] = {}
    for node in scalars:
        tables.setdefault(node.dtype, {}).setdefault(_spelling(node), node)
    return [(dtype, list(entries.values())) for dtype, entries in tables.items()]


def table_entries(scalars: Sequence[Node]) -> dict[Node, tuple[int, int]]:
    """Each ``scalar`` node's (table, entry) in the layout of ``scalar_tables``."""
    tables = scalar_tables(scalars)
    index = {
        (dtype, _spelling(node)): (t, k)
        for t, (dtype, nodes) in enumerate(tables)
        for k, node in enumerate(nodes)
    }
    return {node: index[(node.dtype, _spelling(node))] for node in scalars}


def _spelling(node: Node) -> str:
    """A number as a table tells numbers apart: floats by ``float.hex`` (-0.0 is not 0.0)."""
    value = node.attr("value")
    return value.hex() if type(value) is float else repr(value)


def table_array(dtype: DType, nodes: Sequence[Node]) -> np.ndarray:
    """One table's values, rounded to ``dtype`` as a literal of the module would be
    (``vkml.dialect.types.literal``: a float through float64): the same bits as before
    numbers were inputs."""
    values = [node.attr("value") for node in nodes]
    if dtype.is_float:
        return np.array(values, dtype=np.float64).astype(dtype.numpy)
    return np.array(values, dtype=dtype.numpy)


def _field(data: dict[str, Any], name: str, kind: type) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise ValueError(f"ABI manifest field {name!r} must be a {kind.__name__}, got {value!r}")  # noqa: TRY004
    return value


def _spec(data: Any) -> TensorSpec:
    shape = data["shape"]
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise TypeError(f"shape {shape!r} is not a list of non-negative integers")
    return TensorSpec(to_dtype(data["dtype"]), tuple(shape))
