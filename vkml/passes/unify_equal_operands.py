"""Give an op that reads one value twice, once through a fusion stop, the same operand twice:
IREE 3.13's SPIR-V backend cannot compile the dispatch it forms otherwise.

``and(compute_barrier.end(x), x)`` reads ``x`` twice, once past a fusion stop. IREE forms the
dispatch with the fusion stop still in place, then drops the fusion stop and gives both reads one binding,
since they are one buffer; the body ``andi(%in, %in)`` folds to ``%in`` and the dispatch to a
plain copy, which the SPIR-V pipeline fails on ("failed to legalize operation
'hal.interface.binding.subspan'"), for every Vulkan target tried (llvmpipe, ampere, rdna3,
valhall1): ``and``, ``or``, ``maximum``, ``minimum``, ``select`` and ``clamp`` over i8, i32,
i64 and f32 alike (i1 compiled); llvm-cpu compiles all of them. The fuzz campaign met it on
stopped bit casts of a float argument (stress-findings.md). Given the same SSA value twice, as
``and(f, f)``, IREE folds the op away before it forms dispatches, and every form compiled.

This pass finds, in every op without regions, the operands that are one value modulo what
IREE sees through: fusion stops, duplicate ops (as CSE would merge them), a ``bitcast_convert``
back to the type it came from (how an unsigned value crosses a fusion stop), and ``and``, ``or``,
``maximum``, ``minimum`` of a value with itself and ``select`` between a value and itself. It
replaces them with one of them (a stopped one where there is one, so that the fusion stop keeps
stopping fusion). The values are equal bit for bit, so results do not change. A copy that IREE
finds by folding anything else (``x | 0`` beside a stopped ``x``) is not caught.
"""

from __future__ import annotations

from collections.abc import Hashable

from vkml.dialect.fusion_stops import FUSION_STOP
from vkml.dialect.ir import ir

ARGUMENT = "vkml-unify-equal-operands"
DESCRIPTION = "read one value, not a stopped copy of it beside it, where an op reads it twice"

# ops that are the value itself when both (all) operands are: x & x, max(x, x)
_IDEMPOTENT = frozenset({"stablehlo.and", "stablehlo.or", "stablehlo.maximum", "stablehlo.minimum"})
# ops whose results are not a function of their operands and attributes alone
_OPAQUE = frozenset({
    "stablehlo.custom_call", "stablehlo.optimization_barrier", "stablehlo.rng",
    "stablehlo.rng_bit_generator", "iree_tensor_ext.compute_barrier.start",
    "stablehlo.infeed", "stablehlo.outfeed", "stablehlo.recv", "stablehlo.send",
    "stablehlo.after_all", "stablehlo.create_token",
})  # fmt: skip


class _Keys:
    """A number for each SSA value, equal for values that are one value modulo fusion stops and
    duplicates (equal numbers, equal bits). Numbers, not nested keys: hashing stays shallow
    on chains thousands of ops deep."""

    def __init__(self) -> None:
        self._numbers: dict[ir.Value, int] = {}
        self._interned: dict[Hashable, int] = {}

    def of(self, value: ir.Value) -> int:
        """The value's number; a value not numbered yet (a block argument) is only itself."""
        found = self._numbers.get(value)
        if found is None:
            found = self._numbers[value] = self._intern(("value", len(self._numbers)))
        return found

    def add(self, op: ir.Operation) -> None:
        """Number the results of ``op``, whose operands are numbered (walk order)."""
        for index, value in enumerate(op.results):
            self._numbers[value] = self._number(op, index, value)

    def _intern(self, key: Hashable) -> int:
        return self._interned.setdefault(key, len(self._interned))

    def _number(self, op: ir.Operation, index: int, value: ir.Value) -> int:
        name = op.name
        if len(op.regions) or name in _OPAQUE or not name.startswith(("stablehlo.", FUSION_STOP)):
            return self._intern(("value", len(self._numbers)))
        operands = list(op.operands)
        if name == FUSION_STOP:
            return self.of(operands[0])
        numbers = tuple(self.of(v) for v in operands)
        if name in _IDEMPOTENT and len(set(numbers)) == 1:
            return numbers[0]
        if name == "stablehlo.select" and numbers[1] == numbers[2]:
            return numbers[1]
        if name == "stablehlo.bitcast_convert":
            source = _bitcast_source(operands[0])
            if source is not None and str(source.type) == str(value.type):
                return self.of(source)  # bits out and back: how an unsigned value is stopped
        attributes = tuple(sorted((a, str(op.attributes[a])) for a in op.attributes))
        return self._intern((name, attributes, index, str(value.type), numbers))


def _bitcast_source(value: ir.Value) -> ir.Value | None:
    """What ``value`` is a ``bitcast_convert`` of, through fusion stops; None if it is not one."""
    while _is_fenced(value):
        value = value.owner.operands[0]
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.bitcast_convert":
        return None
    return owner.operands[0]


def _is_fenced(value: ir.Value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.name == FUSION_STOP


def _unify(op: ir.Operation, keys: _Keys) -> None:
    """Give ``op`` one SSA value for operands with one number (a stopped one if any)."""
    operands = list(op.operands)
    groups: dict[Hashable, list[int]] = {}
    for i, value in enumerate(operands):
        groups.setdefault(keys.of(value), []).append(i)
    for indices in groups.values():
        values = [operands[i] for i in indices]
        if len(set(values)) < 2:
            continue
        keep = next((v for v in values if _is_fenced(v)), values[0])
        for i in indices:
            if operands[i] != keep:
                op.operands[i] = keep


def _reads_plain_values(op: ir.Operation) -> bool:
    """An op whose operands are only values: a StableHLO op with several operands, no
    regions, and nothing else to it (a custom call may alias an operand it is given)."""
    name = op.name
    return (
        len(op.operands) > 1
        and not len(op.regions)
        and name.startswith("stablehlo.")
        and name not in _OPAQUE
    )


def run(module: ir.Operation) -> None:
    """Unify the stopped duplicate operands of every op of ``module``."""
    ops: list[ir.Operation] = []
    stopped = False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal stopped
        ops.append(op)
        stopped = stopped or op.name == FUSION_STOP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)  # operands before their readers (SSA dominance)
    if not stopped:  # no two operands can differ only by a fusion stop
        return
    keys = _Keys()
    for op in ops:
        if _reads_plain_values(op):
            _unify(op, keys)
        keys.add(op)
