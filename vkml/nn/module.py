"""Module: a callable holding tensors, with parameter discovery, modes and saved state.

A module's **parameters** are the tensor attributes marked ``requires_grad_()`` (leaves); its
other tensor attributes are **buffers** (state that is saved but not trained, such as a
dropout key). Sub-modules are module attributes, or lists and tuples of modules. Names are
dotted attribute paths in definition order: ``"0.weight"``, ``"encoder.proj.bias"``.

Tensors are immutable handles to graph nodes; a module's state changes by **rebinding** a
handle to a new node (``rebind``): the tensor object stays the same, so an optimiser holding
it, a leaf registry keyed on it and the module all see the new value. A rebound tensor always
points at a fresh ``data`` node (realized storage, no sources), so no history accumulates.

Lazy state updates that must run with the next training step (a dropout key advancing) are
recorded with ``defer_update`` in ``_DEFERRED``, a weak registry drained by the optimiser's
step: the update realizes in the step's one invocation instead of chaining across steps.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vkml.compiler.atomic import write_atomically
from vkml.dtypes import bfloat16
from vkml.errors import DataError, DTypeError, ShapeError
from vkml.frontend.creation import realize, tensor
from vkml.frontend.host import host_array, output_path_arg, path_arg
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node

# Tensors whose node is a pending state update (see the module docstring), keyed by id: a
# WeakSet would compare tensors with ``==``, which is elementwise.
_DEFERRED: dict[int, tuple[weakref.ref[Tensor], Node]] = {}


def rebind(t: Tensor, value: Tensor) -> None:
    """Point the handle ``t`` at ``value``'s realized storage as a fresh ``data`` node.

    ``value`` must be realized. ``t`` keeps its identity, leaf status and ``.grad``.
    """
    node = value._node
    if not node.computed:
        raise AssertionError("rebind() needs a realized value")
    t._rebind(Node("data", node.dtype, node.shape, (), (), node.device, node.storage))


def materialize(tensors: Iterable[Tensor]) -> None:
    """Realize ``tensors`` (one invocation per device) and rebind each to a fresh data node.

    Afterwards every one of them is a graph leaf with no history, so the graphs that use
    them have the same structure from one call to the next.
    """
    by_device: dict[Any, list[Tensor]] = {}
    for t in tensors:
        if t._node.op != "data" or t._node.src or not t._node.computed:
            by_device.setdefault(t.device, []).append(t)
    for group in by_device.values():
        realize(*group)
        for t in group:
            rebind(t, t)


def defer_update(t: Tensor, value: Tensor) -> None:
    """Rebind ``t`` to the lazy ``value`` now; the next optimiser step realizes it.

    For state a forward pass advances (a dropout key): the update becomes part of the
    training step's single invocation, and the step graph keeps one structure.
    """
    pending = _DEFERRED.get(id(t))
    # a second update in one step chains on the first; the step reads the value before both
    before = pending[1] if pending is not None and pending[0]() is t else t._node
    t._rebind(value._node)
    _DEFERRED[id(t)] = (weakref.ref(t, _forget(id(t))), before)


def _forget(key: int) -> Any:
    return lambda _: _DEFERRED.pop(key, None)


def take_deferred(device: Any) -> list[tuple[Tensor, Node]]:
    """The tensors with a pending deferred update on ``device``, each with the node it held
    before the update (the value the update reads); they leave the registry."""
    found: list[tuple[Tensor, Node]] = []
    for key, (ref, before) in list(_DEFERRED.items()):
        t = ref()
        if t is None or t.device is device:
            _DEFERRED.pop(key, None)
            if t is not None and not t._node.computed:
                found.append((t, before))
    return found


class Module:
    """Base class of layers and models: subclass it and define ``forward``.

    Assign tensors and sub-modules as attributes in ``__init__``; ``parameters()``,
    ``state_dict()``, ``train()``/``eval()`` and ``to(device)`` find them.
    """

    training: bool = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- discovery --------------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Direct sub-modules with their attribute names (list items as ``name.i``)."""
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every module below it, depth first, each once."""
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = list(module.named_children())
            for child_name, child in reversed(children):
                stack.append((f"{name}.{child_name}" if name else child_name, child))

    def modules(self) -> list[Module]:
        return [m for _, m in self.named_modules()]

    def _named_tensors(self) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        for prefix, module in self.named_modules():
            for name, value in vars(module).items():
                if isinstance(value, Tensor) and id(value) not in seen:
                    seen.add(id(value))
                    yield (f"{prefix}.{name}" if prefix else name), value

    def named_parameters(self) -> list[tuple[str, Tensor]]:
        """``(name, tensor)`` for every parameter (a leaf tensor), each tensor once."""
        return [(n, t) for n, t in self._named_tensors() if t.is_leaf]

    def parameters(self) -> list[Tensor]:
        """Every parameter, in the order of ``named_parameters()``."""
        return [t for _, t in self.named_parameters()]

    def named_buffers(self) -> list[tuple[str, Tensor]]:
        """``(name, tensor)`` for every tensor attribute that is not a parameter."""
        return [(n, t) for n, t in self._named_tensors() if not t.is_leaf]

    def buffers(self) -> list[Tensor]:
        return [t for _, t in self.named_buffers()]

    # -- modes ------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active) on this module and every sub-module."""
        if not isinstance(mode, bool):
            raise TypeError(f"train: mode={mode!r:.40} must be True or False")
        for m in self.modules():
            m.training = mode
        return self

    def eval(self) -> Module:
        """Set evaluation mode (dropout is the identity); the same as ``train(False)``."""
        return self.train(False)

    def to(self, device: Any) -> Module:
        """Copy every parameter and buffer to ``device`` (rebinding them); returns self."""
        for _, t in self._named_tensors():
            if t.device is not device:
                rebind(t, t.to(device).realize())
        return self

    def materialize(self) -> Module:
        """Realize every parameter and buffer in one invocation (per device); returns self."""
        materialize(t for _, t in self._named_tensors())
        return self

    # -- saved state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """Every parameter and buffer as a NumPy array, by name (realized together)."""
        named = list(self._named_tensors())
        materialize(t for _, t in named)
        return {name: t.numpy() for name, t in named}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> None:
        """Set parameters and buffers from ``state`` (arrays or tensors, by name).

        Each tensor keeps its identity (an optimiser holding it sees the new value) and its
        device. Raises KeyError for missing or unexpected names when ``strict``, ShapeError
        and DTypeError for a value that does not match, DataError for one that is not numeric
        data and TypeError when ``state`` is not a mapping.
        """
        if not isinstance(state, Mapping):
            raise TypeError(
                f"load_state_dict: state must be a mapping from names to arrays or tensors "
                f"(what state_dict() returns), got {type(state).__name__}"
            )
        named = dict(self._named_tensors())
        if strict:
            missing = sorted(set(named) - set(state))
            unexpected = sorted(set(state) - set(named))
            if missing or unexpected:
                raise KeyError(
                    f"load_state_dict: missing {missing or 'nothing'}, unexpected "
                    f"{unexpected or 'nothing'} (pass strict=False to load the names that match)"
                )
        for name, t in named.items():
            if name in state:
                rebind(t, _loaded(name, state[name], t))

    def save(self, path: str | Path) -> None:
        """Write ``state_dict()`` to ``path`` as a NumPy ``.npz`` archive (to a temporary
        name, then renamed: a failure never leaves half an archive)."""
        file = output_path_arg("Module.save", "path", path)
        arrays = {k: _storable(v) for k, v in self.state_dict().items()}

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                np.savez(f, allow_pickle=False, **arrays)

        write_atomically(file, write)

    def load(self, path: str | Path, strict: bool = True) -> None:
        """Read an ``.npz`` archive written by ``save`` into this module."""
        with np.load(path_arg("Module.load", "path", path)) as archive:
            self.load_state_dict({k: archive[k] for k in archive.files}, strict)

    def __repr__(self) -> str:
        children = list(self.named_children())
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        body = "".join(f"\n  ({n}): " + repr(m).replace("\n", "\n  ") for n, m in children)
        return f"{type(self).__name__}({body}\n)"

    def extra_repr(self) -> str:
        return ""


def _storable(array: np.ndarray) -> np.ndarray:
    # .npz has no bfloat16: its bits travel as uint16 and are viewed back on load
    return array.view(np.uint16) if array.dtype == bfloat16.numpy else array


def _loaded(name: str, value: Any, like: Tensor) -> Tensor:
    """``value`` as a realized tensor on ``like``'s device, checked against ``like``."""
    try:
        host = value.numpy() if isinstance(value, Tensor) else host_array(value)
    except DataError as exc:
        raise DataError(f"load_state_dict: '{name}': {exc}") from exc
    if like.dtype is bfloat16 and host.dtype == np.uint16:
        host = host.view(bfloat16.numpy)
    if tuple(host.shape) != like.shape:
        raise ShapeError(
            f"load_state_dict: '{name}' has shape {tuple(host.shape)}, the "
            f"module's tensor {like.shape}"
        )
    if host.dtype != like.dtype.numpy:
        raise DTypeError(
            f"load_state_dict: '{name}' has dtype {host.dtype}, the module's "
            f"tensor {like.dtype}; convert it first"
        )
    return tensor(host, like.dtype, like.device)
