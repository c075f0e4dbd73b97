"""The calling convention of a compiled module, written down: ``Abi``.

Built by the lowering (``vkml.compiler.lower.lower``) from what it emitted, never recovered
from the text afterwards. A module vkml compiles takes, in this order:

1. one argument per input (the graph's leaves, in schedule order);
2. with ``output_args``, one buffer per output, which the function writes its result into
   (``iree.abi.output``; Vulkan, so a result is read back by mapping, not copying);
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
from dataclasses import dataclass
from typing import Any

from vkml.dtypes import DType, to_dtype
from vkml.errors import DTypeError

# Bumped whenever the manifest's fields change meaning; a reader refuses other versions.
ABI_VERSION = 3


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

    @property
    def argument_count(self) -> int:
        """How many tensor arguments the function takes, the multiply fence included (the
        transient storage and the queue fences are not tensors)."""
        return len(self.inputs) + (len(self.outputs) if self.output_args else 0) + int(self.fence)

    def to_json(self) -> str:
        """The manifest: compact JSON with sorted keys, the same bytes for the same ABI."""
        return json.dumps(
            {
                "abi_version": ABI_VERSION,
                "function": self.function,
                "inputs": [s.as_json() for s in self.inputs],
                "outputs": [s.as_json() for s in self.outputs],
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
                output_args=_field(data, "output_args", bool),
                fence=_field(data, "fence", bool),
                queued=_field(data, "queued", bool),
                transients=_field(data, "transients", bool),
            )
        except (TypeError, KeyError, DTypeError) as exc:
            raise ValueError(f"ABI manifest has a malformed tensor: {exc}") from exc


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
