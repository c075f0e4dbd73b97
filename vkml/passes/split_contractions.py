"""Cut every long matmul contraction into chunks, for drivers that cap shader loops.

Invariant: after this pass no ``stablehlo.dot_general`` contracts more than ``chunk``
elements (``CHUNK`` unless the pipeline asks for less); a longer one became chunked products
summed in a fixed order (``vkml.dialect.contraction``). IREE's Vulkan code loops over a
contraction inside each thread, and Mesa's lavapipe stops every shader after 65,535 loop
iterations in all, silently: a K = 65,536 matmul of ones gave 65,535. Only targets with a loop cap run it
(``pipelines.pipeline_for``); the matmul contract there stays the bound of ADR 0005, as
everywhere (the chunking changes the order of the sum, not its precision).
"""

from __future__ import annotations

import re

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.contraction import chunked_dot
from vkml.dialect.ir import ir, parse_module
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of

ARGUMENT = "vkml-split-contractions"
DESCRIPTION = "cut matmul contractions longer than CHUNK into chunks (drivers that cap loops)"

# A quarter of lavapipe's cap. IREE loops over a chunk in steps of 1 to 16 and, for small
# odd shapes, runs up to 4 chunks or rows in one thread (measured: 2-by-3 results in batches
# of 4 took 4 * 16,384 iterations), so the compile checks the budget and, where it is over,
# compiles again with smaller chunks (``vkml.compiler.compile.compile_module``), down to MIN_CHUNK.
CHUNK = 1 << 14
MIN_CHUNK = 1 << 8

_DIMS = re.compile(
    r"(lhs_batching|rhs_batching|lhs_contracting|rhs_contracting)_dimensions = \[([\d, ]*)\]"
)


def _dimension_numbers(op: ir.Operation) -> dict[str, list[int]]:
    text = str(op.attributes["dot_dimension_numbers"])
    found = {
        kind: [int(d) for d in dims.split(",") if d.strip()] for kind, dims in _DIMS.findall(text)
    }
    return {
        kind: found.get(kind, [])
        for kind in ("lhs_batching", "rhs_batching", "lhs_contracting", "rhs_contracting")
    }


def _long_canonical_dot(op: ir.Operation, chunk: int) -> bool:
    """A dot_general in the form vkml emits ((*batch, m, k) x (*batch, k, n)) with k > chunk."""
    if op.name != "stablehlo.dot_general":
        return False
    x = tensor_type_of(op.operands[0].type)
    y = tensor_type_of(op.operands[1].type)
    dims = _dimension_numbers(op)
    batch = list(range(len(x.shape) - 2))
    canonical = (
        len(x.shape) == len(y.shape) >= 2
        and dims["lhs_batching"] == batch == dims["rhs_batching"]
        and dims["lhs_contracting"] == [len(x.shape) - 1]
        and dims["rhs_contracting"] == [len(y.shape) - 2]
    )
    return canonical and x.shape[-1] > chunk


def run(module: ir.Operation, chunk: int = CHUNK) -> None:
    """Rewrite each contraction of ``module`` (a builtin.module op) longer than ``chunk``."""
    for op in find_ops(module, lambda o: _long_canonical_dot(o, chunk)):
        b = FunctionBuilder("contraction")
        x = b.arg(tensor_type_of(op.operands[0].type))
        y = b.arg(tensor_type_of(op.operands[1].type))
        out = tensor_type_of(op.results[0].type)
        b.ret([chunked_dot(b, x, y, len(x.shape) - 2, out, chunk)])
        replace_with_function_body(op, b.module_text())


def splits(text: str, chunk: int) -> bool:
    """Whether MLIR ``text`` has a contraction this pass would cut with ``chunk``."""
    with ir.Context() as context:
        module = parse_module(text, context)
        return bool(find_ops(module.operation, lambda o: _long_canonical_dot(o, chunk)))
