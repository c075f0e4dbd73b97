"""What an op is: ``OpDef``, one per primitive op, declaring everything about it in one place.

An op's definition names its rule (``ShapeRule``: how its output's shape and dtype follow from its
operands, ``vkml.ops.rules``), which inputs it takes, its MLIR emitter, its NumPy
implementation for the reference device (``vkml.ops.references``), its gradient rule, the
devices and dtypes that refuse it, its cross-device numerical contract (bit-exact against the
reference device, or within ``ulp`` units in the last place) and its public spelling
(``Spelling``: the ``vkml`` function and ``Tensor`` methods generated from it). The definitions live by family
(``elementwise``, ``movement``, ``creation``, ``contraction``, ``reduce``, ``scan``,
``indexing``, ``sorting``, ``control``); ``registry.OPS`` is every one of them, and every other table (device support, the docs' contract table, the
public functions) is derived from it.

Gradient rules are written against ``Algebra``, the tensor operations the frontend provides,
so this layer never imports the ``Tensor`` class: a rule takes the op's node, the gradient
``g`` of the loss with respect to the node's value (a frontend tensor) and the algebra, and
returns one gradient per source (``None`` where none flows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from vkml.dtypes import DType
from vkml.graph.node import Node
from vkml.ops.emitters.common import Emitter
from vkml.ops.references.common import Reference

# A frontend tensor. Rules use its public methods and operators only (``g * x``,
# ``x.sum(axes, keepdims=True)``, ``x.reshape(shape)``, ...), never a private field.
Handle = Any
Grads = Sequence[Handle | None]


class Algebra(Protocol):
    """The tensor operations a gradient rule needs beyond a tensor's own methods."""

    def tensor(self, node: Node) -> Handle:
        """The frontend tensor of ``node`` (one of the op's sources or its output)."""
        ...

    def where(self, cond: Handle, a: Handle | float, b: Handle | float) -> Handle: ...

    def concatenate(self, parts: Sequence[Handle], axis: int) -> Handle: ...

    def full(self, shape: tuple[int, ...], value: float, dtype: DType, device: Any) -> Handle: ...

    def unary(self, op: str, x: Handle) -> Handle:
        """The elementwise op named ``op`` of ``x``."""
        ...

    def take_along_axis(self, x: Handle, indices: Handle, axis: int) -> Handle:
        """``x`` gathered along ``axis`` at ``indices`` (of ``x``'s rank)."""
        ...

    def scatter_add(self, g: Handle, indices: Handle, axis: int, size: int) -> Handle:
        """The transpose of ``take_along_axis`` onto ``size`` positions along ``axis``."""
        ...

    def index_at(self, x: Handle, pos: Handle, axis: int) -> Handle:
        """Position ``pos`` (a 0-d integer) of ``axis``, kept as an axis of length 1."""
        ...

    def place_at(self, g: Handle, pos: Handle, axis: int, size: int) -> Handle:
        """The transpose of ``index_at``: ``g`` at ``pos`` of zeros ``size`` long on ``axis``."""
        ...

    def conv(self, x: Handle, w: Handle, **window: Any) -> Handle:
        """The ``conv`` op of ``x`` and ``w`` with ``window``'s attributes as they are."""
        ...


GradientRule = Callable[[Node, Handle, Algebra], Grads]


class Out(NamedTuple):
    """What a shape rule infers: the output's dtype and shape, and the node's attributes (a
    named tuple: one is made per recorded op, and a frozen dataclass cost 0.3 us more)."""

    dtype: DType
    shape: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...] = ()


# A shape rule's inference: the op, its operand nodes, the dtype they were promoted to (for
# operands that promote together; else None) and the call's parameters -> ``Out``, or an
# error naming the op and the values.
Infer = Callable[["OpDef", tuple[Node, ...], "DType | None", dict[str, Any]], Out]


