"""Layers: Linear, Sequential, ReLU, GELU, Dropout, Embedding (normalisation and
convolution layers have modules of their own).

Parameters are leaf tensors (``requires_grad_()``) made lazily from a random key
(``vkml.random``, bit-identical on every device), so the same key gives the same initial
weights on cpu and on reference. They are realized by the first thing that needs them: an
optimiser (one invocation for all of them), ``Module.materialize()`` or an observation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from vkml.dtypes import float32
from vkml.errors import DTypeError
from vkml.frontend import random as _random
from vkml.frontend.functions import take, where
from vkml.frontend.host import number_arg
from vkml.frontend.op_functions import gelu, relu
from vkml.frontend.record import tensor_node
from vkml.frontend.tensor import Tensor
from vkml.nn.arguments import check_last_axis, float_dtype, size as size_arg
from vkml.nn.keys import layer_key, two_keys
from vkml.nn.module import Module, defer_update, materialize


class Linear(Module):
    """``y = x @ weight.T + bias``, initialised as PyTorch's ``nn.Linear``.

    Args:
        in_features: size of the last axis of the input (at least 1).
        out_features: size of the last axis of the output.
        bias: whether to add a learned bias.
        key: a ``vkml.random.key``; the parameters live on its device. Without one, the
            key ``vkml.nn.manual_seed`` seeded (``vkml.nn.keys``).
        dtype: floating-point dtype of the parameters.

    ``weight`` has shape ``(out_features, in_features)``; it and ``bias`` are drawn from
    uniform(-1/sqrt(in_features), 1/sqrt(in_features)).
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, *, key: Tensor | None = None,
        dtype: Any = float32,
    ) -> None:  # fmt: skip
        in_features = size_arg("Linear", "in_features", in_features, positive=True)
        out_features = size_arg("Linear", "out_features", out_features)
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        wkey, bkey = two_keys("Linear", key)
        target = float_dtype("Linear", dtype)
        self.weight = _random.uniform(wkey, (out_features, in_features), target, -bound, bound)
        self.weight.requires_grad_()
        self.bias: Tensor | None = None
        if bias:
            self.bias = _random.uniform(bkey, (out_features,), target, -bound, bound)
            self.bias.requires_grad_()

    def forward(self, x: Tensor) -> Tensor:
        check_last_axis("Linear", x, self.in_features)
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Sequential(Module):
    """Calls its layers in order, each on the previous one's output."""

    def __init__(self, *layers: Module) -> None:
        for i, layer in enumerate(layers):
            if not isinstance(layer, Module):
                raise TypeError(f"Sequential: layer {i} is a {type(layer).__name__}, not a Module")
        self.layers = list(layers)

    def named_children(self) -> Iterator[tuple[str, Module]]:
        return ((str(i), m) for i, m in enumerate(self.layers))

    def forward(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, index: int) -> Module:
        return self.layers[index]

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.layers)


class ReLU(Module):
    """``max(x, 0)``; NaN stays NaN."""

    def forward(self, x: Tensor) -> Tensor:
        return relu(x)


class GELU(Module):
    """Exact GELU, ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (PyTorch's default)."""

    def forward(self, x: Tensor) -> Tensor:
        return gelu(x)


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; in evaluation mode, the identity.

    The randomness is keyed and the key is data, never a Python constant, so a training
    step has the same graph every step. Either pass a key per call (``drop(x, key=k)``) or
    let the layer hold one: each call then splits the held key, uses one half and keeps the
    other, and the optimiser's next step realizes the advanced key with the step itself.

    Args:
        p: the probability of zeroing an element, in [0, 1).
        key: the held key (default ``vkml.random.key(0)`` on the input's device).
    """

    def __init__(self, p: float = 0.5, *, key: Tensor | None = None) -> None:
        self.p = number_arg("Dropout", "p", p, at_least=0.0, below=1.0)
        self.key: Tensor | None = None
        if key is not None:
            self.key = Tensor(_random.check_key("Dropout", key)._node)
            materialize([self.key])  # data from the start: step 1 has step 2's structure

    def forward(self, x: Tensor, key: Tensor | None = None) -> Tensor:
        tensor_node("Dropout", x)
        if not self.training or self.p == 0.0:
            return x
        if key is None:
            if self.key is None:
                self.key = _random.key(0, device=x.device)
                materialize([self.key])
            held, key = two_keys("Dropout", self.key)
            defer_update(self.key, held)
        keep = _random.uniform(key, x.shape) >= self.p
        return where(keep, x * (1.0 / (1.0 - self.p)), 0.0)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Embedding(Module):
    """A lookup table: integer ids ``(...)`` to rows of ``weight`` ``(...,  dim)``.

    The lookup is a gather (``take``) of the table's rows; its gradient adds each row's
    gradients in vkml's pairwise order. An id outside ``[0, num_embeddings)`` is a bug in
    the data: its row is NaN (as is what it feeds), never a plausible row. (PyTorch raises;
    vkml would have to read the ids back, a device sync every step.)

    Args:
        num_embeddings: rows of the table.
        embedding_dim: size of each row.
        key: a ``vkml.random.key``; the table (drawn from normal(0, 1), as PyTorch) lives
            on its device. Without one, the key ``vkml.nn.manual_seed`` seeded.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        *,
        key: Tensor | None = None,
        dtype: Any = float32,
    ) -> None:
        num_embeddings = size_arg("Embedding", "num_embeddings", num_embeddings)
        embedding_dim = size_arg("Embedding", "embedding_dim", embedding_dim)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        target = float_dtype("Embedding", dtype)
        key = layer_key("Embedding", key)
        self.weight = _random.normal(key, (num_embeddings, embedding_dim), target)
        self.weight.requires_grad_()

    def forward(self, ids: Tensor) -> Tensor:
        if not tensor_node("Embedding", ids).dtype.is_integer:
            raise DTypeError(f"Embedding: ids must be integers, got {ids.dtype}")
        rows = take(self.weight, ids.reshape(-1), axis=0).reshape(*ids.shape, -1)
        in_range = ((ids >= 0) & (ids < self.num_embeddings)).unsqueeze(-1)
        return where(in_range, rows, math.nan)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"
