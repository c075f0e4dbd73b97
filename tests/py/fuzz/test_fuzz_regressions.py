"""Minimal reproductions of failures the fuzzing campaign found, each shrunk by hypothesis
and written out as a plain test (tests/py/fuzz/checker.py; scripts/stress/fuzz_campaign.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support.numerics import assert_bit_exact

import vkml
from fuzz.bounds import check_value
from fuzz.checker import Tally, oracles, run_device
from fuzz.programs import build
from fuzz.strategies import Case, Input, Step


def _loop_twice(x: vkml.Tensor, turns: int) -> vkml.Tensor:
    start = vkml.tensor(np.int32(0), device=x.device)
    return vkml.while_loop(lambda i, v: i < turns, lambda i, v: (i + 1, v + v), start, x)[1]


def _while_graphs(device: vkml.Device) -> list[vkml.Tensor]:
    """The two shapes the campaign shrank to: a value fed to a loop that is also (or feeds)
    another result, with the loop's result read again after it."""
    x = vkml.tensor(np.float32(0.5), device=device)
    a = x + x
    looped = _loop_twice(a, 0)
    b = x + x
    again = _loop_twice(b, 2)
    return [a, looped, x + b, x + again, again]


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_while_loop_over_a_value_other_results_read_compiles(name: str) -> None:
    """IREE 3.13's stream partitioner put the dispatch making a loop's initial value in one
    partition with the dispatch reading the loop's result, and failed with 'circular
    dependency: input operation uses partition output' (on vulkan when the initial value is
    itself a result, on cpu when another result reads it). Found by the fuzz campaign:
    ``Case(steps=(binary, binary, while))`` on a 0-d float32."""
    device = vkml.device(name)
    got = _while_graphs(device)
    vkml.realize(*got)
    want = _while_graphs(vkml.reference)
    vkml.realize(*want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"value {k}")


def _realize_case(case: Case, name: str) -> None:
    vkml.realize(*build(case, vkml.device(name)).values)


# hypothesis's shrink of the first Vulkan runtime failure the campaign hit
DEALLOCA = Case(
    (Input("float32", (), "normal", 0),) * 3,
    (
        Step("binary", 205, 0, 0, ()), *[Step("binary", 0, 0, 0, ())] * 1,
        Step("softmax", 0, 0, 0, ()), *[Step("binary", 0, 0, 0, ())] * 2,
        Step("matmul", 0, 0, 0, ()), Step("binary", 0, 0, 0, ()), Step("binary", 0, 237, 0, ()),
        *[Step("binary", 0, 0, 0, ())] * 3, Step("while", 27, 0, 0, ()),
    ),
)  # fmt: skip


def _duplicates_and_a_loop(device: vkml.Device) -> list[vkml.Tensor]:
    """What the campaign's case reduces to: one value asked for twice, a result that reads
    it, and a while loop that runs no turn."""
    x = vkml.tensor(np.float32(0.5), device=device)
    y = vkml.tensor(np.float32(1.5), device=device)
    return [x + (x + x), x + x, x + x, _loop_twice(y + x, 0)]


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_value_asked_for_twice_beside_a_loop_runs(name: str) -> None:
    """IREE 3.13's Vulkan runtime failed with 'queue_dealloca buffer was not returned by
    queue_alloca' on a module returning one value (two vkml nodes IREE merged) into two
    output buffers beside a while loop; realize now asks for each distinct value once and
    the two tensors share its result."""
    got = _duplicates_and_a_loop(vkml.device(name))
    vkml.realize(*got)
    want = _duplicates_and_a_loop(vkml.reference)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"value {k}")
    _realize_case(DEALLOCA, name)


def _two_loops_from_one_value(device: vkml.Device, constant: bool) -> list[vkml.Tensor]:
    start = (
        vkml.arange(2, dtype="uint32", device=device)
        if constant
        else vkml.tensor(np.arange(2, dtype=np.uint32), device=device) + 1
    )
    return [_loop_twice(start, 0), _loop_twice(start, 0), _loop_twice(start, 2)]


@pytest.mark.parametrize("constant", [False, True], ids=["value", "constant"])
@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_loops_starting_from_one_value_run(name: str, constant: bool) -> None:
    """IREE 3.13's host loop deallocates the buffer it starts from: two loops starting from
    one value (or a constant IREE made a global) failed on vulkan with "transient buffer has
    already been queued for deallocation" or "queue_dealloca buffer was not returned by
    queue_alloca". Each loop now starts from a buffer of its own (``own_buffer``). Found by
    the campaign in a 676-value graph."""
    got = _two_loops_from_one_value(vkml.device(name), constant)
    vkml.realize(*got)
    want = _two_loops_from_one_value(vkml.reference, constant)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"value {k}")