@dataclass(frozen=True, slots=True)
class ShapeRule:
    """How an op's output follows from its operands: the op's kind.

    ``operands`` says how the frontend turns a call's arguments into nodes before ``infer``
    runs: ``"tensor"`` (each a tensor), ``"promoted"`` (tensors or Python numbers, promoted
    together; a number is weak, as the Array API says) or ``"own"`` (the op's own function in
    ``vkml.frontend`` records it, and ``infer`` is None). ``params`` is the rest of the public
    function's signature, after its operands."""

    name: str
    summary: str
    operands: str = "own"
    infer: Infer | None = None
    params: str = ""
    # the keywords NumPy passes when it calls the op's method (np.sum(t) calls
    # t.sum(axis=.., dtype=.., out=..)): a method takes them, and refuses an ``out``
    numpy_keywords: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.operands == "own") != (self.infer is None):
            raise ValueError(f"rule {self.name!r}: a rule infers unless its op records itself")


@dataclass(frozen=True, slots=True)
class Spelling:
    """An op's public names: the ``vkml`` function, the ``Tensor`` methods (none, or several
    for aliases such as ``max``/``amax``) and their one-line docstring; generated into
    ``vkml/frontend/op_functions.py`` and ``op_methods.py`` by scripts/generate_ops.py."""

    function: str
    doc: str
    methods: tuple[str, ...] = ()


# The kinds of input an op accepts: any dtype, numbers (no bool), floats only (integers are
# converted to float32), or integers only.
INPUTS = ("any", "number", "float", "integer")


@dataclass(frozen=True, slots=True)
class OpDef:
    """One primitive op. ``refuses`` lists ``(device kind, dtype)`` pairs the op cannot run
    for on every device of that kind (IREE's llvm-cpu links no float64 ``tanh``, say);
    what a particular device lacks (a Vulkan device without float64) the device decides."""

    name: str
    rule: ShapeRule
    emit: Emitter
    reference: Reference
    bit_exact: bool
    ulp: int = 0
    # a bound that is not a count of ULPs, and where it is stated (matmul: "relative (ADR 0005)")
    bound: str = ""
    inputs: str = "any"
    gradient: GradientRule | None = None
    refuses: frozenset[tuple[str, DType]] = frozenset()
    spelling: Spelling | None = None

    def __post_init__(self) -> None:
        if self.inputs not in INPUTS:
            raise ValueError(f"op {self.name!r}: inputs {self.inputs!r} is not one of {INPUTS}")
        if self.bit_exact and (self.ulp or self.bound):
            raise ValueError(f"op {self.name!r}: a bit-exact op has no bound")
        if not self.bit_exact and (self.ulp > 0) == bool(self.bound):
            raise ValueError(f"op {self.name!r}: an op that is not bit-exact needs one bound")
        if self.spelling is not None and self.rule.operands == "own":
            raise ValueError(
                f"op {self.name!r}: its spelling is generated from its rule's inference, and "
                f"rule {self.rule.name!r} has none (its function in vkml.frontend records it)"
            )

    def runs_on(self, device_kind: str, dtype: DType) -> bool:
        """Whether a device of ``device_kind`` can run this op producing ``dtype``, as far
        as the op is concerned."""
        return (device_kind, dtype) not in self.refuses


def table(*defs: OpDef) -> dict[str, OpDef]:
    """A family's ops by name; a name defined twice is an error."""
    out: dict[str, OpDef] = {}
    for d in defs:
        if d.name in out:
            raise ValueError(f"op {d.name!r} is defined twice")
        out[d.name] = d
    return out


def to_source(g: Handle, src: Node) -> Handle:
    """``g`` summed over the axes along which ``src`` was broadcast, cast to ``src``'s dtype:
    the gradient of a broadcasting op's operand has the operand's exact shape and dtype."""
    shape = src.shape
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1
    )
    if axes:
        g = g.sum(axes, keepdims=True).reshape(shape)
    elif g.shape != shape:
        g = g.reshape(shape)
    return g.astype(src.dtype)
