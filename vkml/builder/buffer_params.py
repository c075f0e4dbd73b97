"""Buffers: builder parameters whose arrays the graph keeps across launches.

``g = step(x, v, buffer=("x", "v"))`` makes ``x`` and ``v`` buffers: each launch computes from
the arrays the graph holds for them and leaves the function's new value of each there, so
``g(n)`` advances a simulation ``n`` steps with no readback between launches. The function
returns each buffer's new value: under its name in a returned dict, else at its position in
``buffer`` among the returned tuple's or list's first values (or as the one value it returns,
for one buffer). The caller's arrays are never changed: tensors are immutable, and the graph
only rebinds its own names (``g.arrays`` shows the values now; ``g.bind`` sets them again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkml.errors import ShapeError
from vkml.frontend.tensor import Tensor
from vkml.trace.capture import Captured


def feeds(captured: Captured, buffer: str | Sequence[str]) -> tuple[tuple[str, int], ...]:
    """For each buffer, its parameter name and the index of the output that feeds it."""
    names = (buffer,) if isinstance(buffer, str) else tuple(buffer)
    params = dict(captured.inputs)
    where = f"{captured.name}: buffer="
    for name in names:
        if not isinstance(name, str) or name not in params:
            raise TypeError(f"{where} names {name!r}, not a parameter ({', '.join(params)})")
    if len(set(names)) != len(names):
        raise TypeError(f"{where} names a parameter twice: {names}")
    outputs = [name for name, _ in captured.outputs]
    found = []
    for i, name in enumerate(names):
        k = _output_for(captured, outputs, names, i)
        spec, node = params[name], captured.outputs[k][1]
        if node.shape != spec.shape or node.dtype is not spec.dtype:
            raise ShapeError(
                f"{where}{name!r}: the new value is {node.dtype.name}{list(node.shape)}, the "
                f"parameter {spec}; a buffer keeps its shape and dtype across launches"
            )
        found.append((name, k))
    return tuple(found)


def _output_for(captured: Captured, outputs: list[str], names: tuple[str, ...], i: int) -> int:
    name = names[i]
    if captured.structure == "dict":
        if name not in outputs:
            raise ShapeError(
                f"{captured.name}: buffer {name!r} needs its new value in the returned dict "
                f"under the key {name!r}"
            )
        return outputs.index(name)
    if captured.structure == "one" and len(names) > 1:
        raise ShapeError(
            f"{captured.name}: {len(names)} buffers, one value returned; return the new value "
            f"of each buffer ({', '.join(names)}) first, in that order"
        )
    if i >= len(outputs):
        raise ShapeError(
            f"{captured.name}: buffer {name!r} is number {i + 1}, the function returns "
            f"{len(outputs)} values; return each buffer's new value first, in buffer= order"
        )
    return i


def outputs_of(result: Any) -> list[Tensor]:
    """A launch's result as its list of output tensors, in ``Captured.outputs`` order."""
    if isinstance(result, Tensor):
        return [result]
    return list(result.values()) if isinstance(result, dict) else list(result)