# found by the campaign (seed 0), not shrunk: empty int64 inputs through cond and matmul
SIGFPE = Case(
    (Input("int64", (0,), "integral", 112), Input("int64", (1,), "integral", 730)),
    (
        Step("cond", 127, 176, 236, (93, 194, 255, 79, 123, 86)),
        Step("where", 254, 124, 3, (1, 50, 88, 222, 108, 251)),
        Step("bitwise", 243, 132, 137, ()), Step("creation", 198, 48, 160, (121, 124, 130)),
        Step("compare", 73, 172, 114, (178, 177, 204, 84, 146, 179)),
        Step("matmul", 86, 216, 246, (73, 117, 220, 126, 145, 161)),
        Step("reduce", 229, 57, 157, (14, 89, 81, 211, 194)),
    ),
    observe=(126, 14, 50),
)  # fmt: skip


# found by the campaign: a bfloat16 (1, 1, 0) @ (4, 0, 1) matmul, an empty contraction
EMPTY_CONTRACTION = Case(
    (Input("bfloat16", (1, 1, 0), "normal", 65535), Input("bfloat16", (4, 0, 1), "integral", 4230)),
    (Step("matmul", 180, 97, 255, (217, 106, 167, 150)), Step("creation", 76, 86, 89, (213,))),
    observe=(126, 152),
)  # fmt: skip


@pytest.mark.parametrize("case", [SIGFPE, EMPTY_CONTRACTION], ids=["int64-cond", "bf16-k0"])
@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_matmuls_with_a_zero_extent_compile_and_give_zeros(name: str, case: Case) -> None:
    """iree-compile died of SIGFPE on a matmul with a zero extent (a division by it,
    presumably), on cpu and Vulkan; an empty matmul is now zeros, without a dot_general."""
    ref, _ = oracles([case])
    assert run_device(ref, vkml.device(name), Tally()) == []


# the campaign's case: a bool (1,) stacked with itself; on vulkan:0 the replay of its
# copies-only module answered from the first call's buffers (IREE's memoized command buffer)
STACK_ITSELF = Case(
    (Input("bool", (1,), "subnormal", 3425), Input("bool", (), "subnormal", 1023)),
    (Step("concat", 70, 222, 121, (19, 5, 174, 93, 29, 53)),),
    observe=(0,),
)


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_copies_only_graph_replayed_gives_the_same_bits(name: str) -> None:
    ref, _ = oracles([STACK_ITSELF])
    tally = Tally()
    assert run_device(ref, vkml.device(name), tally) == []
    assert tally.checked["replays"] == 3


def _counted_loops(device: vkml.Device, turns: int, carried: int) -> list[vkml.Tensor]:
    """Two counted loops (``i < turns``) over values computed together, beside other results:
    IREE packs their initial values into one allocation."""
    x = vkml.tensor(np.arange(15, dtype=np.float32).reshape(5, 3), device=device)
    limit = vkml.tensor(np.int32(turns), device=device)
    start = vkml.tensor(np.int32(0), device=device)
    values = [x * (k + 2.0) for k in range(carried)]
    results = []
    for j in range(2):
        looped = vkml.while_loop(
            lambda i, *v: i < limit,
            lambda i, *v: (i + 1, *[a + a for a in v]),
            start, *[v + float(j) for v in values],
        )  # fmt: skip
        results += list(looped[1:])
    return results + [x * 7.0, values[0] - 1.0]


@pytest.mark.parametrize("carried", [1, 3])
@pytest.mark.parametrize("turns", [0, 1, 3])
@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_counted_loops_of_any_length_run(name: str, turns: int, carried: int) -> None:
    """Every counted Vulkan loop that ran zero turns failed: IREE 3.13 runs it as a host
    ``scf.for`` and deallocates the buffer it ends with, which after no turn is the slice of
    a larger allocation it started from ("queue_dealloca buffer was not returned by
    queue_alloca"). The loop's results now pass through a barrier. Found by the campaign."""
    got = _counted_loops(vkml.device(name), turns, carried)
    vkml.realize(*got)
    want = _counted_loops(vkml.reference, turns, carried)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_bit_exact(g.numpy(), w.numpy(), f"value {k}")


