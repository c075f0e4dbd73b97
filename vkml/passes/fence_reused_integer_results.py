"""Read an integer result that later ops also read through a fusion fence: IREE 3.13 returns
wrong values for some chains of integer results fused into one dispatch.

A chain whose steps fold back onto earlier values (``x[k+1] = (x[0] + 1) - x[k]``, or the
same with ``^``: ``a - (a - x)`` and ``(x ^ a) ^ a`` are ``x``), each step a result, is
fused by IREE into one multi-result ``linalg.generic``. Its canonicalizer folds the steps to
the values they equal, so the generic yields the same value several times, and the
de-duplication of those yields maps the function's results onto the wrong ones: five steps
of ``x[k+1] = (x[0] + 1) - x[k]`` from 3 came back as ``3, 3, 3, 3, 1`` instead of
``1, 3, 1, 3, 1`` (the flow IR exports one yield for the first four results), on llvm-cpu
and on Vulkan alike, from plain StableHLO without vkml's passes. Float arithmetic is not
folded that way (``x + 1 - 1`` is not ``x`` in floats), and the float chains tried came back
right.

Invariant: after this pass, no integer or boolean value that the function returns is read,
in the same function, by an op other than the return, except through a fusion fence
(``vkml.dialect.fences``) of its own, unless it is a constant. IREE then forms no dispatch
that both yields such a value and computes from it, which removed every wrong value seen
(fuzz-found chains of 6 to 72 steps; ``tests/py/passes/test_fence_reused_integer_results.py``).
The fences cost no queue
submission; a value both returned and read further is stored anyway, and its readers read it
back instead of recomputing it in their dispatch.
"""

from __future__ import annotations

from vkml.dialect.fences import FUSION_FENCE
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import fence_fusion

ARGUMENT = "vkml-fence-reused-integer-results"
# A constant result is not computed by a fused chain, so it needs no fence; and a fenced
# constant read inside a device loop failed to compile on Vulkan ("'stream.async.splat' op :
# streamable op expected to be in an execution region", fuzz seed 13).
_CONSTANTS = frozenset({"stablehlo.constant", "arith.constant"})
DESCRIPTION = "read an integer result that later ops read too through a fusion fence"


def _is_integer(value: ir.Value) -> bool:
    try:
        element = str(ir.RankedTensorType(value.type).element_type)
    except ValueError:  # not a ranked tensor
        return False
    return element.startswith(("i", "ui", "si"))  # i1 (bool), i32, ui32, i64


def _fence_function(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1].operation
    seen: set[ir.Value] = set()
    for value in ret.operands:
        if value in seen or isinstance(value.owner, ir.Block) or not _is_integer(value):
            continue
        if value.owner.name in _CONSTANTS:  # no chain computes it; and see _CONSTANTS
            continue
        seen.add(value)
        readers = [
            use.owner for use in value.uses if use.owner != ret and use.owner.name != FUSION_FENCE
        ]
        if not readers:
            continue
        fenced = fence_fusion(value, value.owner)
        for reader in readers:
            for i, operand in enumerate(reader.operands):
                if operand == value:
                    reader.operands[i] = fenced


def run(module: ir.Operation) -> None:
    """Fence the reused integer results of every function of ``module``."""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            _fence_function(op.operation)
