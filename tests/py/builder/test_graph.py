"""``vkml.Graph.builder`` (``vkml/builder/``): Python ``if``/``for``/``while``/``match`` on device
values recorded once as one graph, launched again without recording; each form gives what the
same function gives run as plain Python (the oracle: its conditions read back and decided on
the host), bit for bit, on cpu, reference and vulkan:0; what cannot be recorded is refused
naming the line."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader
from vkml.builder.ast_rewrite import BuilderSyntaxError
from vkml.builder.recorder import BuilderError

DEVICES = [vkml.reference, vkml.cpu]
if vkml.runtime.vulkan_loader.vulkan_device_reports():
    DEVICES.append(vkml.device("vulkan:0"))

RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 3)).astype(np.float32)


# -- the forms -----------------------------------------------------------------------------
def branches(x, limit):  # type: ignore[no-untyped-def]
    if x.amax() > limit:
        y = vkml.minimum(x, limit)
        scale = x.sum()
    elif x.amin() < -limit:
        y = -x
        scale = x.sum() * 2.0
    else:
        y = x * 2.0
        scale = vkml.tensor(np.float32(1.0), device=x.device)
    return {"y": y * scale, "scale": scale}


def bounded_loop(x, limit):  # type: ignore[no-untyped-def]
    for _ in range(12):
        if x.amax() > limit:
            break
        x = x * 1.5 + 0.25
    return x


def bounded_loop_reading_its_item(x, limit):  # type: ignore[no-untyped-def]
    for i in range(20):  # each turn its own constant: one executable per turn on Vulkan
        if x.amax() > limit:
            break
        x = x * 1.25 + float(i) * 0.01
    return x


def long_bounded_loop(x, limit):  # type: ignore[no-untyped-def]
    for _ in range(40):  # more turns left than one host sync runs: a device loop
        if x.amax() > limit:
            break
        x = x * 1.25 + 0.125
    return x


def loop_with_continue(x, limit):  # type: ignore[no-untyped-def]
    total = x.sum() * 0.0
    for i in range(6):
        x = x + 1.0
        if x.amax() < limit:
            continue
        total = total + x.sum() * float(i)
    return total, x


def python_while(x, limit):  # type: ignore[no-untyped-def]
    steps = 0
    while steps < 3:  # a Python condition: unrolled at record time
        x = x * 0.5 + limit
        steps += 1
    return x


def switch(k, x):  # type: ignore[no-untyped-def]
    match k:
        case 0:
            y = x + 1.0
        case 1 | 2:
            y = x * 10.0
        case _:
            y = -x
    return y


def nested(x, limit):  # type: ignore[no-untyped-def]
    if x.sum() > 0.0:
        if x.amax() > limit:
            y = x - limit
        else:
            y = x + limit
    else:
        y = x * 0.0
    return y


def helper_and_closure(x, limit):  # type: ignore[no-untyped-def]
    def shift(v):  # type: ignore[no-untyped-def]
        return v + OFFSET

    y = shift(x)
    if y.amax() > limit:
        y = shift(y) * 0.5
    return y


def device_while(x, limit):  # type: ignore[no-untyped-def]
    steps = x.sum() * 0.0
    while x.amax() < limit:  # a device condition: a loop on the device (0 turns for 0.5)
        x = x * 1.5 + 0.25
        steps = steps + 1.0
    return x, steps


def device_while_with_break(x, limit):  # type: ignore[no-untyped-def]
    n = limit * 0.0
    while n < 40.0:  # more turns than one host sync runs
        n = n + 1.0
        if x.amax() > limit:
            break
        y = x * 1.25  # a temporary of the body
        x = y + 0.125
    return x, n


def device_while_with_continue(x, limit):  # type: ignore[no-untyped-def]
    total = x.sum() * 0.0
    n = limit * 0.0
    while n < 7.0:
        n = n + 1.0
        x = x * 0.875 + 0.5
        if x.amax() < limit:
            continue
        total = total + x.sum()
    return total, x


def bounded_loop_with_not(x, limit):  # type: ignore[no-untyped-def]
    for _ in range(12):  # the spelling docs/builder.md and GradientError recommend
        if not (x.amax() < limit):
            break
        x = x * 1.5 + 0.25
    return x


def conditions_with_and_or_not(x, limit):  # type: ignore[no-untyped-def]
    if x.amax() > limit and x.amin() < limit or not x.sum() > 0.0:
        y = x * 2.0
    elif OFFSET > 1.0 or (x.sum() < limit and OFFSET > 0.5):  # Python operands mixed in
        y = x - 1.0
    else:
        y = x + 1.0
    n = limit * 0.0
    while n < 5.0 and not x.amax() > limit:
        x = x * 1.5 + 0.25
        n = n + 1.0
    return y, x, n


OFFSET = 0.75
FORMS = {
    "bounded_loop_with_not": bounded_loop_with_not,
    "conditions_with_and_or_not": conditions_with_and_or_not,
    "branches": branches,
    "bounded_loop": bounded_loop,
    "bounded_loop_reading_its_item": bounded_loop_reading_its_item,
    "long_bounded_loop": long_bounded_loop,
    "loop_with_continue": loop_with_continue,
    "python_while": python_while,
    "nested": nested,
    "helper_and_closure": helper_and_closure,
    "device_while": device_while,
    "device_while_with_break": device_while_with_break,
    "device_while_with_continue": device_while_with_continue,
}


def as_arrays(result):  # type: ignore[no-untyped-def]
    if isinstance(result, dict):
        return {k: v.numpy() for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return [v.numpy() for v in result]
    return result.numpy()


def assert_same(got, want, what: str) -> None:  # type: ignore[no-untyped-def]
    if isinstance(want, dict):
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{what}: {k}")
    elif isinstance(want, list):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


# on vulkan:0 in make test: a branch, nesting, and the two kinds of device loop; every form
# with make test-exhaustive (each form is a few lavapipe compiles)
ON_VULKAN = ("branches", "nested", "bounded_loop_reading_its_item", "device_while")


def _form_cases() -> list[object]:
    return [
        pytest.param(form, device, id=f"{form}-{device}", marks=pytest.mark.exhaustive)
        if device.name.startswith("vulkan") and form not in ON_VULKAN
        else pytest.param(form, device, id=f"{form}-{device}")
        for form in FORMS
        for device in DEVICES
    ]


@pytest.mark.parametrize(("form", "device"), _form_cases())
def test_a_recorded_graph_gives_what_the_function_gives_in_python(
    form: str, device: vkml.Device
) -> None:
    fn = FORMS[form]
    builder = vkml.Graph.builder(fn)
    g = builder(vkml.tensor(X, device=device), vkml.tensor(np.float32(0.0), device=device))
    for limit in (0.5, 2.0, 40.0):  # each decides the conditions differently
        # the oracle: the function as plain Python on the reference device, each condition
        # read back and decided on the host (these ops are bit-exact across devices)
        x, lim = (
            vkml.tensor(X, device=vkml.reference),
            vkml.tensor(np.float32(limit), device=vkml.reference),
        )
        want = as_arrays(fn(x, lim))
        g.bind(limit=vkml.tensor(np.float32(limit), device=device))
        assert_same(as_arrays(g()), want, f"{form} limit={limit}")


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_match_on_a_device_integer_is_a_switch(device: vkml.Device) -> None:
    builder = vkml.Graph.builder(switch)
    g = builder(vkml.tensor(np.int64(0), device=device), vkml.tensor(X, device=device))
    for k in (0, 1, 2, 3, -5):
        g.bind(k=vkml.tensor(np.int64(k), device=device))
        ref = vkml.reference
        want = switch(vkml.tensor(np.int64(k), device=ref), vkml.tensor(X, device=ref)).numpy()
        np.testing.assert_array_equal(g().numpy(), want, err_msg=f"k={k}")


def test_one_graph_serves_every_decision_and_launches_without_recording() -> None:
    g = vkml.Graph.builder(branches)(vkml.tensor(X), vkml.tensor(np.float32(0.5)))
    g()
    compiles = vkml.stats()["compiles"]
    calls = []
    for limit in (0.5, 40.0, 2.0):
        g.bind(limit=np.float32(limit))
        calls.append(g()["y"].numpy())
    assert vkml.stats()["compiles"] == compiles
    assert not np.array_equal(calls[0], calls[1])
    before = vkml.stats()["invocations"]
    g(5)
    assert vkml.stats()["invocations"] - before == 5
    assert g.schedule.invocations_per_launch == 1 and g.schedule.selects >= 2
    assert g.schedule.launches == 9 and "cpu" in g.backend


def test_print_of_a_tensor_works_while_recording(capsys: pytest.CaptureFixture[str]) -> None:
    @vkml.Graph.builder
    def chatty(x):  # type: ignore[no-untyped-def]
        print("inside", x, x * 2.0)  # docs/builder.md: print works
        return x * 2.0

    g = chatty(vkml.tensor(X))
    out = capsys.readouterr().out
    assert "inside Tensor(<input 'x'>, shape=(4, 3), dtype=float32" in out
    assert "Tensor(<lazy mul>, shape=(4, 3)" in out
    np.testing.assert_array_equal(g().numpy(), X * 2.0)


def test_python_conditions_are_decided_once_at_record_time() -> None:
    seen = []

    @vkml.Graph.builder
    def debug_switch(x):  # type: ignore[no-untyped-def]
        if DEBUG:
            print("recording with debug")  # print works: it runs once, when recording
            seen.append("debug")
            y = x * 3.0
        else:
            y = x
        return y

    g = debug_switch(vkml.tensor(X))
    assert seen == ["debug"]
    g()
    g()
    assert seen == ["debug"]  # not run again
    np.testing.assert_array_equal(g().numpy(), X * np.float32(3.0))
    assert g.schedule.selects == 0


DEBUG = True


def test_what_cannot_be_recorded_is_refused_naming_the_line() -> None:
    def python_count(x):  # type: ignore[no-untyped-def]
        steps = 0
        while x.amax() < 10.0:
            x = x * 2.0
            steps += 1  # a Python int the device decides how often to change
        return x * float(steps)

    with pytest.raises(
        BuilderError,
        match=r"line \d+: 'steps' is 0 before a loop on a device condition and changes inside",
    ):
        vkml.Graph.builder(python_count)(vkml.tensor(X))

    def read_after(x):  # type: ignore[no-untyped-def]
        while x.amax() < 10.0:
            y = x * 2.0  # the body's own: unbound after the loop, as Python's may not run
            x = y
        return y

    with pytest.raises(UnboundLocalError, match="'y'"):
        vkml.Graph.builder(read_after)(vkml.tensor(X))

    def counted(x):  # type: ignore[no-untyped-def]
        steps = 0
        for _ in range(4):
            if x.amax() > 3.0:
                break
            x = x * 2.0
            steps += 1  # a Python count of turns a device condition decides
        return x * float(steps)

    with pytest.raises(BuilderError, match=r"'steps' is 1 in one arm of a device condition and 0"):
        vkml.Graph.builder(counted)(vkml.tensor(X))

    def device_return(x):  # type: ignore[no-untyped-def]
        if x.sum() > 0.0:
            return x
        return -x

    with pytest.raises(BuilderError, match="cannot choose a 'return'"):
        vkml.Graph.builder(device_return)(vkml.tensor(X))

    def one_arm(x):  # type: ignore[no-untyped-def]
        if x.sum() > 0.0:
            y = x
        return y

    with pytest.raises(BuilderError, match=r"'y' is assigned in only one arm"):
        vkml.Graph.builder(one_arm)(vkml.tensor(X))

    def two_shapes(x):  # type: ignore[no-untyped-def]
        if x.sum() > 0.0:
            y = x
        else:
            y = x.sum()
        return y

    with pytest.raises(vkml.ShapeError, match=r"'y' is float32\[4, 3\] in one arm .* float32\[\]"):
        vkml.Graph.builder(two_shapes)(vkml.tensor(X))

    def python_values(x):  # type: ignore[no-untyped-def]
        if x.sum() > 0.0:
            n = 1
        else:
            n = 2
        return x * float(n)

    with pytest.raises(BuilderError, match=r"'n' is 1 in one arm of a device condition and 2"):
        vkml.Graph.builder(python_values)(vkml.tensor(X))

    def vector_condition(x):  # type: ignore[no-untyped-def]
        if x > 0.0:
            x = -x
        return x

    with pytest.raises(BuilderError, match=r"the condition is a bool\[4, 3\] tensor"):
        vkml.Graph.builder(vector_condition)(vkml.tensor(X))

    with pytest.raises(BuilderSyntaxError, match="not a lambda"):
        vkml.Graph.builder(lambda x: x)


@pytest.mark.parametrize("turns", [1, 3, 20])
def test_a_device_while_gives_python_s_values_whatever_its_turns_per_sync(turns: int) -> None:
    builder = vkml.Graph.builder(turns_per_sync=turns)(device_while_with_break)
    g = builder(vkml.tensor(X), vkml.tensor(np.float32(0.0)))
    for limit in (-5.0, 3.0, 1e6):  # breaks at once, after some turns, never (40 turns)
        ref = vkml.reference
        want = as_arrays(device_while_with_break(
            vkml.tensor(X, device=ref), vkml.tensor(np.float32(limit), device=ref)
        ))  # fmt: skip
        assert_same(as_arrays(g.bind(limit=np.float32(limit))()), want, f"limit={limit}")
    assert g.schedule.loops == 1 and g.schedule.invocations_per_launch == 1


def test_predicated_turns_select_once_per_value() -> None:
    # where(keep, where(running, f, x), x), a turn's update nested in the loop's own select,
    # made IREE's elementwise fusion exponential in the turns: 12 turns of bounded_loop on
    # 4x3 took 170 s to compile for cpu; folded to one select, 2 s
    g = vkml.Graph.builder(bounded_loop)(vkml.tensor(X), vkml.tensor(np.float32(2.0)))
    assert g.schedule.loops == 0  # 11 turns left after the first: fewer than 16, unrolled
    nested = [
        n
        for n in g._captured.schedule
        if n.op == "where" and n.src[1].op == "where" and n.src[1].src[2] is n.src[2]
    ]
    assert not nested


def test_a_bounded_loop_that_does_not_read_its_item_runs_on_the_device() -> None:
    g = vkml.Graph.builder(long_bounded_loop)(vkml.tensor(X), vkml.tensor(np.float32(2.0)))
    # 16 turns recorded, not 40 (each turn ~26 nodes, its Python numbers one node each)
    assert g.schedule.loops == 1 and g.schedule.nodes < 600
    g = vkml.Graph.builder(bounded_loop_reading_its_item)(
        vkml.tensor(X), vkml.tensor(np.float32(2.0))
    )
    assert g.schedule.loops == 0  # the body reads i: each turn is its own


def test_turns_per_sync_is_checked() -> None:
    for bad in (0, -1, 1025, 2.0, True):
        with pytest.raises(ValueError, match="turns_per_sync must be an int from 1 to 1024"):
            vkml.Graph.builder(turns_per_sync=bad)  # type: ignore[arg-type]
    assert vkml.cpu.turns_per_sync == 16


def test_an_error_in_the_user_s_code_points_at_the_user_s_line() -> None:
    def bad(x):  # type: ignore[no-untyped-def]
        if x.sum() > 0.0:
            y = x @ x  # (4, 3) @ (4, 3): a shape error, on this line
        else:
            y = x
        return y

    line = bad.__code__.co_firstlineno + 2
    with pytest.raises(vkml.ShapeError) as caught:
        vkml.Graph.builder(bad)(vkml.tensor(X))
    assert any(str(e.path) == __file__ and e.lineno + 1 == line for e in caught.traceback)


def test_bind_checks_the_parameter_shape_dtype_and_device() -> None:
    g = vkml.Graph.builder(branches)(vkml.tensor(X), vkml.tensor(np.float32(0.5)))
    with pytest.raises(TypeError, match="no parameter 'nope'; parameters: x, limit"):
        g.bind(nope=X)
    with pytest.raises(vkml.ShapeError, match=r"x was recorded as float32\[4, 3\]"):
        g.bind(x=X[:2])
    with pytest.raises(vkml.DeviceError, match="x is on reference, the graph runs on cpu"):
        g.bind(x=vkml.tensor(X, device=vkml.reference))
    with pytest.raises(ValueError, match="launch count must be a positive int"):
        g(0)
    g.bind(x=X * 2)
    want = branches(vkml.tensor(X * 2), vkml.tensor(np.float32(0.5)))
    np.testing.assert_array_equal(g()["y"].numpy(), want["y"].numpy())


def test_the_rewrite_happens_once() -> None:
    builder = vkml.Graph.builder(bounded_loop)
    fn = builder.recorded_fn
    builder(vkml.tensor(X), vkml.tensor(np.float32(1.0)))
    builder(vkml.tensor(X), vkml.tensor(np.float32(2.0)))
    assert builder.recorded_fn is fn
