"""Realize batches of fuzzed graphs on the reference and on devices, and check the contract.

The rule for a composite graph (ULP errors of a chain of non-exact ops are not additive, so
no bound follows for a chain):

- **exact**: a value every one of whose paths from the inputs runs through bit-exact ops only
  (``OpDef.bit_exact``) must equal the reference bit for bit, any NaN matching any NaN;
- **bounded**: a value made by exactly one non-exact op, the step's last node, from exact
  values, is checked at that op's stated bound (``fuzz.bounds``);
- **unchecked**: anything else (a non-exact op downstream of another, softmax's chain) is
  checked for shape and dtype only, and for not crashing;
- **subnormal**: a value holding a float32/float64/bfloat16 subnormal on the reference, and
  everything computed from one, is checked for shape and dtype only: the cpu device flushes
  them (docs/contracts.md "Subnormals: the stated exception") and the contract promises no
  bits downstream of a flushed value. float16 subnormals are inside the contract and checked.
- **refused**: a value whose own nodes hold an op the op table or the device refuses is not
  realized with the batch; realizing it alone must raise ``UnsupportedOperatorError`` naming
  that op, its dtype and the device (before anything is compiled). Values computed from a
  refused value are left out.
- **pieces**: realizing a graph in pieces (the case's ``observe`` values first, read with
  ``.numpy()``, then the rest) must give every output the same bits as realizing it whole,
  whatever its class but subnormal: same inputs, same device, same bits.
- **replay**: the graph built once more from other input data (``Input.seed`` moved) and
  realized whole runs the executable the first realize compiled (a memory hit) on new buffers
  and new data, checked by the rules above against the reference's values for that data. This
  is the check that caught IREE replaying a copies-only command buffer on the first call's
  buffers (with the same data, a stale answer can look right).

A batch's graphs are independent and realized in ONE ``vkml.realize`` per device (twice more
for the pieces, once more for the replay on other data): one compile per batch, which is what makes thousands of graphs affordable.
A batch that crashes is re-run graph by graph to name the graph that crashed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from support.numerics import assert_bit_exact

import vkml
from fuzz.bounds import check_value
from fuzz.programs import Built, Value, build, describe, outputs, refused_by
from fuzz.strategies import FLUSHED, Case, reseeded
from vkml.graph.walk import region_nodes, toposort


@dataclass
class Failure:
    """One crash or contract violation: where, in which graph, and what happened."""

    device: str
    graph: int  # index of the case in its batch
    kind: str  # "crash" or "violation"
    message: str


@dataclass
class Tally:
    """What one device saw over a campaign."""

    graphs: int = 0
    nodes: int = 0
    checked: dict[str, int] = field(default_factory=dict)  # outputs by class
    crashes: int = 0
    violations: int = 0
    seconds: float = 0.0

    def count(self, what: str, n: int = 1) -> None:
        self.checked[what] = self.checked.get(what, 0) + n


@dataclass
class Oracle:
    """One case on the reference: its values' arrays, descriptions and bounded operands."""

    case: Case
    values: list[Value]
    arrays: list[np.ndarray]
    operands: dict[int, list[np.ndarray]]
    subnormal: list[bool]
    nodes: int


def _has_flushed_subnormal(a: np.ndarray) -> bool:
    if a.dtype.name not in FLUSHED or not a.size:
        return False
    tiny = float(ml_dtypes.finfo(a.dtype).smallest_normal)
    mag = np.abs(a.astype(np.float64))
    return bool(np.any((mag > 0) & (mag < tiny)))


def oracles(batch: list[Case]) -> tuple[list[Oracle | None], list[Failure]]:
    """The reference's view of every case (None for one the reference itself crashed on)."""
    built = [build(case, vkml.reference) for case in batch]
    described = [describe(b) for b in built]
    extra = [
        {v.index: [vkml.Tensor(s) for s in v.bounded.src] for v in d if v.bounded is not None}
        for d in described
    ]
    failures: list[Failure] = []
    try:
        vkml.realize(*[t for b in built for t in b.values], *_flat(extra))
    except Exception as exc:  # noqa: BLE001 - any exception is a crash to count
        failures = _isolate("reference", built, [list(range(len(b.values))) for b in built], exc)
    result: list[Oracle | None] = []
    crashed = {f.graph for f in failures}
    for i, (case, b, d, ops) in enumerate(zip(batch, built, described, extra)):
        if i in crashed:
            result.append(None)
            continue
        arrays = [t.numpy() for t in b.values]
        sub: list[bool] = []
        for v in d:
            sub.append(_has_flushed_subnormal(arrays[v.index]) or any(sub[s] for s in v.sources))
        operands = {k: [t.numpy() for t in ts] for k, ts in ops.items()}
        nodes = len(toposort([t.node for t in b.values], descend=lambda n: True))
        result.append(Oracle(case, d, arrays, operands, sub, nodes))
    return result, failures


