"""TensorBase: a handle to a graph node, with what can be read from the node alone.

The frontend's op functions (``ops``, ``views``) take tensors, nodes and Python scalars as
operands and record nodes; they read an operand's node through this class and never need the
full ``Tensor`` (``vkml.frontend.tensor``), which is built on them. So the frontend's imports
point one way: nodes, then ops, then ``Tensor``, then the public functions.
"""

from __future__ import annotations

import math
from typing import Any

from vkml.dtypes import DType
from vkml.graph.node import Node


class TensorBase:
    """A node and the gradient bookkeeping of the tensor that holds it."""

    __slots__ = ("__weakref__", "_grad", "_node", "_requires_grad")

    def __init__(self, node: Node) -> None:
        self._node = node
        self._grad: TensorBase | None = None
        self._requires_grad = False  # True only on a leaf: see vkml.frontend.grad_mode

    def _rebind(self, node: Node) -> None:
        """Point this handle at another node.

        The one way a tensor changes after it is made, and only for the handles ``vkml.nn``
        updates in place, as ``torch.nn.Parameter`` is: a module's parameters (a training
        step, ``to(device)``, ``load_state_dict``), an optimiser's state and a dropout key.
        A node never changes; every other tensor keeps its node for life.
        """
        self._node = node

    @property
    def node(self) -> Node:
        """The graph node this tensor is a handle to."""
        return self._node

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def dtype(self) -> DType:
        return self._node.dtype

    @property
    def device(self) -> Any:
        return self._node.device

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return math.prod(self._node.shape)
