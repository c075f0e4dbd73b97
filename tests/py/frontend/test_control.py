"""``vkml.cond`` (``vkml/frontend/control.py``, op ``cond`` in ``vkml/ops/control.py``): one node
owning two regions, lowered and interpreted by recursing into them; the device decides at
every realize with one executable, bit for bit as the reference; values an arm reads from
outside are lifted into parameters; bad input is refused naming what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
import vkml.runtime.vulkan_loader
from vkml.graph.node import PARAM
from vkml.graph.walk import region_nodes, region_schedule

DEVICES = [vkml.reference, vkml.cpu]
if vkml.runtime.vulkan_loader.vulkan_device_reports():
    DEVICES.append(vkml.device("vulkan:0"))

RNG = np.random.default_rng(11)
A = RNG.normal(size=(3, 4)).astype(np.float32)
B = RNG.normal(size=(3, 4)).astype(np.float32)


def flag(value: bool, device: vkml.Device) -> vkml.Tensor:
    return vkml.tensor(np.array(value), device=device)


def arms(k: vkml.Tensor) -> tuple[object, object]:
    return (lambda x, y: (x * y + k).exp()), (lambda x, y: x - y * 0.5)


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_the_device_picks_the_arm_at_every_realize_with_one_executable(
    device: vkml.Device,
) -> None:
    a, b = vkml.tensor(A, device=device), vkml.tensor(B, device=device)
    k = vkml.tensor(np.float32(0.25), device=device)
    on_true, on_false = arms(k)
    got = {}
    before = vkml.stats()["compiles"]
    for value in (True, False, True):
        got[value] = vkml.cond(flag(value, device), on_true, on_false, a, b).numpy()
    if device is not vkml.reference:
        assert vkml.stats()["compiles"] - before <= 1  # the decision is data, not structure
    ra, rb = vkml.tensor(A, device=vkml.reference), vkml.tensor(B, device=vkml.reference)
    rk = vkml.tensor(np.float32(0.25), device=vkml.reference)
    want_true = (ra * rb + rk).exp().numpy()
    want_false = (ra - rb * 0.5).numpy()
    np.testing.assert_array_equal(got[False], want_false)
    if device is vkml.reference:
        np.testing.assert_array_equal(got[True], want_true)
    else:  # exp is within its bound, not bit-exact, across devices
        np.testing.assert_allclose(got[True], want_true, rtol=4 * 2**-23)
        same_device = (a * b + k).exp().numpy()
        np.testing.assert_array_equal(got[True], same_device)  # the arm is exp's own kernel


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_conditions_nest_and_uint32_is_true_when_nonzero(device: vkml.Device) -> None:
    a = vkml.tensor(A, device=device)

    def outer(x: vkml.Tensor) -> vkml.Tensor:
        return vkml.cond(x.sum() > 100.0, lambda z: z * 2.0, lambda z: -z, x)

    for count, want in ((3, -A), (0, A)):
        pred = vkml.tensor(np.array([count], np.uint32), device=device)
        np.testing.assert_array_equal(vkml.cond(pred, outer, lambda x: x, a).numpy(), want)


def test_a_node_owns_two_regions_over_parameters_only() -> None:
    k = vkml.tensor(np.float32(2.0))
    a, b = vkml.tensor(A), vkml.tensor(B)
    out = vkml.cond(flag(True, vkml.cpu), lambda x, y: x * k + 1.0, lambda x, y: y, a, b)
    node = out.node
    assert node.op == "cond" and len(node.regions) == 2
    assert node.src[1:3] == (a.node, b.node) and k.node in node.src[3:]  # k is lifted
    for region in node.regions:
        assert len(region.params) == len(node.src) - 1
        owned = set(region_schedule(region))
        for inner in owned:
            assert all(s in owned for s in inner.src), inner
    assert {n.op for n in region_nodes(node)} >= {"mul", "add"}
    assert all(n.op != PARAM for n in region_nodes(node))


def test_arms_that_differ_do_not_share_an_executable() -> None:
    a = vkml.tensor(np.abs(A) + 1.0)
    p = flag(True, vkml.cpu)
    first = vkml.cond(p, lambda x: x.exp(), lambda x: x.log(), a).numpy()
    second = vkml.cond(p, lambda x: x.log(), lambda x: x.exp(), a).numpy()
    np.testing.assert_array_equal(first, (a.exp()).numpy())
    np.testing.assert_array_equal(second, (a.log()).numpy())


def test_an_arm_that_reads_no_operand_is_lifted_whole() -> None:
    a = vkml.tensor(A)
    got = vkml.cond(flag(False, vkml.cpu), lambda x: x, lambda x: vkml.zeros((3, 4)), a)
    np.testing.assert_array_equal(got.numpy(), np.zeros((3, 4), np.float32))


def test_the_module_selects_instead_of_branching_on_the_host() -> None:
    a = vkml.tensor(A)
    text = vkml.emit_mlir(vkml.cond(flag(True, vkml.cpu), lambda x: x.exp(), lambda x: -x, a))
    assert "stablehlo.select" in text and "stablehlo.exponential" in text
    assert "stablehlo.if" not in text and "stablehlo.case" not in text


def test_an_op_a_device_refuses_inside_an_arm_is_refused_before_compiling() -> None:
    x = vkml.tensor(A.astype(np.float64))
    out = vkml.cond(flag(True, vkml.cpu), lambda v: v % 3.0, lambda v: v, x)
    before = vkml.stats()["compiles"]
    with pytest.raises(
        vkml.UnsupportedOperatorError, match="'remainder' is not supported for float64"
    ):
        out.numpy()
    assert vkml.stats()["compiles"] == before


def test_bad_conditions_and_arms_are_refused() -> None:
    a = vkml.tensor(A)
    p = flag(True, vkml.cpu)
    with pytest.raises(
        vkml.DTypeError, match="condition must be a one-element bool or uint32 tensor, got float32"
    ):
        vkml.cond(vkml.tensor(np.float32(1)), lambda x: x, lambda x: x, a)
    with pytest.raises(vkml.ShapeError, match=r"got bool\[2\]"):
        vkml.cond(vkml.tensor(np.array([True, False])), lambda x: x, lambda x: x, a)
    with pytest.raises(vkml.DTypeError, match="a Python value decides in Python"):
        vkml.cond(True, lambda x: x, lambda x: x, a)
    with pytest.raises(vkml.ShapeError, match=r"float32\[3, 4\] \(on_true\) and float32\[4, 3\]"):
        vkml.cond(p, lambda x: x, lambda x: x.transpose(), a)
    with pytest.raises(vkml.DTypeError, match=r"float32\[3, 4\] \(on_true\) and int32\[3, 4\]"):
        vkml.cond(p, lambda x: x, lambda x: x.astype(vkml.int32), a)
    with pytest.raises(TypeError, match="on_false must return a tensor, got float"):
        vkml.cond(p, lambda x: x, lambda x: 1.0, a)
    with pytest.raises(TypeError, match="on_true must be callable"):
        vkml.cond(p, 3, lambda x: x, a)  # type: ignore[arg-type]
    with pytest.raises(vkml.DeviceError, match="'cond' operands are on different devices"):
        vkml.cond(p, lambda x: x, lambda x: x, vkml.tensor(A, device=vkml.reference))
    with pytest.raises(vkml.TraceError, match="'cond' is recording on_true"):
        vkml.cond(p, lambda x: x if x.sum().item() > 0 else -x, lambda x: x, a)
    np.testing.assert_array_equal(a.numpy(), A)  # nothing was changed by the refusals


def test_eager_mode_records_the_arms_whole() -> None:
    vkml.set_eager(True)
    try:
        out = vkml.cond(flag(False, vkml.cpu), lambda x: x * 2.0, lambda x: x + 1.0, vkml.tensor(A))
        assert out.is_realized
        np.testing.assert_array_equal(out.numpy(), A + 1.0)
    finally:
        vkml.set_eager(False)


def test_no_gradient_flows_through_a_condition_yet() -> None:
    a = vkml.tensor(A, requires_grad=True)
    out = vkml.cond(flag(True, vkml.cpu), lambda x: x * 2.0, lambda x: x, a).sum()
    with pytest.raises(vkml.GradientError, match="'cond' has no gradient rule"):
        out.backward()


def test_a_captured_function_may_hold_a_condition() -> None:
    def clipped(x: vkml.Tensor, limit: vkml.Tensor) -> vkml.Tensor:
        return vkml.cond(
            x.amax() > limit, lambda v, t: vkml.minimum(v, t), lambda v, t: v, x, limit
        )

    f = vkml.trace.capture(clipped, A, np.float32(0.0))
    np.testing.assert_array_equal(f(A, np.float32(0.5)).numpy(), np.minimum(A, 0.5))
    np.testing.assert_array_equal(f(A, np.float32(99.0)).numpy(), A)


# -- while_loop ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_a_device_loop_runs_until_its_condition_fails(device: vkml.Device) -> None:
    k = vkml.tensor(np.float32(1.5), device=device)  # read by the body from outside: lifted

    def grow(limit: float) -> tuple[np.ndarray, int]:
        x = vkml.tensor(np.abs(A) + 0.5, device=device)
        n = vkml.tensor(np.int32(0), device=device)
        lim = vkml.tensor(np.float32(limit), device=device)
        out, count = vkml.while_loop(
            lambda x, n: x.amax() < lim, lambda x, n: (x * k + 0.25, n + 1), x, n
        )
        return out.numpy(), int(count.item())

    for limit in (0.1, 10.0, 1e4):  # no turn, a few, many
        got, count = grow(limit)
        want, steps = np.abs(A) + 0.5, 0
        while want.max() < np.float32(limit):
            want = want * np.float32(1.5) + np.float32(0.25)
            steps += 1
        assert count == steps
        np.testing.assert_array_equal(got, want)


def test_a_loop_node_owns_a_condition_and_a_body_and_has_one_result_per_value() -> None:
    x, n = vkml.tensor(A), vkml.tensor(np.int32(0))
    out, count = vkml.while_loop(lambda x, n: n < 3, lambda x, n: (x + 1.0, n + 1), x, n)
    loop = out.node.src[0]
    assert out.node.op == count.node.op == "result" and count.node.src[0] is loop
    assert loop.op == "while" and len(loop.regions) == 2
    assert list(loop.attr("results")) == [("float32", (3, 4)), ("int32", ())]  # no constant lifted
    text = vkml.emit_mlir(out)
    assert '"stablehlo.while"' in text
    np.testing.assert_array_equal(out.numpy(), A + 3.0)


def test_bad_loops_are_refused() -> None:
    x, n = vkml.tensor(A), vkml.tensor(np.int32(0))
    with pytest.raises(
        vkml.ShapeError, match=r"body changes carried value 0 from float32\[3, 4\] to float32\[\]"
    ):
        vkml.while_loop(lambda x, n: n < 3, lambda x, n: (x.sum(), n + 1), x, n)
    with pytest.raises(TypeError, match="body must return 2 values"):
        vkml.while_loop(lambda x, n: n < 3, lambda x, n: x, x, n)
    with pytest.raises(
        vkml.ShapeError,
        match=r"condition must be a one-element bool or uint32 tensor, got bool\[3, 4\]",
    ):
        vkml.while_loop(lambda x, n: x > 0.0, lambda x, n: (x, n), x, n)
    with pytest.raises(TypeError, match="needs at least one carried value"):
        vkml.while_loop(lambda: True, lambda: ())
    with pytest.raises(vkml.TraceError, match="'while_loop' is recording body"):
        vkml.while_loop(lambda x, n: n < 3, lambda x, n: (x * float(x.sum().item()), n + 1), x, n)
