"""Helpers for passes that rewrite parsed modules: finding ops, reading types, splicing."""

from __future__ import annotations

from collections.abc import Callable

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


def find_ops(module: ir.Operation, predicate: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """Every operation of ``module`` (in walk order) for which ``predicate`` holds."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if predicate(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def replace_with_function_body(op: ir.Operation, function_text: str) -> None:
    """Replace ``op`` by the body of the single function in ``function_text``.

    The function's arguments stand for ``op``'s operands and its returned values for
    ``op``'s results. The body is cloned in front of ``op``, then ``op`` is erased.
    """
    helper = parse_module(function_text, op.context)
    func = helper.body.operations[0]
    block = func.regions[0].blocks[0]
    mapping: dict[ir.Value, ir.Value] = {
        arg: operand for arg, operand in zip(block.arguments, op.operands)
    }
    point = ir.InsertionPoint(op)
    for inner in block.operations:
        if inner.name == "func.return":
            for result, returned in zip(op.results, inner.operands):
                result.replace_all_uses_with(mapping.get(returned, returned))
            break
        clone = inner.clone(ip=point)
        for i, operand in enumerate(clone.operands):
            if operand in mapping:
                clone.operands[i] = mapping[operand]
        for old, new in zip(inner.results, clone.results):
            mapping[old] = new
    op.erase()