@pytest.mark.parametrize("dtype", ["int64", "float64", "int32"])
@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_several_wide_constants_realized_together_run(name: str, dtype: str) -> None:
    """Two 64-bit constants realized together (``realize(full((4,), 7, int64), full((),
    7, int64))``) were refused on lavapipe: IREE fills both with its own
    ``__builtin_fill_i64`` dispatch, whose loop bound is the element count, which the loop
    budget could not bound (now it reads IREE's ``util.assume.int`` on it). Found by the
    fuzz campaign (seed 103) as a batch-only refusal: one constant alone is a plain copy."""
    device = vkml.device(name)
    dt = getattr(vkml, dtype)
    shapes = [(4,), (), (2, 3), (70_000,)]
    got = [vkml.full(s, 7, dtype=dt, device=device) for s in shapes]
    vkml.realize(*got)
    for s, t in zip(shapes, got, strict=True):
        assert_bit_exact(t.numpy(), np.full(s, 7, dtype=np.dtype(dtype)), f"full({s}, 7)")


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_many_scalar_results_of_one_chain_realize_together(name: str) -> None:
    """40 chained 0-d results realized together. IREE 3.13 formed one dispatch for all of
    them (its scalar dispatch formation), a binding per result, and the module failed to
    load: "binding count 42 > 32" on cpu, "declares 42 storage buffers, exceeding device
    limit 32" on lavapipe (vkml-bound-scalar-dispatches now cuts it). Found by the fuzz
    campaign (seed 1, batch 3). On Vulkan the fenced literals are computed scalars that cross
    every cut, which the pass does not risk (IREE gave wrong values for such cuts): there the
    module is still refused, and realize computes the graph in parts."""
    device = vkml.device(name)
    x = vkml.tensor(np.float32(3.0), device=device)
    got, y = [], x
    for _ in range(100):
        y = y * 0.5 + 1.0
        got.append(y)
    vkml.realize(*got)
    want, w = [], np.float32(3.0)
    for _ in range(100):
        w = w * np.float32(0.5) + np.float32(1.0)
        want.append(w)
    assert [float(t.numpy()) for t in got] == [float(v) for v in want]


# the two cases of "scalar chains with many values live" the campaign found on lavapipe
# (seed 5): 42 and 44 storage buffers in one dispatch, a module IREE would not load
MANY_LIVE_SCALARS = [
    Case(
        (Input("float64", (1,), "integral", 29961),),
        (Step("cond", 160, 255, 91, (75, 222, 47)),),
        repeat=149,
        observe=(122, 213),
    ),
    Case(
        (
            Input("bool", (), "normal", 1653),
            Input("float16", (), "subnormal", 162),
            Input("bool", (), "special", 52338),
        ),
        (
            Step("binary", 137, 48, 9, (248,)),
            Step("unary", 55, 53, 186, (97, 231, 91, 229, 188, 47)),
            Step("view", 157, 88, 40, (120, 239, 196, 39, 233, 5)),
        ),
        repeat=16,
        observe=(85,),
    ),
]


@pytest.mark.parametrize("case", MANY_LIVE_SCALARS, ids=["cond-chain", "bool-float16"])
def test_scalar_chains_with_many_values_live_run_in_parts(case: Case) -> None:
    """Realized whole, in pieces and replayed on lavapipe: the same bits as reference. IREE
    still refuses the whole module (too many bindings); realize computes it in parts."""
    ref, _ = oracles([case])
    assert run_device(ref, vkml.device("vulkan:0"), Tally()) == []


