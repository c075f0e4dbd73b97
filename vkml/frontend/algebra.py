"""The tensor operations the ops' gradient rules use (``vkml.ops.spec.Algebra``), given by
the frontend's functions: rules build ordinary lazy ops, so a backward pass is more graph,
realized with the forward."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vkml.dtypes import DType
from vkml.frontend import ops, views
from vkml.frontend.creation import full
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node


class TensorAlgebra:
    """``vkml.ops.spec.Algebra`` over ``Tensor``."""

    def tensor(self, node: Node) -> Tensor:
        return Tensor(node)

    def where(self, cond: Tensor, a: Tensor | float, b: Tensor | float) -> Tensor:
        return ops.where(cond, a, b)

    def concatenate(self, parts: Sequence[Tensor], axis: int) -> Tensor:
        return views.concatenate(parts, axis)

    def full(self, shape: tuple[int, ...], value: float, dtype: DType, device: Any) -> Tensor:
        return full(shape, value, dtype, device)

    def unary(self, op: str, x: Tensor) -> Tensor:
        return ops.unary(op, x)


ALGEBRA = TensorAlgebra()