def _flat(extra: list[dict[int, list[vkml.Tensor]]]) -> list[vkml.Tensor]:
    return [t for ops in extra for ts in ops.values() for t in ts]


def _isolate(
    device: str, built: list[Built], picks: list[list[int]], exc: Exception
) -> list[Failure]:
    """Re-realize a crashed batch graph by graph: the graphs that crash alone."""
    found = []
    for i, (b, pick) in enumerate(zip(built, picks)):
        try:
            vkml.realize(*[b.values[k] for k in pick])
        except Exception as alone:  # noqa: BLE001 - any exception is a crash to count
            found.append(Failure(device, i, "crash", f"{type(alone).__name__}: {alone}"))
    if not found:
        found.append(Failure(device, -1, "crash", f"batch only: {type(exc).__name__}: {exc}"))
    return found


@dataclass
class Plan:
    """One case on one device: what is realized with the batch, and what must be refused."""

    built: Built
    outputs: list[int]
    probes: list[tuple[int, tuple[str, str]]]  # value, (op, dtype) the device must refuse
    runnable: list[int]  # every value the device runs


def plan_on(oracle: Oracle, device: vkml.Device) -> Plan:
    built = build(oracle.case, device)
    dtypes = tuple(d.name for d in device.dtypes)
    refused: list[bool] = []
    probes = []
    for v in oracle.values:
        own = refused_by(v, device.kind, dtypes)
        inherited = any(refused[s] for s in v.sources)
        refused.append(own is not None or inherited)
        if own is not None and not inherited:
            probes.append((v.index, own))
    keep = [i for i in outputs(oracle.case, len(oracle.values)) if not refused[i]]
    return Plan(built, keep, probes, [i for i, r in enumerate(refused) if not r])


def check_outputs(oracle: Oracle, plan: Plan, kind: str, tally: Tally) -> list[str]:
    """Each realized output against the reference by its class; the messages of violations."""
    bad = []
    for i in plan.outputs:
        v, want = oracle.values[i], oracle.arrays[i]
        got = plan.built.values[i].numpy()
        what = f"value {i}"
        if oracle.subnormal[i] or (not v.exact and v.bounded is None):
            cls = "subnormal" if oracle.subnormal[i] else "unchecked"
            op = None
        else:
            cls = "exact" if v.exact else "bounded"
            op = None if v.exact else v.bounded.op
        attrs = dict(v.bounded.attrs) if v.bounded is not None else {}
        tally.count(cls)
        try:
            if cls in ("subnormal", "unchecked"):
                assert (got.dtype, got.shape) == (want.dtype, want.shape), (
                    f"{what}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
                )
            else:
                check_value(op, got, want, oracle.operands.get(i, []), kind, what, attrs)
        except AssertionError as exc:
            bad.append(f"{cls}{'' if op is None else ' ' + op} {exc}")
    return bad


def check_refusals(plan: Plan, device: vkml.Device) -> list[str]:
    """Each value the device must refuse, realized alone: the documented error, or a message."""
    bad = []
    for i, (op, dtype) in plan.probes:
        try:
            vkml.realize(plan.built.values[i])
        except vkml.UnsupportedOperatorError as exc:
            named = (exc.op, exc.dtype, exc.device)
            if exc.device != device.name or (exc.op, exc.dtype) not in _ops_of(plan, i):
                bad.append(f"value {i}: refused as {named}, expected ({op}, {dtype})")
            continue
        bad.append(f"value {i}: ran ({op}, {dtype}), which the op table says {device} refuses")
    return bad


def _ops_of(plan: Plan, i: int) -> set[tuple[str, str]]:
    nodes = toposort([plan.built.values[i].node])
    inner = [n for node in nodes for n in region_nodes(node)]
    return {(n.op, n.dtype.name) for n in nodes + inner}


