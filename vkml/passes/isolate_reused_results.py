"""Read a result that later ops also read through a fusion stop: IREE 3.13 returns wrong
values for some chains of results fused into one dispatch.

A chain whose steps IREE finds equal to other values, each step a result, is fused by IREE
into one multi-result ``linalg.generic``. Its canonicalizer folds the steps to the values
they equal, so the generic yields the same value several times, and the de-duplication of
those yields maps the function's results onto the wrong ones. Integer chains that fold back
(``x[k+1] = (x[0] + 1) - x[k]``: ``a - (a - x)`` is ``x``; the same with ``^``) came back as
``3, 3, 3, 3, 1`` for ``1, 3, 1, 3, 1``, on llvm-cpu and on Vulkan alike, from plain
StableHLO without vkml's passes. Floats meet it through commutativity: the fuzz campaign
(seed 18) found ``v13 = v12 + v8`` and ``v14 = v8 + v12``, both results read further, fused
with their float64 chain, and ``v14`` came back as ``v12`` (12.5 for 20.0) on cpu and
lavapipe. So results of every element type are isolated, not integers only as before.

Invariant: after this pass, no value that the function returns is read, in the same
function, by an op other than the return, except through a fusion stop
(``vkml.dialect.fusion_stops``) of its own, unless it is a constant. IREE then forms no dispatch
that both yields such a value and computes from it, which removed every wrong value seen
(fuzz-found chains of 6 to 72 integer steps and the float64 case;
``tests/py/passes/test_isolate_reused_results.py``). The fusion stops cost no queue submission; a
value both returned and read further is stored anyway, and its readers read it back instead
of recomputing it in their dispatch.
"""

from __future__ import annotations

from vkml.dialect.fusion_stops import FUSION_STOP
from vkml.dialect.ir import ir
from vkml.dialect.rewrite import stop_fusion

ARGUMENT = "vkml-isolate-reused-results"
# A constant result is not computed by a fused chain, so it needs no fusion stop; and one
# constant read inside a device loop failed to compile on Vulkan ("'stream.async.splat' op :
# streamable op expected to be in an execution region", fuzz seed 13).
_CONSTANTS = frozenset({"stablehlo.constant", "arith.constant"})
DESCRIPTION = "read a result that later ops read too through a fusion stop"


def _is_tensor(value: ir.Value) -> bool:
    try:
        ir.RankedTensorType(value.type)
    except ValueError:  # not a ranked tensor (a token, say)
        return False
    return True


def _isolate_function(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1].operation
    seen: set[ir.Value] = set()
    for value in ret.operands:
        if value in seen or isinstance(value.owner, ir.Block) or not _is_tensor(value):
            continue
        if value.owner.name in _CONSTANTS:  # no chain computes it; and see _CONSTANTS
            continue
        seen.add(value)
        readers = [
            use.owner for use in value.uses if use.owner != ret and use.owner.name != FUSION_STOP
        ]
        if not readers:
            continue
        stopped = stop_fusion(value, value.owner)
        for reader in readers:
            for i, operand in enumerate(reader.operands):
                if operand == value:
                    reader.operands[i] = stopped


def run(module: ir.Operation) -> None:
    """Stop fusion of the reused results of every function of ``module``."""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            _isolate_function(op.operation)
