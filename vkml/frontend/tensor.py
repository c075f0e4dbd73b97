"""Tensor: a handle to a graph node. Operations record nodes; observing a value realizes.

The methods call the frontend's op functions (``ops``, ``views``), which record nodes, and
wrap the node they return (``wrap``); the gradient methods call ``autograd``. None of those
modules imports this one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vkml.devices.realize import prints_recorded, realize_nodes
from vkml.dtypes import DTYPE_NAMES, DType
from vkml.errors import DeviceError, DTypeError, GradientError, ShapeError
from vkml.frontend import (
    autograd,
    elementwise,
    grad_mode,
    indexing,
    reductions,
    sorting,
    statistics,
    updates,
    views,
)
from vkml.frontend.dlpack import export_capsule
from vkml.frontend.eager import is_eager
from vkml.frontend.extremes import Selections
from vkml.frontend.host import copy_node
from vkml.frontend.host_values import HostValues
from vkml.frontend.namespace import array_namespace
from vkml.frontend.numpy_calls import numpy_operand
from vkml.frontend.op_methods import OpMethods
from vkml.frontend.operators import Operators
from vkml.graph.node import Node, is_placeholder


def wrap(node: Node, *operands: Any) -> Tensor:
    """The tensor of a node an op function returned: the operand itself when the op changed
    nothing (``x.reshape(x.shape) is x``), else a new tensor."""
    for x in operands:
        for t in x if isinstance(x, (list, tuple)) else (x,):
            if isinstance(t, Tensor) and t._node is node:
                return t
    return Tensor(node)


class Tensor(Operators, OpMethods, Selections, HostValues):
    """A lazy n-dimensional array on one device.

    Arithmetic, comparisons, reductions and views build graph nodes and return new tensors;
    nothing runs until a value is observed (``numpy()``, ``item()``, ``tolist()``, printing)
    or ``realize()`` is called. A tensor keeps its node for life; only the handles a training
    step updates in place (``vkml.nn`` parameters and optimiser state) are rebound, through
    ``TensorBase._rebind``.
    """

    __slots__ = ()
    __array_priority__ = 1000  # so ``ndarray + Tensor`` defers to Tensor.__radd__

    def __init__(self, node: Node) -> None:
        """The handle of ``node``; in eager mode a pending node is realized now, so a
        run-time error surfaces at the op that caused it."""
        # TensorBase's fields set here rather than through super().__init__: a tensor is
        # made for every op, and the extra call was a tenth of the cost (benchmark 1)
        self._node = node
        self._grad = None
        self._requires_grad = False
        if grad_mode.NO_GRAD_ACTIVE:
            grad_mode.on_new_tensor(node)
        if not node._computed and is_eager():
            realize_nodes([node])

    @property
    def is_realized(self) -> bool:
        """Whether the tensor holds its value (an input placeholder of a function being
        captured holds none)."""
        return self._node.computed and not is_placeholder(self._node)

    # -- gradients (vkml.frontend.autograd) ------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor: a leaf marked ``requires_grad_()``, or a
        tensor computed from one (outside ``no_grad()``)."""
        return grad_mode.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        grad_mode.set_requires_grad(self, flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this tensor a leaf that ``backward()`` stores a ``.grad`` on; returns it.

        Raises:
            DTypeError: the tensor is not floating-point.
        """
        grad_mode.set_requires_grad(self, requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for a tensor marked ``requires_grad_()``, whose ``.grad`` backward fills."""
        return self._requires_grad

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward()`` accumulated here (realized, no history), or None."""
        return self._grad  # type: ignore[return-value]  # autograd stores tensors of our class

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise DTypeError(f".grad must be a vkml.Tensor or None, got {type(value).__name__}")
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
        autograd.backward(self, grad)

    def detach(self) -> Tensor:
        """The same value as a tensor that gradients do not flow through."""
        return autograd.detached(self)

    # -- observing --------------------------------------------------------------------------
    def realize(self) -> Tensor:
        """Compute this tensor now (one invocation for its whole pending graph); return it."""
        realize_nodes([self._node])
        return self

    def to(self, device: Any) -> Tensor:
        """An explicit copy on ``device`` (a Device or its name). The only way across."""
        if isinstance(device, DType) or (isinstance(device, str) and device in DTYPE_NAMES):
            raise DeviceError(
                f"'to' moves a tensor to a device, and {device!r} is a dtype; convert with "
                f"x.astype({device!r})"
            )
        return wrap(copy_node(self._node, device), self)

    def __dlpack__(
        self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:  # fmt: skip
        """The tensor as a DLPack capsule (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``),
        realizing first: its memory, shared read-only, on ``cpu`` and ``reference``; a host
        copy for ``copy=True`` and for a Vulkan tensor when the consumer asks for the host
        (``dl_device=(1, 0)``). ``stream`` is unused: the value is complete when realize
        returns."""
        node = self._node
        realize_nodes([node])
        return export_capsule(node, max_version, dl_device, copy)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The Array API namespace of vkml tensors, ``vkml.array_api``."""
        return array_namespace(api_version)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """The Array API's spelling of ``to``: a copy on ``device`` (``stream`` is unused)."""
        return self.to(device)

    def __dlpack_device__(self) -> tuple[int, int]:
        """DLPack's (device type, id): (1, 0), the host, for ``cpu`` and ``reference``;
        (7, N), Vulkan, for ``vulkan:N``."""
        return self._node.device.dlpack_device()

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value``: this handle now holds ``x.at[key].set(value)`` (a new value:
        tensors made from x before, its views included, keep the old one, where NumPy's
        views would see the change). Refused for a leaf that requires grad, as PyTorch
        refuses an in-place change of one."""
        if self.is_leaf:
            raise GradientError(
                "x[...] = value on a leaf tensor that requires grad would lose its gradient; "
                "write y = x.at[index].set(value), or assign under vkml.no_grad() to a copy"
            )
        self._rebind(updates.update("set", self, key, value))

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
        if not node.computed or is_placeholder(node):
            what = f"input {node.attr('name')!r}" if is_placeholder(node) else f"lazy {node.op}"
            return (
                f"Tensor(<{what}>, shape={node.shape}, dtype={node.dtype.name}, "
                f"device={node.device})"
            )
        body = np.array2string(node.device.download(node.storage, node.dtype), separator=", ")
        return f"Tensor({body}, dtype={node.dtype.name}, device={node.device})"

    def __str__(self) -> str:
        if not prints_recorded():  # a builder's recording prints what a tensor stands for
            self.realize()
        return repr(self)

    __hash__ = object.__hash__

    # -- operators (the rest come from Operators) -------------------------------------------
    def __matmul__(self, other: Any) -> Tensor:
        return wrap(reductions.matmul(self, other), self)

    def __rmatmul__(self, other: Any) -> Tensor:
        return wrap(reductions.matmul(other, self), self)

    def __getitem__(self, index: Any) -> Tensor:
        return wrap(indexing.getitem(self, index), self)

    @property
    def at(self) -> updates.At:
        """JAX's functional updates: ``x.at[index].set(v)``, ``.add(v)``, ``.max(v)``,
        ``.min(v)``, ``.get()``, each a new tensor (``vkml.frontend.updates``)."""
        return updates.At(self)

    # -- methods NumPy and PyTorch users expect ---------------------------------------------
    # (those of the ops with a public spelling, exp() to sum() and argmax(), come from
    # OpMethods, generated from the op definitions)
    def _of(self, node: Node) -> Tensor:
        return Tensor(node)

    def astype(self, dtype: Any) -> Tensor:
        return wrap(elementwise.astype(self, dtype), self)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return wrap(elementwise.clip(self, min, max), self)

    def matmul(self, other: Tensor) -> Tensor:
        return wrap(reductions.matmul(self, other), self)

    # ``dtype`` and ``out`` are there for NumPy, whose np.cumsum(t) calls
    # t.cumsum(axis=.., dtype=.., out=..): a result is a new tensor, so ``out`` must be None
    def cumsum(self, axis: int | None = None, *, dtype: Any = None, out: None = None) -> Tensor:
        return wrap(reductions.cumsum(numpy_operand("cumsum", self, dtype, out), axis), self)

    def mean(self, axis: Any = None, keepdims: bool = False, *, dtype: Any = None,
             out: None = None) -> Tensor:  # fmt: skip
        x = numpy_operand("mean", self, dtype, out)
        return wrap(reductions.mean(x, axis, keepdims), self)

    def var(self, axis: Any = None, keepdims: bool = False, *, correction: float = 0,
            ddof: float | None = None, dtype: Any = None, out: None = None) -> Tensor:  # fmt: skip
        x = numpy_operand("var", self, dtype, out)
        return wrap(statistics.var(x, axis, keepdims, correction, ddof), self)

    def std(self, axis: Any = None, keepdims: bool = False, *, correction: float = 0,
            ddof: float | None = None, dtype: Any = None, out: None = None) -> Tensor:  # fmt: skip
        x = numpy_operand("std", self, dtype, out)
        return wrap(statistics.std(x, axis, keepdims, correction, ddof), self)

    def any(self, axis: Any = None, keepdims: bool = False, *, out: None = None) -> Tensor:
        x = numpy_operand("any", self, None, out)
        return wrap(statistics.any(x, axis, keepdims), self)

    def all(self, axis: Any = None, keepdims: bool = False, *, out: None = None) -> Tensor:
        x = numpy_operand("all", self, None, out)
        return wrap(statistics.all(x, axis, keepdims), self)

    def isnan(self) -> Tensor:
        return wrap(statistics.isnan(self), self)

    def isinf(self) -> Tensor:
        return wrap(statistics.isinf(self), self)

    def isfinite(self) -> Tensor:
        return wrap(statistics.isfinite(self), self)

    def sort(self, axis: int = -1, descending: bool = False) -> Tensor:
        return wrap(sorting.sort(self, axis, descending), self)

    def argsort(self, axis: int = -1, descending: bool = False) -> Tensor:
        return wrap(sorting.argsort(self, axis, descending), self)

    def softmax(self, axis: int = -1) -> Tensor:
        return wrap(reductions.softmax(self, axis), self)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return wrap(reductions.log_softmax(self, axis), self)

    def reshape(self, *shape: Any) -> Tensor:
        return wrap(views.reshape(self, *shape), self)

    def view(self, *shape: Any) -> Tensor:
        """PyTorch's ``view``: ``reshape`` (tensors are immutable, so a view and a copy are
        one thing), or, given one dtype, ``bitcast`` to it."""
        if len(shape) == 1 and (isinstance(shape[0], (DType, str)) or hasattr(shape[0], "kind")):
            return wrap(elementwise.bitcast(self, shape[0]), self)
        return wrap(views.reshape(self, *shape), self)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Axes ``start_dim`` to ``end_dim`` (all, by default) merged into one."""
        return wrap(views.flatten(self, start_dim, end_dim), self)

    def ravel(self) -> Tensor:
        return wrap(views.reshape(self, -1), self)

    def clone(self) -> Tensor:
        """A new tensor of this one's value, which gradients flow through (an identity view:
        tensors are immutable, so nothing is copied)."""
        return Tensor(views.identity(self))

    def transpose(self, *axes: Any) -> Tensor:
        return wrap(views.transpose(self, *axes), self)

    def permute(self, *dims: Any) -> Tensor:
        return wrap(views.permute(self, *dims), self)

    def broadcast_to(self, *shape: Any) -> Tensor:
        return wrap(views.broadcast_to(self, *shape), self)

    def expand(self, *sizes: Any) -> Tensor:
        return wrap(views.expand(self, *sizes), self)

    def squeeze(self, axis: Any = None) -> Tensor:
        return wrap(views.squeeze(self, axis), self)

    def unsqueeze(self, axis: int) -> Tensor:
        return wrap(views.unsqueeze(self, axis), self)

    @property
    def T(self) -> Tensor:
        return wrap(views.transpose(self), self)

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (a stack of matrices transposed)."""
        n = self.ndim
        if n < 2:
            raise ShapeError(f"mT needs at least 2 dimensions, got shape {self.shape}")
        return wrap(views.permute(self, *range(n - 2), n - 1, n - 2), self)
