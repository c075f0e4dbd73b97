"""The fast slice of the fuzzing campaign (scripts/stress/fuzz_campaign.py runs the long one).

Derandomized hypothesis batches of fuzzed graphs on cpu and vulkan:0, each checked against
the reference by tests/py/fuzz/checker.py's rule and realized again in pieces; plus fixed
cases for what a few random draws may miss: a refused op, a graph of over a thousand nodes.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vkml
from fuzz.checker import Tally, oracles, run_device
from fuzz.programs import build, describe
from fuzz.steps import BINARY
from fuzz.strategies import KINDS, Case, Input, Step, batches, cases
from vkml.ops.registry import OPS

DEVICES = ("cpu", "vulkan:0")


def check(batch: list[Case], devices: tuple[str, ...] = DEVICES) -> dict[str, Tally]:
    """Run ``batch`` everywhere; fail with every crash and violation found."""
    ref, failures = oracles(batch)
    tallies = {name: Tally() for name in devices}
    for name in devices:
        failures += run_device(ref, vkml.device(name), tallies[name])
    assert not failures, "\n".join(
        f"{f.device} {f.kind} in {batch[f.graph] if f.graph >= 0 else 'the batch'}: {f.message}"
        for f in failures
    )
    return tallies


@settings(
    max_examples=2, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
@given(batches(12, max_steps=8))
def test_fuzzed_graphs_keep_the_contract_on_cpu_and_vulkan(batch: list[Case]) -> None:
    check(batch)


def test_generator_reaches_every_op_of_the_op_table() -> None:
    """The step kinds between them record every op in ``OPS`` (nothing is realized).

    Enumerated, not sampled: every kind, on a float, an integer and a bool operand, with its
    first two parameters (which op, which variant) over every small value. A hypothesis sweep
    missed a different op on each machine (atan2 in CI, acosh here) although derandomized."""
    inputs = tuple(
        Input(dtype, (3, 4), "normal", seed)
        for seed, dtype in enumerate(("float32", "int32", "bool"), start=1)
    )
    seen: set[str] = set()
    for kind, a, first, second in itertools.product(KINDS, range(3), range(24), range(4)):
        step = Step(kind, a, a + 1, a + 2, (first, second, 1, 1, 1))
        for value in describe(build(Case(inputs, (step,)), vkml.reference)):
            seen.update(op for op, _ in value.ops)
    assert set(OPS) - seen == set()


def test_refused_op_raises_the_documented_error_on_each_device() -> None:
    """float64 remainder: refused by cpu and vulkan (``OpDef.refuses``), run by the reference;
    the checker realizes it alone and expects ``UnsupportedOperatorError``."""
    f64 = Input("float64", (2, 3), "special", 5)
    remainder = Step("binary", 0, 0, 0, (BINARY.index("remainder"),))
    tallies = check([Case((f64,), (remainder, Step("binary", 1, 0, 0, ())))])
    for name in DEVICES:
        assert tallies[name].checked.get("refusals checked") == 1, tallies[name]


@pytest.mark.parametrize("name", DEVICES)
def test_a_graph_of_over_a_thousand_nodes_keeps_the_contract(name: str) -> None:
    ins = (Input("float32", (3, 4), "special", 1), Input("int32", (4,), "special", 2))
    body = (
        Step("binary", 255, 254, 0, (0,)), Step("view", 255, 0, 0, (2, 1, 5, 1, 2)),
        Step("where", 255, 254, 253, (1,)), Step("reduce", 254, 0, 0, (0, 1, 1)),
        Step("cast", 253, 0, 0, (4,)), Step("unary", 255, 0, 0, (1,)),
    )  # fmt: skip
    case = Case(ins, body, repeat=120, observe=(7, 100))
    ref, _ = oracles([case])
    assert ref[0] is not None and ref[0].nodes > 1000, ref[0] and ref[0].nodes
    check([case], (name,))


@settings(max_examples=2, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(st.lists(cases(max_steps=6, max_repeat=30), min_size=4, max_size=4))
def test_random_programs_realized_in_pieces_match_whole_on_cpu(batch: list[Case]) -> None:
    check(batch, ("cpu",))
