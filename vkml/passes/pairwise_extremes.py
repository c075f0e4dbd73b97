"""Rewrite every floating-point maximum and minimum reduction into vkml's pairwise tree of
``select_max``/``select_min`` (``vkml.dialect.pairwise`` order), except, where the target asks
for it (``native_when_compared``), one whose value is only ever compared.

Invariant: after this pass a ``stablehlo.reduce`` of ``maximum``/``minimum`` over float32 or
float64 remains only where ``native_when_compared`` kept it; none over another float type.

Why the tree: which of two equal extremes a maximum returns (+0.0 or -0.0) and which NaN
payload it keeps depend on the order of the reduction, and backends lower a native maximum
differently for signed zeros (``vkml.ops.emitters.common.select_max``); the tree fixes the order,
so the bits are the same on every device.

Why the exception: a value that is only compared (``x.amax() < limit``, a builder loop's
condition) is exact in any order. A maximum is a greatest element whatever the order; two
greatest elements differ at most as +0.0 and -0.0, which every comparison but a total order
finds equal, and a NaN anywhere makes any NaN-propagating order give a NaN, which compares the
same whatever its payload. IREE compiles a native reduce far faster than the tree: a builder
loop of 16 steps over 1M float32, each reading an amax, took ~1 s against ~5 s as trees on
llvm-cpu. Only llvm-cpu asks for it: lavapipe caps the loop a native reduce becomes, and
Vulkan drivers' NaN handling needs vkml's own passes, which do not look into reduce bodies.
"""

from __future__ import annotations

import math

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.ir import ir
from vkml.dialect.numerics import select_max, select_min
from vkml.dialect.pairwise import pairwise_reduce
from vkml.dialect.rewrite import (
    find_ops,
    reduce_combiner,
    replace_with_function_body,
    tensor_type_of,
)

ARGUMENT = "vkml-pairwise-extremes"
DESCRIPTION = (
    "rewrite float max/min reductions into the fixed pairwise tree (a native one is kept "
    "where only compared, if asked)"
)

_COMBINERS = ("maximum", "minimum")
# ops that pass a value on unchanged in every element they keep
_MOVES = ("stablehlo.reshape", "stablehlo.broadcast_in_dim", "stablehlo.transpose")
_NATIVE_DTYPES = ("float32", "float64")


def _combiner(op: ir.Operation) -> str | None:
    """``maximum`` or ``minimum`` when ``op`` is a float reduce of it."""
    name = reduce_combiner(op)
    if name not in _COMBINERS or not tensor_type_of(op.operands[0].type).dtype.is_float:
        return None
    return name


def only_compared(value: ir.Value) -> bool:
    """Whether every reader of ``value``, through reshapes, broadcasts and transposes, is a
    comparison other than a total order (which tells -0.0 from +0.0)."""
    for use in value.uses:
        user = use.owner
        if user.name in _MOVES:
            if not only_compared(user.results[0]):
                return False
        elif user.name != "stablehlo.compare" or _total_order(user):
            return False
    return True


def _total_order(compare: ir.Operation) -> bool:
    attributes = compare.attributes
    return "compare_type" in attributes and "TOTALORDER" in str(attributes["compare_type"])


def _is_identity(init: ir.Value, largest: bool) -> bool:
    """Whether ``init`` is the constant -inf (for a maximum) or +inf (a minimum)."""
    owner = init.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "stablehlo.constant":
        return False
    attr = ir.DenseElementsAttr(owner.operation.attributes["value"])
    if not attr.is_splat:
        return False
    value = ir.FloatAttr(attr.get_splat_value()).value
    return value == (-math.inf if largest else math.inf)


def run(module: ir.Operation, native_when_compared: bool = False) -> None:
    """Rewrite each float max/min reduction of ``module`` (a builtin.module op) in place; with
    ``native_when_compared``, leave a float32/float64 one whose value is only compared."""
    for op in find_ops(module, lambda o: _combiner(o) is not None):
        x_type = tensor_type_of(op.operands[0].type)
        if (
            native_when_compared and x_type.dtype.name in _NATIVE_DTYPES
            and only_compared(op.results[0])
        ):  # fmt: skip
            continue
        largest = _combiner(op) == "maximum"
        combine = select_max if largest else select_min
        identity = _is_identity(op.operands[1], largest)
        dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        b = FunctionBuilder("pairwise")
        x, init = b.arg(x_type), b.arg(tensor_type_of(op.operands[1].type))
        total = pairwise_reduce(b, x, dims, combine, -math.inf if largest else math.inf)
        if not identity:
            total = combine(b, total, b.broadcast(init, total.shape))
        b.ret([total])
        replace_with_function_body(op, b.module_text())