# found by the campaign (seed 1, second sitting), not shrunk: an int32 (3, 5, 4, 1) selecting
# between itself and a float32 (4, 5), broadcast to (3, 5, 4, 5)
CLAMPED_BROADCAST = Case(
    (Input("int32", (3, 5, 4, 1), "special", 65535), Input("float32", (4, 5), "subnormal", 147)),
    (Step("where", 220, 203, 208, (69, 106, 195)), Step("binary", 235, 12, 44, (180, 225))),
    observe=(138, 148, 128),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_broadcast_whose_tiles_end_at_a_minimum_runs(name: str) -> None:
    """Lavapipe refused this graph ('could run an unbounded number of loop iterations'): IREE
    ends each workgroup's rows at ``arith.minui``, which the loop budget could not bound."""
    ref, _ = oracles([CLAMPED_BROADCAST])
    assert run_device(ref, vkml.device(name), Tally()) == []


@pytest.mark.parametrize("name", ["cpu", "vulkan:0", "reference"])
@pytest.mark.parametrize(("shape", "axis"), [((1, 0), 0), ((1, 0), 1), ((0, 3), 1), ((0,), 0)])
def test_gathers_of_an_empty_tensor_give_an_empty_result(
    name: str, shape: tuple[int, ...], axis: int
) -> None:
    """``sort`` and ``take_along_axis`` of a tensor with a zero extent emitted a
    ``stablehlo.gather`` with slices of 1 along an empty axis, which IREE refuses to parse
    (a CompileError on every device). Found by the fuzz campaign's first sitting with the
    gathers: ``gather`` on a float64 (1, 0)."""
    device = vkml.device(name)
    x = vkml.tensor(
        np.zeros(shape, np.float64 if name != "vulkan:0" else np.float32), device=device
    )
    idx = vkml.zeros(shape, dtype=vkml.int32, device=device)
    got = [vkml.sort(x, axis=axis), vkml.take_along_axis(x, idx, axis=axis)]
    vkml.realize(*got)
    for t in got:
        assert t.numpy().shape == shape


# found by the campaign on lavapipe (sittings 9 and 10), not shrunk: an op reading a value
# twice, once across a fence (a fenced bit cast of a float argument beside the bit cast)
FENCED_TWICE = [
    Case(
        (Input("float64", (1, 1, 4, 5), "special", 402),),
        (
            Step("view", 111, 179, 18, ()), Step("bitcast", 95, 193, 127, ()),
            Step("fusion_stop", 20, 0, 17, (220, 42, 237, 13, 175, 149)),
            Step("bitwise", 255, 235, 61, (1, 186, 243, 255, 120)),
            Step("bitwise", 78, 120, 205, (0, 34, 87, 127, 90, 122)),
            Step("softmax", 168, 0, 10, (208, 221)), Step("bitwise", 221, 55, 162, (26,)),
        ),
        observe=(148, 232, 254),
    ),
    Case(
        (
            Input("float32", (1,), "integral", 52498), Input("float32", (), "special", 65536),
            Input("float32", (3,), "normal", 5674),
        ),
        (
            Step("bitcast", 137, 106, 0, (112, 24, 172, 53, 45, 245)),
            Step("concat", 105, 69, 23, (186,)), Step("bitwise", 243, 106, 214, (205, 252)),
            Step("where", 12, 241, 232, (77, 185, 95, 109)),
            Step("view", 196, 80, 154, (196, 215, 3, 195, 200, 18)),
            Step("where", 255, 241, 28, (160, 179, 68, 160, 104, 144)),
            Step("scalar", 109, 234, 179, (0,)), Step("bitcast", 170, 85, 169, ()),
            Step("where", 115, 5, 169, (150, 125, 144, 188, 239)),
            Step("reduce", 0, 254, 46, (105, 85, 12, 139, 35, 82)),
        ),
        observe=(167, 10, 15),
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", FENCED_TWICE, ids=["float64-bits", "float32-bits"])
@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_an_op_reading_a_value_and_its_fenced_copy_compiles(name: str, case: Case) -> None:
    """IREE 3.13's SPIR-V backend failed on these graphs ("failed to legalize operation
    'hal.interface.binding.subspan'"): an ``and`` of a fenced bit cast and the bit cast
    became a dispatch reading one buffer twice, which folded to a plain copy
    (vkml-unify-equal-operands now gives the op one operand)."""
    ref, _ = oracles([case])
    assert run_device(ref, vkml.device(name), Tally()) == []


# found by the campaign (seed 14, batch 7), not shrunk: argsort along axis 0 of a float16
# (2, 3, 5) input and a clamped cast of the same input, realized together
SORTED_BESIDE_A_CAST = Case(
    (Input("int64", (1, 3, 1), "normal", 23259), Input("float16", (2, 3, 5), "integral", 1)),
    (
        Step("gather", 11, 253, 52, (24, 158, 142, 79)),
        Step("gather", 5, 81, 210, (160, 221, 79, 233)),
        Step("cast", 69, 124, 245, (212, 137, 196, 249, 62)),
        Step("bounded", 252, 14, 79, (234, 234)),
        Step("view", 200, 155, 255, (120, 156, 15, 127, 99)), Step("bounded", 28, 41, 44, ()),
    ),
    observe=(70,),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_sort_beside_another_read_of_its_input_is_right(name: str) -> None:
    """Lavapipe sorted two of the 15 columns wrongly: IREE staged the widened input in
    workgroup memory, written by rows and read by columns with no barrier between
    (vkml.compiler.workgroup_races now finds such a dispatch, and the module is compiled
    again with its transposes isolated)."""
    ref, _ = oracles([SORTED_BESIDE_A_CAST])
    assert run_device(ref, vkml.device(name), Tally()) == []


# found by the campaign (seed 14, batch 7) on both devices, not shrunk: float32 tan(11)
TAN_NEAR_A_POLE = Case(
    (
        Input("int32", (1,), "integral", 1169), Input("float16", (1, 1, 3, 5), "normal", 3434),
        Input("int32", (1,), "integral", 100),
    ),
    (
        Step("reduce", 132, 168, 172, ()), Step("bounded", 14, 167, 0, (201, 254, 127)),
        Step("softmax", 191, 211, 148, (238, 142, 128, 85, 74, 33)),
        Step("matmul", 54, 171, 222, (210, 195, 0)), Step("cast", 0, 61, 60, (132,)),
        Step("bitcast", 132, 243, 149, (57, 119, 6, 66, 92)),
        Step("softmax", 223, 52, 144, (1, 39, 28, 103, 33, 255)),
        Step("reduce", 109, 97, 132, (0, 53, 249, 68, 221)), Step("while", 205, 81, 167, ()),
        Step("fusion_stop", 241, 26, 0, ()),
    ),
    observe=(167, 27, 71),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_tan_near_a_pole_is_within_the_quotients_bound(name: str) -> None:
    """tan(11) = -225.95 in float32 came out 0.0156 away on cpu (0.034 on lavapipe): over
    256 ULP and over 16 eps absolute, the two bounds the checker knew, but within what
    sin / cos promises there (docs/contracts.md, "sin and cos")."""
    ref, _ = oracles([TAN_NEAR_A_POLE])
    assert run_device(ref, vkml.device(name), Tally()) == []


def test_tan_further_off_than_the_quotients_bound_fails() -> None:
    want = np.array([-225.95087], np.float32)
    x = np.array([11.0], np.float32)
    check_value("tan", np.array([-226.03], np.float32), want, [x], "cpu", "tan")  # 0.08 off
    with pytest.raises(AssertionError, match="absolute error"):
        check_value("tan", np.array([-226.2], np.float32), want, [x], "cpu", "tan")


# found by the campaign (seed 13, batch 19 and shrunk): two device loops over a 0-d bool, and
# the constant False both returned and read in the loops
CONSTANT_IN_LOOPS = Case(
    (Input("bool", (), "integral", 445),),
    (
        Step("while", 225, 5, 11, (128, 178, 33, 24, 19, 188)), Step("while", 20, 181, 119, ()),
        Step("bitwise", 1, 254, 126, (89, 137, 112, 224, 165, 81)),
        Step("binary", 120, 35, 252, (162, 41)),
        Step("bitcast", 3, 194, 169, (72, 200, 143, 124, 198, 196)),
        Step("creation", 254, 18, 96, ()),
        Step("bitwise", 225, 46, 63, (207, 83, 15, 126, 7, 255)), Step("where", 67, 93, 254, ()),
    ),
    observe=(128,),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_constant_result_read_in_device_loops_compiles(name: str) -> None:
    """Lavapipe's compile failed ("'stream.async.splat' op : streamable op expected to be in
    an execution region"): vkml-isolate-reused-results fenced the constant, which IREE
    then could not place inside the loops; constants are no longer fenced."""
    ref, _ = oracles([CONSTANT_IN_LOOPS])
    assert run_device(ref, vkml.device(name), Tally()) == []


# found by the campaign (seed 15, batch 10), not shrunk: a float16 value computed and
# broadcast in one dispatch
BROADCAST_IN_ITS_DISPATCH = Case(
    (Input("float16", (), "subnormal", 1002), Input("float64", (3, 3, 1), "special", 327)),
    (
        Step("compare", 31, 157, 127, (39, 248, 143, 83, 253, 142)),
        Step("binary", 128, 222, 16, ()),
        Step("reduce", 229, 68, 180, (119, 118, 232, 150, 110, 211)),
        Step("matmul", 69, 135, 197, (74, 22, 77, 123, 160)), Step("scalar", 238, 207, 23, ()),
        Step("compare", 146, 127, 127, (167,)),
        Step("concat", 132, 149, 87, (139, 62, 105, 154, 155, 237)),
        Step("scalar", 255, 102, 124, (123, 35)),
        Step("creation", 157, 25, 28, (234, 170, 168, 185, 213, 120)),
        Step("matmul", 183, 72, 156, (254,)),
    ),
    observe=(250, 108, 117),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_value_broadcast_in_its_dispatch_runs(name: str) -> None:
    """IREE staged a float16 value computed in a dispatch in workgroup memory for a broadcast
    reading it, with no barrier: vkml refused the module (the race check), as long as only
    transposes were isolated on the recompile; broadcasts read a stored value now too."""
    ref, _ = oracles([BROADCAST_IN_ITS_DISPATCH])
    assert run_device(ref, vkml.device(name), Tally()) == []


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 3, 1), 1), ((2, 5), 1)])
def test_a_float64_cumsum_compiles_and_keeps_negative_zero(name: str, shape, axis) -> None:
    """Every float64 cumsum failed to compile, on cpu and lavapipe ("'stream.yield' op used
    resource not listed in explicit captures"): IREE cannot pad with a non-zero 64-bit
    value, and the scan padded its shifts with -0.0. Found while reducing the campaign's
    broadcast case (seed 15), whose graph held one."""
    rng = np.random.default_rng(3)
    x0 = rng.integers(-4, 5, size=shape).astype(np.float64)
    x0.flat[0] = -0.0  # -0.0 + (the shift's first places) must stay -0.0
    got = vkml.cumsum(vkml.tensor(x0, device=vkml.device(name)), axis=axis)
    want = vkml.cumsum(vkml.tensor(x0, device=vkml.reference), axis=axis)
    assert_bit_exact(got.numpy(), want.numpy(), "cumsum")
    assert np.signbit(got.numpy().flat[0])


# found by the campaign (seed 16, batch 27, sitting 13), not shrunk: a softmax's NaN bit-cast
# to int32 (0x7FC00000 on cpu, 0xFFC00000 on the reference)
NAN_THROUGH_A_BIT_CAST = Case(
    (Input("bool", (1, 1, 5), "integral", 16574),),
    (
        Step("scalar", 137, 254, 242, (50, 222, 114)), Step("reduce", 29, 166, 20, (33, 237, 237, 198)),
        Step("softmax", 92, 125, 177, (6, 230, 133, 218, 79, 51)), Step("concat", 212, 109, 27, (108,)),
        Step("bitcast", 146, 1, 45, (2,)), Step("gather", 255, 130, 221, (42, 233, 12, 252, 42, 150)),
        Step("scalar", 102, 193, 176, ()), Step("view", 0, 109, 54, (74, 252)),
        Step("fusion_stop", 103, 172, 125, (147, 172)), Step("gather", 67, 194, 95, (118, 181, 191, 145)),
    ),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_a_bit_cast_nan_is_checked_as_one_pattern(name: str) -> None:
    """The contract promises where NaNs are, not their sign or payload; the campaign's bit
    cast therefore gives every NaN one pattern first (fuzz/steps.py ``_one_nan``) and the
    integers it makes are then compared bit for bit, as before."""
    ref, _ = oracles([NAN_THROUGH_A_BIT_CAST])
    assert run_device(ref, vkml.device(name), Tally()) == []


def test_a_nans_bits_differ_between_cpu_and_the_reference() -> None:
    """Why the campaign needs ``_one_nan``: the devices disagree on a computed NaN's bits (if
    this starts failing, the contract could promise them)."""
    x = [[float("inf"), 0.0]]
    got = [
        vkml.bitcast(vkml.softmax(vkml.tensor(x, device=vkml.device(n))), "int32").numpy()
        for n in ("cpu", "reference")
    ]
    assert got[0][0, 0] != got[1][0, 0]


# found by the campaign (seed 18, sitting 14), shortened from 24 repeats to 10: float64 sums
# and selects, two of the sums equal up to the order of their operands
COMMUTED_SUMS = Case(
    (Input("float64", (2,), "special", 1128), Input("float64", (2,), "special", 56)),
    (Step("binary", 214, 52, 52, ()), Step("where", 37, 26, 241, (224, 68, 166, 43, 192, 92))),
    repeat=10,
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_float_results_equal_up_to_operand_order_keep_their_values(name: str) -> None:
    """A wrong answer on cpu and lavapipe: ``v8 + v12`` came back as ``v12`` (12.5 for 20.0).
    IREE merged it with ``v12 + v8`` in the fused chain and mapped the results wrongly; float
    results read further are now fenced as integer ones were (vkml-isolate-reused-results)."""
    ref, _ = oracles([COMMUTED_SUMS])
    assert run_device(ref, vkml.device(name), Tally()) == []


# found by the campaign (seed 19, batch 0, graph 34), not shrunk: a bfloat16 value broadcast
# beside float16 matmuls, comparisons and reductions
BROADCAST_STAGED_ALIKE = Case(
    (
        Input("float16", (5,), "special", 664), Input("bfloat16", (1, 5, 1), "subnormal", 376),
        Input("float16", (1, 1), "special", 6246),
    ),
    (
        Step("matmul", 1, 3, 183, ()), Step("compare", 170, 61, 16, (103,)),
        Step("reduce", 248, 34, 43, ()),
    ),
    repeat=85,
    observe=(186, 248, 104),
)  # fmt: skip


def test_a_value_every_invocation_stages_alike_runs_on_lavapipe() -> None:
    """Refused on lavapipe ("could read workgroup memory that another shader invocation
    writes"): IREE stages the workgroup's widened bfloat16 element at [0], each invocation
    storing the same value before reading it back, which the race check now follows."""
    ref, _ = oracles([BROADCAST_STAGED_ALIKE])
    assert run_device(ref, vkml.device("vulkan:0"), Tally()) == []


# found by the campaign (seed 20, graph 37), not shrunk: exp of a quotient of NaN, the
# quotient also a result
EXP_OF_A_RESULT = Case(
    (Input("float64", (), "normal", 273), Input("bfloat16", (5, 3, 1), "special", 28)),
    (
        Step("bounded", 223, 187, 0, (143,)), Step("compare", 126, 121, 30, (118, 23, 27, 95, 85, 89)),
        Step("scalar", 95, 132, 241, (129, 214, 99, 26)), Step("view", 95, 255, 147, ()),
        Step("unary", 71, 183, 126, (78, 9, 185)), Step("bounded", 53, 79, 244, ()),
        Step("matmul", 8, 52, 166, ()), Step("gather", 113, 144, 66, ()),
    ),
    observe=(44, 27),
)  # fmt: skip


@pytest.mark.parametrize("name", ["cpu", "vulkan:0"])
def test_exp_of_a_result_read_further_keeps_its_nans(name: str) -> None:
    """cpu gave 0 for exp(NaN / 1) while only integer results read further were fenced: IREE
    mapped the result onto another value of its fused chain (vkml-isolate-reused-results)."""
    ref, _ = oracles([EXP_OF_A_RESULT])
    assert run_device(ref, vkml.device(name), Tally()) == []


# found by the campaign (seed 21, graph 12), not shrunk: a float64 mean over an empty axis
MEAN_OF_NOTHING = Case(
    (Input("float64", (1, 0), "special", 200), Input("float64", (), "special", 956)),
    (
        Step("scalar", 228, 168, 35, (85,)), Step("compare", 169, 255, 25, (83, 110, 151, 168, 143, 18)),
        Step("creation", 215, 213, 94, ()), Step("softmax", 127, 73, 83, (139, 0, 214, 235, 144)),
        Step("scalar", 80, 7, 53, (37, 188, 35, 107, 232)), Step("cast", 210, 168, 29, (20, 35, 90)),
        Step("bitwise", 112, 36, 134, ()), Step("concat", 162, 18, 254, (86, 229, 225, 115, 140, 52)),
        Step("reduce", 120, 234, 41, (73, 125, 241, 53)), Step("fusion_stop", 245, 77, 47, (28, 169, 0)),
    ),
)  # fmt: skip


def test_a_float64_mean_of_nothing_is_nan_on_lavapipe() -> None:
    """lavapipe gave 0.0 for NaN: IREE folds the sum over the empty axis into the literal
    0.0, and lavapipe folds 0.0 / n to 0.0; such a value is now hidden behind the fence as a
    literal is (``FunctionBuilder.is_static``)."""
    ref, _ = oracles([MEAN_OF_NOTHING])
    assert run_device(ref, vkml.device("vulkan:0"), Tally()) == []


# found by the campaign (sitting 16, seed 23, graph 12), not shrunk: pow of x - nan
POW_OF_A_KNOWN_NAN = Case(
    (Input("int64", (), "special", 65536), Input("int64", (), "integral", 1086)),
    (
        Step("scalar", 142, 1, 37, (85, 133, 10)), Step("binary", 218, 212, 247, (216, 176, 20, 216)),
        Step("scalar", 131, 254, 185, (139,)), Step("fusion_stop", 252, 114, 252, (176, 200, 133, 2, 241, 52)),
        Step("creation", 145, 11, 126, ()), Step("bounded", 180, 92, 75, ()),
        Step("bitcast", 50, 223, 145, (227, 11, 158, 154)), Step("bitwise", 185, 158, 255, ()),
        Step("bitwise", 252, 51, 232, (106,)), Step("compare", 32, 27, 145, ()),
    ),
)  # fmt: skip


def test_pow_of_a_nan_the_compiler_knows_is_nan_on_cpu() -> None:
    """cpu gave 0 for pow(x - nan, ...): LLVM folded IREE's polynomial pow of the NaN it knew
    to 0. Alone the graph was right (its NaN went through a buffer); in a batch of five such
    graphs on other inputs it was wrong in three. Operands of such ops are opaque (ADR 0016)."""
    batch = [
        dataclasses.replace(
            POW_OF_A_KNOWN_NAN,
            inputs=tuple(
                dataclasses.replace(i, seed=i.seed + k) for i in POW_OF_A_KNOWN_NAN.inputs
            ),
        )
        for k in range(5)
    ]
    ref, _ = oracles(batch)
    assert run_device(ref, vkml.cpu, Tally()) == []


# found by this pooling fuzz step: max_pool with a one-tap window of every other
# element is an argmax and a gather along an axis of length 1, of a strided slice
@pytest.mark.parametrize("device", ["cpu", "vulkan:0"])
def test_a_gather_along_an_axis_of_one_element_of_a_strided_slice(device: str) -> None:
    """IREE's llvm-cpu failed to compile (``LLVM Translation failed for operation:
    builtin.unrealized_conversion_cast``) a ``take_along_axis`` along an axis of length 1 of
    a strided slice: every index of such an axis names its one element, so the gather is
    now a broadcast."""
    x = vkml.tensor(np.arange(6.0, dtype=np.float32), device=device)
    column = x[0:5:2].reshape(3, 1)
    picks = vkml.tensor(np.array([[0, 0], [-1, 5], [3, -7]]), device=device)
    got = vkml.take_along_axis(column, picks, 1)
    assert got.tolist() == [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]]
    assert vkml.max_pool(x.reshape(1, 6), 1, 2).tolist() == [[0.0, 2.0, 4.0]]


# found by the campaign (2026-12-07, 400 graphs): a bfloat16 matmul of int32 and bfloat16
# operands, the int32 values wide
def test_a_matmul_promoted_to_bfloat16_rounds_its_integer_operand_on_the_reference_too() -> None:
    """An integer operand of a matmul promoted to a 16-bit float is rounded to that dtype
    before the float32 contraction: the devices did so for a long contraction, but a
    product over one element (widened straight to float32) and the reference kept the bits
    a bfloat16 operand cannot hold: 3 bfloat16 ULPs from the devices, past the bound."""
    # 2**28 + 2**20 - 1 rounds down to 2**28 in bfloat16; times 1 + 2**-7 it would round up
    a = np.array([[[2**28 + 2**20 - 1], [3]]], np.int32)  # (1, 2, 1)
    b = np.array([[[1 + 2**-7, 1.0]]], np.float32)
    for device in ("reference", "cpu", "vulkan:0"):
        x = vkml.tensor(a, device=device)
        y = vkml.tensor(b, device=device).astype(vkml.bfloat16)
        got = (x @ y).astype(vkml.float32).numpy()
        rounded = a.astype(np.float32).astype(vkml.bfloat16.numpy).astype(np.float32)
        assert np.array_equal(got, (rounded @ b).astype(vkml.bfloat16.numpy).astype(np.float32)), (
            device
        )


# found by issue 35's scikit-learn run: StandardScaler's variance, and vkml.var itself, of
# float64 along an axis whose length is not a power of two
@pytest.mark.parametrize("device", ["cpu"])
def test_two_float64_pairwise_sums_in_a_row_compile_and_are_right(device: str) -> None:
    """IREE 3.13 failed to compile (``'stream.yield' op used resource not listed in explicit
    captures``) a module with two float64 reductions padded by the same -0.0 (the mean, then
    the sum of squared deviations): every ``vkml.var`` of float64 over 3 or 50 rows on cpu.
    The float64 padding is now a concatenated block of -0.0."""
    rng = np.random.default_rng(0)
    for rows in (3, 50):
        x = rng.standard_normal((rows, 4)) * [1.0, 10.0, 0.1, 3.0]
        t = vkml.tensor(x, device=device)
        np.testing.assert_allclose(vkml.var(t, 0).numpy(), x.var(0), rtol=1e-12)
        centred = t - t.mean(0)
        np.testing.assert_allclose(
            (centred * centred).sum(0).numpy(), ((x - x.mean(0)) ** 2).sum(0), rtol=1e-12
        )
