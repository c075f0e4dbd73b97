"""The tensor operations the ops' gradient rules use (``vkml.ops.spec.Algebra``), over a
tensor class: rules build ordinary lazy ops, so a backward pass is more graph, realized with
the forward. ``vkml.frontend.autograd`` makes one over the class of the tensor it
differentiates (``Tensor``), so this module does not import that class."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from vkml.dtypes import DType
from vkml.frontend import elementwise, indexing, views
from vkml.frontend.base import TensorBase
from vkml.frontend.host import full_node
from vkml.frontend.record import record
from vkml.graph.node import Node

T = TypeVar("T", bound=TensorBase)


class TensorAlgebra(Generic[T]):
    """``vkml.ops.spec.Algebra`` whose values are tensors of class ``cls``."""

    def __init__(self, cls: type[T]) -> None:
        self.cls = cls

    def tensor(self, node: Node) -> T:
        return self.cls(node)

    def where(self, cond: T, a: T | float, b: T | float) -> T:
        return self.cls(elementwise.where(cond, a, b))

    def concatenate(self, parts: Sequence[T], axis: int) -> T:
        return self.cls(views.concatenate(parts, axis))

    def full(self, shape: tuple[int, ...], value: float, dtype: DType, device: Any) -> T:
        return self.cls(full_node(shape, value, dtype, device))

    def unary(self, op: str, x: T) -> T:
        return self.cls(record(op, x))

    def take_along_axis(self, x: T, indices: T, axis: int) -> T:
        return self.cls(indexing.take_along_axis(x, indices, axis))

    def scatter_add(self, g: T, indices: T, axis: int, size: int) -> T:
        return self.cls(indexing.scatter_add(g, indices, axis, size))

    def index_at(self, x: T, pos: T, axis: int) -> T:
        return self.cls(views.index_at(x, pos, axis))

    def place_at(self, g: T, pos: T, axis: int, size: int) -> T:
        return self.cls(indexing.place_at(g, pos, axis, size))

    def conv(self, x: T, w: T, **window: Any) -> T:
        return self.cls(record("conv", x, w, **window))
