"""Tensor: a handle to a graph node. Operations record nodes; observing a value realizes."""

from __future__ import annotations

from typing import Any

import numpy as np

from vkml.dtypes import DType
from vkml.errors import ShapeError
from vkml.frontend.unary_methods import UnaryMethods
from vkml.graph.node import Node
from vkml.frontend.realize import realize_nodes


class Tensor(UnaryMethods):
    """A lazy n-dimensional array on one device.

    Arithmetic, comparisons, reductions and views build graph nodes and return new tensors;
    nothing runs until a value is observed (``numpy()``, ``item()``, ``tolist()``, printing)
    or ``realize()`` is called. A tensor never changes after it is made.
    """

    __slots__ = ("__weakref__", "_grad", "_node", "_requires_grad")
    __array_priority__ = 1000  # so ``ndarray + Tensor`` defers to Tensor.__radd__

    def __init__(self, node: Node) -> None:
        self._node = node
        self._grad: Tensor | None = None
        self._requires_grad = False  # True only on a leaf: see vkml.frontend.autograd
        if _autograd.NO_GRAD_ACTIVE:
            _autograd.on_new_tensor(node)

    # -- what it is -------------------------------------------------------------------------
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
        n = 1
        for d in self._node.shape:
            n *= d
        return n

    @property
    def node(self) -> Node:
        """The graph node this tensor is a handle to."""
        return self._node

    @property
    def is_realized(self) -> bool:
        return self._node.computed

    # -- gradients (vkml.frontend.autograd) ------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor: a leaf marked ``requires_grad_()``, or a
        tensor computed from one (outside ``no_grad()``)."""
        return _autograd.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        _autograd.set_requires_grad(self, flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this tensor a leaf that ``backward()`` stores a ``.grad`` on; returns it.

        Raises:
            DTypeError: the tensor is not floating-point.
        """
        return _autograd.set_requires_grad(self, requires_grad)

    @property
    def is_leaf(self) -> bool:
        """True for a tensor marked ``requires_grad_()``, whose ``.grad`` backward fills."""
        return self._requires_grad

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward()`` accumulated here (realized, no history), or None."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and (value.shape != self.shape or value.dtype is not self.dtype):
            raise ShapeError(
                f".grad must match the tensor: {self.dtype}{self.shape}, got "
                f"{value.dtype}{value.shape}"
            )
        self._grad = value

    def backward(self, grad: Any = None) -> None:
        """Add the gradient of this tensor to the ``.grad`` of every leaf it depends on.

        The forward, the backward and the accumulation realize as one invocation.

        Args:
            grad: the gradient with respect to this tensor; may be left out only when it
                has one element (then it is 1).

        Raises:
            ShapeError: more than one element and no ``grad``, or ``grad`` of another shape.
            DTypeError: the tensor is not floating-point.
        """
        _autograd.backward(self, grad)

    def detach(self) -> Tensor:
        """The same value as a tensor that gradients do not flow through."""
        return _autograd.detached(self)

    # -- observing --------------------------------------------------------------------------
    def realize(self) -> Tensor:
        """Compute this tensor now (one invocation for its whole pending graph); return it."""
        realize_nodes([self._node])
        return self

    def numpy(self, copy: bool = True) -> np.ndarray:
        """The value as a NumPy array, realizing first if needed.

        Args:
            copy: True (default) gives a new, writable array. False gives a read-only array
                over the device's memory where the device allows it (cpu, reference): no
                copy, which saves time and memory on large results.
        """
        node = self._node
        realize_nodes([node])
        return node.device.download(node.storage, node.dtype, copy)

    def item(self) -> bool | int | float:
        """The value of a one-element tensor as a Python scalar."""
        if self.size != 1:
            raise ShapeError(
                f"item() needs a tensor with exactly one element, got shape {self.shape} "
                f"({self.size} elements); index or reduce it first"
            )
        return self.numpy().reshape(()).item()

    def tolist(self) -> Any:
        """The value as (nested) Python lists of Python scalars."""
        return self.numpy().tolist()

    def to(self, device: Any) -> Tensor:
        """An explicit copy on ``device`` (a Device or its name). The only way across."""
        from vkml.frontend.creation import copy_to

        return copy_to(self, device)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ShapeError(
                f"the truth value of a tensor with {self.size} elements is ambiguous; "
                f"use .any() or .all() style reductions (amax/amin) first"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_float or self.dtype.kind == "bool":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):  # type: ignore[no-untyped-def]
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        node = self._node
        if not node.computed:
            return (
                f"Tensor(<lazy {node.op}>, shape={node.shape}, dtype={node.dtype.name}, "
                f"device={node.device})"
            )
        body = np.array2string(node.device.download(node.storage, node.dtype), separator=", ")
        return f"Tensor({body}, dtype={node.dtype.name}, device={node.device})"

    def __str__(self) -> str:
        self.realize()
        return repr(self)

    __hash__ = object.__hash__

    # -- arithmetic and comparison operators ------------------------------------------------
    def __add__(self, other: Any) -> Tensor:
        return _ops.binary("add", self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.binary("add", other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.binary("sub", self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.binary("sub", other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.binary("mul", self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.binary("mul", other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.binary("div", self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.binary("div", other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.binary("pow", self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.binary("pow", other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.unary("neg", self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.unary("abs", self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.compare("eq", self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.compare("ne", self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.compare("lt", self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.compare("le", self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.compare("gt", self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.compare("ge", self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return _views.getitem(self, index)

    # -- methods NumPy and PyTorch users expect ---------------------------------------------
    # (the unary elementwise ones, exp() to sign(), come from UnaryMethods, generated from
    # the op definitions)
    def _unary(self, op: str) -> Tensor:
        return _ops.unary(op, self)

    def astype(self, dtype: Any) -> Tensor:
        return _ops.astype(self, dtype)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return _ops.clip(self, min, max)

    def maximum(self, other: Any) -> Tensor:
        return _ops.binary("maximum", self, other)

    def minimum(self, other: Any) -> Tensor:
        return _ops.binary("minimum", self, other)

    def matmul(self, other: Tensor) -> Tensor:
        return _ops.matmul(self, other)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.sum(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.mean(self, axis, keepdims)

    def amax(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.amax(self, axis, keepdims)

    def amin(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.amin(self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.amax(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.amin(self, axis, keepdims)

    def argmax(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        return _ops.argmax(self, axis, keepdims)

    def argmin(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        return _ops.argmin(self, axis, keepdims)

    def softmax(self, axis: int = -1) -> Tensor:
        return _ops.softmax(self, axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return _ops.log_softmax(self, axis)

    def reshape(self, *shape: Any) -> Tensor:
        return _views.reshape(self, *shape)

    def transpose(self, *axes: Any) -> Tensor:
        return _views.transpose(self, *axes)

    def permute(self, *dims: Any) -> Tensor:
        return _views.permute(self, *dims)

    def broadcast_to(self, *shape: Any) -> Tensor:
        return _views.broadcast_to(self, *shape)

    def expand(self, *sizes: Any) -> Tensor:
        return _views.expand(self, *sizes)

    def squeeze(self, axis: Any = None) -> Tensor:
        return _views.squeeze(self, axis)

    def unsqueeze(self, axis: int) -> Tensor:
        return _views.unsqueeze(self, axis)

    @property
    def T(self) -> Tensor:  # noqa: N802
        return _views.transpose(self)


# Placed last: ops and views build Tensors, and Tensor's methods call them.
from vkml.frontend import autograd as _autograd  # noqa: E402
from vkml.frontend import ops as _ops  # noqa: E402
from vkml.frontend import views as _views  # noqa: E402
