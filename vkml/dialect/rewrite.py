"""Helpers for passes that rewrite parsed modules: finding ops, reading types, splicing."""

from __future__ import annotations

from collections.abc import Callable

from vkml.dialect.fusion_stops import FUSION_STOP
from vkml.dialect.ir import ir, parse_module
from vkml.dialect.types import TensorType
from vkml.dtypes import DType, to_dtype

_ELEMENT_DTYPES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i1": "bool",
    "i32": "int32",
    "i64": "int64",
    "ui32": "uint32",
}


def element_dtype(element: ir.Type) -> DType:
    """The vkml dtype of an MLIR element type (DTypeError for one vkml does not use)."""
    return to_dtype(_ELEMENT_DTYPES.get(str(element), str(element)))


def tensor_type_of(t: ir.Type) -> TensorType:
    """The vkml TensorType of a ranked tensor ``ir.Type``."""
    ranked = ir.RankedTensorType(t)
    return TensorType(tuple(ranked.shape), element_dtype(ranked.element_type))


def stop_fusion(value: ir.Value, anchor: ir.Operation, after: bool = True) -> ir.Value:
    """A new ``FUSION_STOP`` of ``value``, inserted right after ``anchor`` (or right before
    it); returns the value past it (the caller moves the uses it wants onto it). An unsigned
    value crosses as its signless bits (``vkml.dialect.fusion_stops.SIGNLESS``)."""
    point = ir.InsertionPoint.after(anchor) if after else ir.InsertionPoint(anchor)
    with point, anchor.location:
        ranked = ir.RankedTensorType(value.type)
        element = str(ranked.element_type)  # "ui32": unsigned
        unsigned = element.startswith("ui")
        crossing = value
        if unsigned:
            signless = ir.IntegerType.get_signless(int(element[2:]))
            bits_type = ir.RankedTensorType.get(ranked.shape, signless)
            crossing = _op("stablehlo.bitcast_convert", value, bits_type)
        stopped = _op(FUSION_STOP, crossing, crossing.type)
        return _op("stablehlo.bitcast_convert", stopped, value.type) if unsigned else stopped


def _op(name: str, operand: ir.Value, result: ir.Type) -> ir.Value:
    return ir.Operation.create(name, results=[result], operands=[operand]).result


def find_ops(module: ir.Operation, predicate: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """Every operation of ``module`` (in walk order) for which ``predicate`` holds."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if predicate(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def reduce_combiner(op: ir.Operation) -> str | None:
    """The combiner of ``op`` when it is a one-input ``stablehlo.reduce`` whose body is a
    single op (``"add"``, ``"maximum"``, ...: the name without ``stablehlo.``); else None."""
    if op.name != "stablehlo.reduce" or len(op.operands) != 2:
        return None
    body = [o.name for o in op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[1] != "stablehlo.return":
        return None
    return body[0].removeprefix("stablehlo.")


def replace_with_function_body(op: ir.Operation, function_text: str) -> None:
    """Replace ``op`` by the body of the single function in ``function_text``.

    The function's arguments stand for ``op``'s operands and its returned values for
    ``op``'s results. The body is moved in front of ``op``, then ``op`` is erased.
    """
    returned, _ = _splice_body(op, function_text, list(op.operands), after=False)
    for result, value in zip(op.results, returned):
        result.replace_all_uses_with(value)
    op.erase()


def wrap_results(op: ir.Operation, function_text: str) -> None:
    """Pass ``op``'s results through the body of the single function in ``function_text``.

    The function's arguments stand for ``op``'s operands followed by ``op``'s results; the
    body is moved right after ``op``, which stays as it is, and every other use of ``op``'s
    results becomes a use of the function's returned values.
    """
    returned, moved = _splice_body(op, function_text, [*op.operands, *op.results], after=True)
    for result, value in zip(op.results, returned):
        if value != result:
            result.replace_all_uses_except(value, moved)


def _splice_body(
    anchor: ir.Operation, function_text: str, inputs: list[ir.Value], after: bool
) -> tuple[list[ir.Value], list[ir.Operation]]:
    """Move the body of the single function in ``function_text`` in front of ``anchor`` (or
    right after it), its arguments bound to ``inputs``. Returns the values its
    ``func.return`` names and the moved ops.

    Moved, not cloned: every Python view of an op costs a failed import of a Python module
    for its dialect (stablehlo has none), and a clone would make a second view per op.
    """
    helper = parse_module(function_text, anchor.context)
    block = helper.body.operations[0].regions[0].blocks[0]
    bound: dict[ir.Value, ir.Value] = dict(zip(block.arguments, inputs))
    *body, terminator = block.operations
    if terminator.name != "func.return":
        raise ValueError("the helper function does not end in func.return")
    previous = anchor
    for inner in body:
        if after:
            inner.move_after(previous)
            previous = inner
        else:
            inner.move_before(anchor)
        for i, operand in enumerate(inner.operands):
            if operand in bound:
                inner.operands[i] = bound[operand]
    returned = [bound.get(value, value) for value in terminator.operands]
    terminator.erase()
    return returned, [inner.operation for inner in body]
