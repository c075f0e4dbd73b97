"""The immutable graph node, and the regions a node can own.

A ``Node`` never changes after construction, with one exception: its realisation state, two
fields for two events. ``storage`` is set when the node is bound to memory holding its value;
``computed`` is set only after the invocation that wrote that memory has returned. Pass and
lowering results live in per-realize side tables keyed by topological position, never on the
node.

A node may own regions (``Region``): sub-graphs with parameters in and results out, for
conditionals and loops. A region's nodes are the node's own: an outer walk sees the node,
not them (``vkml.graph.walk``).

An **input placeholder** (``placeholder``) stands for a value a captured function
(``vkml.trace``) receives at each call: a leaf of every schedule, like a computed node, but
with no storage of its own. Lowering gives it an argument; realizing it is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from vkml.dtypes import DType
from vkml.errors import ShapeError

VIEW_OPS = frozenset({"reshape", "permute", "broadcast_to", "slice"})

# What a shape can be at all: NumPy reads back at most 64 axes, and MLIR's index (IREE's
# buffer sizes) is a signed 64-bit integer. Whether it fits in memory is asked at realize.
MAX_RANK = 64
MAX_ELEMENTS = 2**63 - 1

Attrs = tuple[tuple[str, Any], ...]


class Node:
    """One operation in the lazy graph: op name, dtype, shape, sources, attributes, device.

    ``regions`` are the sub-graphs the node owns (none for every op but control flow).
    A view also keeps ``view_src``, the root owner of the storage it aliases (collapsed
    through chains of views), while ``src[0]`` stays the immediate base: autograd and
    scheduling need the real chain.
    """

    __slots__ = (
        "__weakref__",
        "_computed",
        "_storage",
        "attrs",
        "device",
        "dtype",
        "op",
        "regions",
        "shape",
        "src",
        "view_src",
    )  # fmt: skip

    op: str
    dtype: DType
    shape: tuple[int, ...]
    src: tuple[Node, ...]
    attrs: Attrs
    device: Any
    view_src: Node | None
    regions: tuple[Region, ...]
    _storage: Any
    _computed: bool

    def __init__(
        self,
        op: str,
        dtype: DType,
        shape: tuple[int, ...],
        src: tuple[Node, ...],
        attrs: Attrs,
        device: Any,
        storage: Any = None,
        regions: tuple[Region, ...] = (),
    ) -> None:
        if len(shape) > MAX_RANK or math.prod(shape) > MAX_ELEMENTS:
            check_shape(op, shape)
        _set_op(self, op)
        _set_dtype(self, dtype)
        _set_shape(self, shape)
        _set_src(self, src)
        _set_attrs(self, attrs)
        _set_device(self, device)
        if op in VIEW_OPS:
            base = src[0]
            _set_view_src(self, base.view_src if base.view_src is not None else base)
        else:
            _set_view_src(self, None)
        _set_regions(self, regions)
        _set_storage(self, storage)
        _set_computed(self, storage is not None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Node is immutable: cannot set '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Node is immutable: cannot delete '{name}'")

    @property
    def storage(self) -> Any:
        """The device memory bound to this node, or None while unbound."""
        return self._storage

    @property
    def computed(self) -> bool:
        """True once an invocation has written this node's storage and returned."""
        return self._computed

    @property
    def is_view(self) -> bool:
        return self.view_src is not None

    def attr(self, name: str, default: Any = None) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def _bind(self, storage: Any) -> None:
        _set_storage(self, storage)

    def _mark_computed(self) -> None:
        _set_computed(self, True)

    def __repr__(self) -> str:
        state = "computed" if self._computed else "pending"
        return f"Node({self.op}, {self.dtype.name}, {self.shape}, {self.device}, {state})"


def check_shape(op: str, shape: tuple[int, ...]) -> None:
    """ShapeError naming ``op`` when no tensor can have ``shape`` (see MAX_RANK and
    MAX_ELEMENTS)."""
    if len(shape) > MAX_RANK:
        raise ShapeError(
            f"'{op}': a shape of {len(shape)} axes is more than the {MAX_RANK} a tensor can "
            f"have; merge axes with reshape"
        )
    if math.prod(shape) > MAX_ELEMENTS:
        raise ShapeError(
            f"'{op}': shape {shape} has {math.prod(shape)} elements, more than the 2**63 - 1 "
            f"that a tensor can index; use a smaller shape"
        )


# The slots' own setters: __setattr__ refuses every assignment, so the constructor and the two
# realisation events write through these (measured ~30% faster than object.__setattr__).
_set_op = Node.__dict__["op"].__set__
_set_dtype = Node.__dict__["dtype"].__set__
_set_shape = Node.__dict__["shape"].__set__
_set_src = Node.__dict__["src"].__set__
_set_attrs = Node.__dict__["attrs"].__set__
_set_device = Node.__dict__["device"].__set__
_set_view_src = Node.__dict__["view_src"].__set__
_set_regions = Node.__dict__["regions"].__set__
_set_storage = Node.__dict__["_storage"].__set__
_set_computed = Node.__dict__["_computed"].__set__


PARAM = "param"
INPUT = "input"
# a Python number given to an op: a run-time input of a compiled module (vkml.ops.creation)
SCALAR = "scalar"


def placeholder(name: str, dtype: DType, shape: tuple[int, ...], device: Any) -> Node:
    """An input placeholder named ``name``: a leaf (``computed``) that is never bound.

    Its storage comes from the caller of the captured function it belongs to, so a schedule
    that reaches it can be lowered and compiled but not realized on its own.
    """
    node = Node(INPUT, dtype, shape, (), (("name", name),), device)
    node._mark_computed()
    return node


def is_placeholder(node: Node) -> bool:
    """Whether ``node`` is an input placeholder (a leaf with no storage)."""
    return node.op == INPUT and node._storage is None


@dataclass(frozen=True, slots=True)
class Region:
    """A sub-graph owned by a node: ``params`` in, ``results`` out.

    Each parameter is a node of op ``param`` with no sources and an ``index`` attribute (its
    position); the owning node decides what binds it (its operands, a loop's carried values).
    A region's nodes refer to its parameters and to each other only: a value from outside
    comes in through a parameter, so an outer walk never needs to look inside.
    """

    params: tuple[Node, ...]
    results: tuple[Node, ...]

    def __post_init__(self) -> None:
        for i, p in enumerate(self.params):
            if p.op != PARAM or p.src or p.attr("index") != i:
                raise ValueError(
                    f"region parameter {i} must be a '{PARAM}' node with index {i}, got {p!r}"
                )


def param(index: int, dtype: DType, shape: tuple[int, ...], device: Any) -> Node:
    """The ``index``-th parameter of a region."""
    return Node(PARAM, dtype, shape, (), (("index", index),), device)
