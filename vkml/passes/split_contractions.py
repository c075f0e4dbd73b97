"""Cut every long matmul contraction into chunks, for drivers that cap shader loops.

Invariant: after this pass no ``stablehlo.dot_general`` contracts more than ``chunk``
elements (``CHUNK`` unless the pipeline asks for less); a longer one became chunked products
summed in a fixed order (the recipe below). IREE's Vulkan code loops over a
contraction inside each thread, and Mesa's lavapipe stops every shader after 65,535 loop
iterations in all, silently: a K = 65,536 matmul of ones gave 65,535. Only targets with a loop cap run it
(``pipelines.pipeline_for``); the matmul contract there stays the bound of ADR 0005, as
everywhere (the chunking changes the order of the sum, not its precision).

The recipe below: a batched matmul whose contraction is cut into chunks, emitted as StableHLO.

To contract ``a`` (*batch, m, k) with ``b`` (*batch, k, n) in chunks of ``chunk``: write
k = q * chunk + r. The first q * chunk columns of ``a`` (rows of ``b``) become q chunks, a
new batch axis, so one ``dot_general`` gives the q partial products (*batch, q, m, n); they
are summed over that axis in vkml's pairwise order, and the product of the last r columns,
if any, is added last. The order is fixed by the shapes, so the result is the same every run.
Each chunk's contraction is at most ``chunk`` long: no per-thread loop IREE makes for it can
be longer (``vkml-split-contractions`` uses this on drivers that cap shader loops).
"""

from __future__ import annotations

import re

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.ir import ir, parse_module
from vkml.dialect.pairwise import add, pairwise_reduce
from vkml.dialect.rewrite import find_ops, replace_with_function_body, tensor_type_of
from vkml.dialect.types import TensorType, Value

ARGUMENT = "vkml-split-contractions"
DESCRIPTION = "cut matmul contractions longer than CHUNK into chunks (drivers that cap loops)"

# A quarter of lavapipe's cap. IREE loops over a chunk in steps of 1 to 16 and, for small
# odd shapes, runs up to 4 chunks or rows in one thread (measured: 2-by-3 results in batches
# of 4 took 4 * 16,384 iterations), so the compile checks the budget and, where it is over,
# compiles again with smaller chunks (``vkml.compiler.compile.run_pipeline``), down to MIN_CHUNK.
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


# -- the recipe ---------------------------------------------------------------------------


def chunked_dot(
    b: FunctionBuilder, x: Value, y: Value, batch: int, out: TensorType, chunk: int
) -> Value:
    """``dot_general`` of ``x`` (*batch, m, k) and ``y`` (*batch, k, n) with the contraction
    cut into chunks of at most ``chunk``; ``out`` is the (*batch, m, n) result type."""
    lead = list(x.shape[:batch])
    m, k = x.shape[batch:]
    n = y.shape[-1]
    q, r = divmod(k, chunk)
    if q == 0 or (q == 1 and r == 0):
        return b.dot_general(x, y, batch, out)
    zeros = [0] * batch
    ones = [1] * (batch + 2)
    split = q * chunk
    xs = b.slice(x, [*zeros, 0, 0], [*lead, m, split], ones)
    ys = b.slice(y, [*zeros, 0, 0], [*lead, split, n], ones)
    # (*batch, m, q, chunk) -> (*batch, q, m, chunk): the chunks become a batch axis
    xs = b.transpose(
        b.reshape(xs, (*lead, m, q, chunk)), [*range(batch), batch + 1, batch, batch + 2]
    )
    ys = b.reshape(ys, (*lead, q, chunk, n))
    partial = b.dot_general(xs, ys, batch + 1, out.with_shape((*lead, q, m, n)))
    pad = -0.0 if out.dtype.is_float else 0
    total = pairwise_reduce(b, partial, (batch,), add, pad)
    if r == 0:
        return total
    xr = b.slice(x, [*zeros, 0, split], [*lead, m, k], ones)
    yr = b.slice(y, [*zeros, split, 0], [*lead, k, n], ones)
    return b.binary("add", total, b.dot_general(xr, yr, batch, out))
