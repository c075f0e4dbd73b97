"""A batched matmul whose contraction is cut into chunks, emitted as StableHLO.

To contract ``a`` (*batch, m, k) with ``b`` (*batch, k, n) in chunks of ``chunk``: write
k = q * chunk + r. The first q * chunk columns of ``a`` (rows of ``b``) become q chunks, a
new batch axis, so one ``dot_general`` gives the q partial products (*batch, q, m, n); they
are summed over that axis in vkml's pairwise order, and the product of the last r columns,
if any, is added last. The order is fixed by the shapes, so the result is the same every run.
Each chunk's contraction is at most ``chunk`` long: no per-thread loop IREE makes for it can
be longer (``vkml-split-contractions`` uses this on drivers that cap shader loops).
"""

from __future__ import annotations

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.pairwise import add, pairwise_reduce
from vkml.dialect.types import TensorType, Value


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