def run_device(
    batch: list[Oracle | None], device: vkml.Device, tally: Tally, pieces: bool = True
) -> list[Failure]:
    """Every case of the batch on ``device`` in one realize, checked; then in pieces."""
    start = time.perf_counter()
    live = [(i, o) for i, o in enumerate(batch) if o is not None]
    plans = {i: plan_on(o, device) for i, o in live}
    failures = _realize(device.name, plans, {i: p.outputs for i, p in plans.items()})
    crashed = {f.graph for f in failures}
    for i, o in live:
        if i in crashed:
            continue
        plan = plans[i]
        bad = check_outputs(o, plan, device.kind, tally) + check_refusals(plan, device)
        failures += [Failure(device.name, i, "violation", m) for m in bad]
        tally.count("refusals checked", len(plan.probes))
    if pieces:
        ok = {i: o for i, o in live if i not in crashed}
        failures += _check_pieces(ok, plans, device, tally)
        failures += _check_replay(ok, plans, device, tally)
    tally.graphs += len(live)
    tally.nodes += sum(o.nodes for _, o in live)
    tally.crashes += len({f.graph for f in failures if f.kind == "crash"})
    tally.violations += len({f.graph for f in failures if f.kind == "violation"})
    tally.seconds += time.perf_counter() - start
    return failures


def _realize(name: str, plans: dict[int, Plan], picks: dict[int, list[int]]) -> list[Failure]:
    """One realize of the picked values of every plan; on a crash, graph by graph."""
    order = sorted(plans)
    try:
        vkml.realize(*[plans[i].built.values[k] for i in order for k in picks[i]])
        return []
    except Exception as exc:  # noqa: BLE001 - any exception is a crash to count
        built = [plans[i].built for i in order]
        found = _isolate(name, built, [picks[i] for i in order], exc)
        for f in found:
            f.graph = order[f.graph] if f.graph >= 0 else -1
        return found


def _check_pieces(
    ok: dict[int, Oracle], whole: dict[int, Plan], device: vkml.Device, tally: Tally
) -> list[Failure]:
    """The same graphs built again and realized in two pieces: the same bits as whole."""
    pieces = {
        i: Plan(build(o.case, device), whole[i].outputs, [], whole[i].runnable)
        for i, o in ok.items()
    }
    observed = {
        i: sorted({k % len(o.values) for k in o.case.observe} & set(whole[i].runnable))
        for i, o in ok.items()
    }  # fmt: skip
    failures = _realize(device.name, pieces, observed)
    first = {f.graph for f in failures}
    # a graph that crashed alone has nothing realized; one batch-only crash leaves them all so
    seen = {
        i: {k: pieces[i].built.values[k].numpy() for k in observed[i]}
        for i in pieces
        if i not in first and -1 not in first
    }
    failures += _realize(device.name, pieces, {i: p.outputs for i, p in pieces.items()})
    crashed = {f.graph for f in failures}
    for i in pieces:
        if i in crashed:
            continue
        for k in whole[i].outputs:
            if ok[i].subnormal[k]:
                continue  # flushing depends on the module's fusion: no bits are promised
            want = whole[i].built.values[k].numpy()
            got = {
                "realized in pieces": pieces[i].built.values[k].numpy(),
                "observed first": seen.get(i, {}).get(k),
            }
            for how, array in got.items():
                if array is None:
                    continue
                try:
                    assert_bit_exact(array, want, f"value {k} {how} vs whole")
                except AssertionError as exc:
                    failures.append(Failure(device.name, i, "violation", str(exc)))
        tally.count("pieces", len(whole[i].outputs))
    return failures


def _check_replay(
    ok: dict[int, Oracle], whole: dict[int, Plan], device: vkml.Device, tally: Tally
) -> list[Failure]:
    """The graphs built again from other input data and realized whole, a memory hit of the
    module the first realize compiled, checked against the reference on that data."""
    fresh, _ = oracles([reseeded(o.case) for o in ok.values()])
    again = {i: o for i, o in zip(ok, fresh) if o is not None}
    plans = {i: plan_on(o, device) for i, o in again.items()}
    failures = _realize(device.name, plans, {i: whole[i].outputs for i in plans})
    crashed = {f.graph for f in failures}
    for i, o in again.items():
        if i in crashed:
            continue
        bad = check_outputs(o, Plan(plans[i].built, whole[i].outputs, [], []), device.kind, Tally())
        failures += [
            Failure(device.name, i, "violation", f"replayed on new data: {m}") for m in bad
        ]
        tally.count("replays", len(whole[i].outputs))
    return failures
