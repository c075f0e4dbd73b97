"""Cut a function that returns many one-element values so that no dispatch has more than 32.

IREE 3.13 gathers every chain of one-element ops (0-d tensors: scalars) into one dispatch
(its ``FormScalarDispatches``), with a binding for each value that leaves it. Forty chained
0-d results realized together (``realize(*losses)``) made a dispatch of 42 bindings, past
the 32 of IREE's HAL ("binding count 42 > 32" on cpu; "declares 42 storage buffers,
exceeding device limit 32" on lavapipe), so the module could not even be loaded.

Invariant: after this pass, between two cuts of a function's body at most ``GROUP`` of the
one-element values it returns are computed. At each cut, every one-element value computed
before and used after passes through a fusion stop of its own
(``vkml.dialect.fusion_stops``), and the ops after it read the fusion stops' results. A cut
is only made where at most one of those values is computed from after it (the rest are only
returned): IREE 3.13 gave wrong values for chains that read several across a cut (with
fusion stops as with ``stablehlo.optimization_barrier``), so such a function is cut further on or
not at all, and IREE's refusal to load it is then the error. IREE fuses nothing across a
fusion stop, so each group is a dispatch of its own, and all of them stay in one queue submission
(the optimization barriers this pass used until 2026-12-05 were a host wait each). A
function that returns ``GROUP`` or fewer such values is left alone.
"""

from __future__ import annotations

from vkml.dialect.ir import ir
from vkml.dialect.rewrite import find_ops, stop_fusion

ARGUMENT = "vkml-bound-scalar-dispatches"
DESCRIPTION = "split functions returning many one-element values into dispatches of <= 32 bindings"

GROUP = 24  # results per group: under IREE's 32 bindings, with room for the values read


def _small(value: ir.Value) -> bool:
    try:
        shape = ir.RankedTensorType(value.type).shape
    except ValueError:  # not a ranked tensor (a token, say)
        return False
    return all(d >= 0 for d in shape) and all(d <= 1 for d in shape)


def _reads_an_argument(op: ir.Operation) -> bool:
    """Whether ``op`` is a slice or reshape of a function argument (or of such a read): a
    number read from its table (``vkml.compiler.lower``), which IREE reads in place in every
    dispatch that uses it, as it reads the argument itself."""
    while op.name in ("stablehlo.slice", "stablehlo.reshape"):
        source = op.operands[0]
        if isinstance(source.owner, ir.Block):
            return True
        op = source.owner.operation if hasattr(source.owner, "operation") else source.owner
    return False


def _cut_function(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    ret = ops[-1]
    returned = {v for v in ret.operands if _small(v) and not isinstance(v.owner, ir.Block)}
    if len(returned) <= GROUP:
        return
    pending, seen = 0, 0
    for i, op in enumerate(ops[:-1]):
        found = sum(1 for r in op.results if r in returned)
        pending, seen = pending + found, seen + found
        if pending < GROUP or seen == len(returned):  # (no cut after the last group)
            continue
        after = [o for later in ops[i + 1 :] for o in find_ops(later, lambda _: True)]
        read_after = {v for o in after for v in o.operands}
        live = [
            r
            for earlier in ops[: i + 1]
            # a literal is cloned where it is used; a number's table is read where it is used
            if earlier.name != "stablehlo.constant" and not _reads_an_argument(earlier)
            for r in earlier.results
            if r in read_after and _small(r)
        ]
        computed_from = {v for o in after if o.name != "func.return" for v in o.operands}
        if sum(1 for v in live if v in computed_from) > 1:
            # IREE 3.13 gave wrong values when later ops compute from several scalars that
            # cross a cut (benchmarks/results/stress-findings.md): cut further on, or not at
            # all (IREE then refuses to load the module: an error, not a wrong answer)
            continue
        pending = 0
        if not live:
            continue
        # one fusion stop per value: IREE 3.13 miscompiled one barrier of several scalars read
        # out of order (a wrong answer)
        through = {v: stop_fusion(v, ops[i + 1], after=False) for v in live}
        for o in after:
            for k, operand in enumerate(o.operands):
                if operand in through:
                    o.operands[k] = through[operand]


def run(module: ir.Operation) -> None:
    """Cut every function of ``module`` (a builtin.module op) that returns too many scalars."""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            _cut_function(op.operation)
