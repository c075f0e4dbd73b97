"""Optimisers: SGD (momentum, weight decay, Nesterov), Adam and AdamW.

``step(closure)`` is a whole training step as ONE invocation: the closure builds the loss
lazily, autograd's functional ``value_and_grad`` adds the backward graph, the optimiser adds
the update graph, and one ``realize`` computes the loss, the new parameters and the new
optimiser state together. Then every parameter and state tensor is *rebound* to its new
value as a fresh data node (``vkml.nn.module.rebind``): graphs never grow across steps.

Everything that changes from step to step is a tensor argument, never a Python number baked
into the graph: the learning rate, Adam's bias corrections (kept as state and advanced by
the step). So from the second step on the step graph has the same structure and the device
finds its compiled executable in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from vkml.dtypes import float32
from vkml.errors import DTypeError, GradientError
from vkml.frontend.autograd import value_and_grad
from vkml.frontend.creation import realize, tensor
from vkml.frontend.host import number_arg
from vkml.frontend.record import check_same_device
from vkml.frontend.tensor import Tensor
from vkml.graph.node import Node
from vkml.nn.module import materialize, rebind, take_deferred
from vkml.nn.step import CompiledStep

State = dict[str, Tensor]


def _zeros_like(p: Tensor) -> Tensor:
    return tensor(np.zeros(p.shape, p.dtype.numpy), p.dtype, p.device)


def _scalar(value: float, device: Any) -> Tensor:
    return tensor(np.float32(value), float32, device)


def _hyperparameter(opt: str, name: str, value: Any, below: float = np.inf) -> float:
    """An optimiser's ``name=value`` as a float: a finite number >= 0 (and < ``below``);
    DTypeError or ValueError naming the optimiser, the parameter and the value otherwise."""
    return number_arg(opt, name, value, at_least=0.0, below=below)


class Optimizer:
    """Holds parameters and per-parameter state; ``step`` updates them in one invocation.

    Subclasses define ``init_state`` (per parameter), ``init_shared`` (scalars shared by all
    parameters), ``advance`` (the shared scalars of the next step) and ``update`` (one
    parameter's new value and state), all lazily.
    """

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        if isinstance(params, Tensor) or not isinstance(params, Iterable):
            raise TypeError(
                f"{type(self).__name__}: params must be an iterable of vkml Tensors, such as "
                f"model.parameters(), got {type(params).__name__}"
            )
        unique: dict[int, Tensor] = {}
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"{type(self).__name__}: parameters must be vkml Tensors, got "
                    f"{type(p).__name__}"
                )
            if not p.dtype.is_float:
                raise DTypeError(
                    f"{type(self).__name__}: parameters must be floating-point, got {p.dtype}"
                )
            unique.setdefault(id(p), p)
        if not unique:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        self.params: list[Tensor] = list(unique.values())
        self.device = check_same_device(type(self).__name__, [p.node for p in self.params])
        self._lr_value = _hyperparameter(type(self).__name__, "lr", lr)
        self._lr = _scalar(self._lr_value, self.device)
        self.state: list[State] = [self.init_state(p) for p in self.params]
        self.shared: State = self.init_shared()
        self.steps = 0
        # one invocation makes every parameter (lazily initialised) a fresh data node
        materialize(self.params)

    @property
    def lr(self) -> float:
        """The learning rate; setting it uploads a new value (no recompile)."""
        return self._lr_value

    @lr.setter
    def lr(self, value: float) -> None:
        number = _hyperparameter(type(self).__name__, "lr", value)
        # the same handle, rebound: a compiled step reads the learning rate through it
        rebind(self._lr, _scalar(number, self.device))
        self._lr_value = number

    # -- what a subclass defines ------------------------------------------------------------
    def init_state(self, p: Tensor) -> State:
        return {}

    def init_shared(self) -> State:
        return {}

    def advance(self, shared: State) -> State:
        return shared

    def update(
        self, p: Tensor, g: Tensor, state: State, shared: State, lr: Tensor
    ) -> tuple[Tensor, State]:
        raise NotImplementedError

    # -- the step ---------------------------------------------------------------------------
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """One optimisation step.

        Args:
            closure: computes the loss (a one-element float tensor) from the parameters. With
                it, the forward, the backward and the update run as ONE invocation and
                ``.grad`` is neither read nor written. Without it, the step uses each
                parameter's ``.grad`` (from ``backward()``) and skips those that have none.

        Returns:
            The loss (realized, with no history) when a closure is given, else None.
        """
        if closure is not None and not callable(closure):
            raise TypeError(
                f"step: closure must be callable (it computes the loss), got "
                f"{type(closure).__name__}"
            )
        loss, rebound, _ = self._build(closure)
        realize(*([loss] if loss is not None else []), *(new for _, new in rebound))
        for t, new in rebound:
            rebind(t, new)
        self.steps += 1
        if loss is None:
            return None
        out = Tensor(loss._node)
        rebind(out, loss)
        return out

    def compile_step(self, loss_fn: Callable[..., Tensor]) -> CompiledStep:
        """A training step traced once and replayed: ``step = opt.compile_step(loss_fn)``,
        then ``loss = step(x, y)`` for each batch.

        ``loss_fn(*batch)`` computes the loss from the model and the batch tensors. The first
        call (and the first for each new batch shape or dtype) runs ``step(closure)`` once
        and records its graph; later calls skip building the graph, autograd and the
        structure walk, and invoke the compiled step on the new batch and the current
        parameters and optimiser state directly. See ``vkml.nn.step.CompiledStep`` for what
        the recorded step assumes.
        """
        return CompiledStep(self, loss_fn)

    def _build(
        self, closure: Callable[[], Tensor] | None
    ) -> tuple[Tensor | None, list[tuple[Tensor, Tensor]], dict[Node, Tensor]]:
        """The step's loss (None without a closure), every (tensor, its new value), and each
        deferred-update tensor by the node it held before its update (what the step reads)."""
        if closure is not None:
            loss, grads = self._value_and_grads(closure)
            pairs = list(zip(self.params, grads, self.state))
        else:
            loss = None
            pairs = [(p, p.grad, s) for p, s in zip(self.params, self.state) if p.grad is not None]
            if not pairs:
                raise GradientError(
                    "step(): no parameter has a .grad; call loss.backward() "
                    "first or pass a closure: step(lambda: loss_fn())"
                )
        shared = self.advance(self.shared)
        rebound: list[tuple[Tensor, Tensor]] = list(zip(self.shared.values(), shared.values()))
        for p, g, state in pairs:
            lr = self._lr if self._lr.dtype is p.dtype else self._lr.astype(p.dtype)
            new_p, new_state = self.update(p, g, state, shared, lr)
            rebound.append((p, new_p.astype(p.dtype)))
            rebound += [(state[k], new_state[k]) for k in state]
        deferred = take_deferred(self.device)
        rebound += [(t, t) for t, _ in deferred]
        return loss, rebound, {before: t for t, before in deferred}

    def _value_and_grads(self, closure: Callable[[], Tensor]) -> tuple[Tensor, Sequence[Tensor]]:
        params = self.params

        def loss_of(*values: Tensor) -> Tensor:
            # the closure reads the parameters through the module: point them at the nodes
            # value_and_grad differentiates with respect to, for the closure's duration
            saved = [p._node for p in params]
            for p, v in zip(params, values):
                p._rebind(v._node)
            try:
                return closure()
            finally:
                for p, node in zip(params, saved):
                    p._rebind(node)

        loss, grads = value_and_grad(loss_of, argnums=tuple(range(len(params))))(*params)
        return loss, grads

    def zero_grad(self) -> None:
        """Forget every parameter's accumulated ``.grad``."""
        for p in self.params:
            p.grad = None


class SGD(Optimizer):
    """Stochastic gradient descent, as PyTorch's ``torch.optim.SGD``.

    ``g += weight_decay * p``; with momentum ``buf = momentum * buf + g`` and ``g = buf``
    (or ``g + momentum * buf`` with Nesterov); ``p -= lr * g``.
    """

    def __init__(
        self, params: Iterable[Tensor], lr: float, momentum: float = 0.0,
        weight_decay: float = 0.0, nesterov: bool = False,
    ) -> None:  # fmt: skip
        self.momentum = _hyperparameter("SGD", "momentum", momentum)
        self.weight_decay = _hyperparameter("SGD", "weight_decay", weight_decay)
        if nesterov and self.momentum <= 0:
            raise ValueError("SGD: nesterov needs a positive momentum")
        self.nesterov = nesterov
        super().__init__(params, lr)

    def init_state(self, p: Tensor) -> State:
        return {"momentum_buffer": _zeros_like(p)} if self.momentum else {}

    def update(
        self, p: Tensor, g: Tensor, state: State, shared: State, lr: Tensor
    ) -> tuple[Tensor, State]:
        if self.weight_decay:
            g = g + p * self.weight_decay
        if not self.momentum:
            return p - lr * g, {}
        buf = state["momentum_buffer"] * self.momentum + g
        step = g + buf * self.momentum if self.nesterov else buf
        return p - lr * step, {"momentum_buffer": buf}


class Adam(Optimizer):
    """Adam, as PyTorch's ``torch.optim.Adam`` (weight decay as an L2 term in the gradient).

    The bias corrections ``1 - beta ** t`` are state tensors advanced each step by
    ``c = c * beta + (1 - beta)``: no step count is baked into the graph, and the value is
    accurate where ``1 - beta ** t`` in float32 would cancel.
    """

    decoupled = False

    def __init__(
        self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0.0,
    ) -> None:  # fmt: skip
        name = type(self).__name__
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(
                f"{name}: betas={betas!r:.40} must be a pair (beta1, beta2) of numbers in "
                f"[0, 1), e.g. (0.9, 0.999)"
            )
        self.betas = (
            _hyperparameter(name, "betas[0]", betas[0], below=1.0),
            _hyperparameter(name, "betas[1]", betas[1], below=1.0),
        )
        self.eps = _hyperparameter(name, "eps", eps)
        self.weight_decay = _hyperparameter(name, "weight_decay", weight_decay)
        super().__init__(params, lr)

    def init_state(self, p: Tensor) -> State:
        return {"exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}

    def init_shared(self) -> State:
        return {
            "bias_correction1": _scalar(0.0, self.device),
            "bias_correction2": _scalar(0.0, self.device),
        }

    def advance(self, shared: State) -> State:
        b1, b2 = self.betas
        return {
            "bias_correction1": shared["bias_correction1"] * b1 + (1.0 - b1),
            "bias_correction2": shared["bias_correction2"] * b2 + (1.0 - b2),
        }

    def update(
        self, p: Tensor, g: Tensor, state: State, shared: State, lr: Tensor
    ) -> tuple[Tensor, State]:
        b1, b2 = self.betas
        if self.weight_decay and self.decoupled:
            p = p * (1.0 - lr * self.weight_decay)
        elif self.weight_decay:
            g = g + p * self.weight_decay
        m = state["exp_avg"]
        m = m + (g - m) * (1.0 - b1)  # PyTorch's lerp
        v = state["exp_avg_sq"] * b2 + g * g * (1.0 - b2)
        bc1, bc2 = (shared[k].astype(p.dtype) for k in ("bias_correction1", "bias_correction2"))
        denom = v.sqrt() / bc2.sqrt() + self.eps
        return p - (lr / bc1) * (m / denom), {"exp_avg": m, "exp_avg_sq": v}


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the update),
    as PyTorch's ``torch.optim.AdamW`` (default ``weight_decay=0.01``)."""

    decoupled = True

    def __init__(
        self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 1e-2,
    ) -> None:  # fmt: skip
        super().__init__(params, lr, betas, eps, weight_decay)
