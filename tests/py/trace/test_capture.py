"""``vkml.trace.capture`` (``vkml/trace/capture.py``): a function's graph recorded once on input
placeholders, with named inputs and outputs, and called again as one invocation that gives
what running the function gives, bit for bit; nothing runs while capturing, observing a value
then is refused, and bad inputs are refused naming the parameter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.devices import needs_vulkan

import vkml
from vkml import trace
from vkml.devices import realize as realize_module

RNG = np.random.default_rng(3)
A = RNG.normal(size=(4, 3)).astype(np.float32)
B = RNG.normal(size=(3, 5)).astype(np.float32)


def affine(x: vkml.Tensor, w: vkml.Tensor) -> dict[str, vkml.Tensor]:
    y = (x @ w).gelu()
    return {"y": y, "total": y.sum()}


@pytest.mark.parametrize("device", [vkml.cpu, vkml.reference], ids=str)
def test_a_captured_call_equals_running_the_function(device: vkml.Device) -> None:
    captured = trace.capture(
        affine, trace.spec((4, 3), device=device), vkml.spec((3, 5), device=device)
    )
    assert [n for n, _ in captured.inputs] == ["x", "w"]
    assert [n for n, _ in captured.outputs] == ["y", "total"]
    for _ in range(2):
        x, w = (
            RNG.normal(size=(4, 3)).astype(np.float32),
            RNG.normal(size=(3, 5)).astype(np.float32),
        )
        got = captured(x, w)
        want = affine(vkml.tensor(x, device=device), vkml.tensor(w, device=device))
        assert set(got) == {"y", "total"}
        for key in want:
            np.testing.assert_array_equal(got[key].numpy(), want[key].numpy(), err_msg=key)


def test_capturing_runs_nothing_and_a_call_is_one_invocation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = vkml.stats()
    captured = trace.capture(affine, A, B)
    assert vkml.stats()["invocations"] == before["invocations"]
    captured(A, B)  # compiles (or finds) and runs

    def no_walk(*args: object, **kwargs: object) -> None:
        raise AssertionError("a call walked the graph")

    monkeypatch.setattr(realize_module, "toposort", no_walk)
    start = vkml.stats()
    for _ in range(3):
        captured(A, B)
    assert vkml.stats()["invocations"] - start["invocations"] == 3


def test_example_tensors_give_only_their_shape_dtype_and_device() -> None:
    x = vkml.tensor(A)
    captured = trace.capture(lambda t: t * 2.0, x)
    (argument,) = captured.arguments
    assert argument.input == 0 and argument.node is not x.node and not argument.node.storage
    np.testing.assert_array_equal(captured(B.T.copy()[:4]).numpy(), B.T[:4] * 2.0)


def test_a_tensor_the_function_closes_over_is_a_captured_constant() -> None:
    scale = vkml.tensor(np.float32(3.0))
    holder = {"scale": scale}
    captured = trace.capture(lambda x: x * holder["scale"], A)
    assert captured.captured == [scale.node]
    assert [a.input for a in captured.arguments] == [0, None]
    holder["scale"] = vkml.tensor(np.float32(5.0))  # not seen: the graph holds the node
    np.testing.assert_array_equal(captured(A).numpy(), A * np.float32(3.0))


def test_every_input_is_an_argument_in_parameter_order_even_unused() -> None:
    captured = trace.capture(lambda a, unused, b: a + b, A, B, A)
    assert [a.input for a in captured.arguments] == [0, 1, 2]
    np.testing.assert_array_equal(captured(A, B, 2 * A).numpy(), 3 * A)


def test_results_keep_their_structure_and_may_be_inputs_or_held_tensors() -> None:
    held = vkml.tensor(B)
    captured = trace.capture(lambda x: (x, x + 1.0, held), A)
    assert [n for n, _ in captured.outputs] == ["result0", "result1", "result2"]
    x, y, h = captured(2 * A)
    np.testing.assert_array_equal(x.numpy(), 2 * A)
    np.testing.assert_array_equal(y.numpy(), 2 * A + 1)
    np.testing.assert_array_equal(h.numpy(), B)
    listed = trace.capture(lambda x: [x.sum()], A)(A)
    assert isinstance(listed, list) and listed[0].item() == pytest.approx(A.sum(), rel=1e-6)
    one = trace.capture(lambda x: x.sum(), A)
    assert [n for n, _ in one.outputs] == ["result"]
    assert isinstance(one(A), vkml.Tensor)


def test_observing_a_value_while_capturing_is_refused() -> None:
    def peeks(x: vkml.Tensor) -> vkml.Tensor:
        if x.sum().item() > 0:
            return x
        return -x

    with pytest.raises(
        vkml.TraceError,
        match=r"'peeks' is being captured.*return the value.*observed at .*test_capture\.py:\d+",
    ):
        trace.capture(peeks, A)
    outside = vkml.tensor(A) + 1.0
    with pytest.raises(vkml.TraceError):
        trace.capture(lambda x: x + outside.numpy().sum(), A)
    assert not outside.is_realized  # refused before anything ran
    np.testing.assert_array_equal(outside.numpy(), A + 1)  # and usable after


@pytest.mark.parametrize(
    "observe",
    [print, lambda x: x.numpy(), lambda x: x.tolist(), lambda x: x.realize(), np.asarray, str],
    ids=["print", "numpy", "tolist", "realize", "asarray", "str"],
)
def test_observing_an_input_while_capturing_is_refused(observe: Any) -> None:
    """An input placeholder has no value: reading it was an AttributeError from
    runtime/buffers.py ('NoneType' object has no attribute 'shape')."""
    seen = []

    def reads(x: vkml.Tensor) -> vkml.Tensor:
        seen.append(x.is_realized)
        observe(x)
        return x

    with pytest.raises(vkml.TraceError, match=r"'reads' is being captured"):
        trace.capture(reads, A)
    assert seen == [False]  # a placeholder holds no value


def test_an_input_that_escapes_the_capture_cannot_be_read() -> None:
    escaped = []
    trace.capture(lambda x: escaped.append(x) or x.sum(), A)
    assert "input 'x'" in repr(escaped[0])
    with pytest.raises(vkml.TraceError, match=r"input 'x' of a captured function has a value"):
        escaped[0].numpy()


def test_eager_mode_does_not_cut_a_capture_into_pieces() -> None:
    vkml.set_eager(True)
    try:
        captured = trace.capture(lambda x, w: (x @ w).relu(), A, B)
        assert not captured.outputs[0][1].computed
        np.testing.assert_array_equal(captured(A, B).numpy(), np.maximum(A @ B, 0))
        assert (vkml.tensor(A) + 1.0).is_realized  # still eager outside the capture
    finally:
        vkml.set_eager(False)


def test_a_value_that_escapes_the_capture_cannot_be_realized() -> None:
    escaped = []
    trace.capture(lambda x: escaped.append(x * 2.0) or x.sum(), A)
    with pytest.raises(vkml.TraceError, match=r"depends on the input 'x' of a captured function"):
        escaped[0].numpy()
    with pytest.raises(vkml.TraceError, match="depends on the input 'x'"):
        trace.capture(lambda y: y + escaped[0], A)  # another capture's input


def test_what_a_function_returns_must_be_tensors() -> None:
    with pytest.raises(vkml.TraceError, match=r"'<lambda>' returned float as its result"):
        trace.capture(lambda x: 1.0, A)
    with pytest.raises(vkml.TraceError, match=r"returned int as result\[1\]"):
        trace.capture(lambda x: (x, 3), A)
    with pytest.raises(vkml.TraceError, match="output names are strings"):
        trace.capture(lambda x: {1: x}, A)


def test_bad_inputs_are_refused_naming_the_parameter() -> None:
    with pytest.raises(
        vkml.DataError, match=r"argument 'w' must be a vkml Tensor, a NumPy array or a vkml.spec"
    ):
        trace.capture(affine, A, [1, 2])
    with pytest.raises(vkml.DeviceError, match=r"inputs of 'affine' are on different devices"):
        trace.capture(affine, A, vkml.tensor(B, device=vkml.reference))
    captured = trace.capture(affine, A, B)
    with pytest.raises(TypeError, match=r"takes 2 inputs \(x, w\); missing w"):
        captured(A)
    # by name, as Python calls take them (a lambda's "unexpected keyword argument" before)
    want = {k: v.numpy() for k, v in captured(A, B).items()}
    for got in (captured(w=B, x=A), captured(A, w=B)):
        np.testing.assert_equal({k: v.numpy() for k, v in got.items()}, want)
    with pytest.raises(TypeError, match=r"has no input 'y'; its inputs are x, w"):
        captured(A, y=B)
    with pytest.raises(TypeError, match=r"got input 'x' twice"):
        captured(A, B, x=A)
    with pytest.raises(
        vkml.ShapeError, match=r"input 'w' must be float32\[3, 5\], got float32\[5, 3\]"
    ):
        captured(A, B.T.copy())
    with pytest.raises(vkml.ShapeError, match=r"input 'x' must be float32\[4, 3\], got float64"):
        captured(A.astype(np.float64), B)
    with pytest.raises(vkml.DeviceError, match=r"input 'x' is on reference.*\.to\('cpu'\)"):
        captured(vkml.tensor(A, device=vkml.reference), B)
    with pytest.raises(TypeError, match="input 'x' must be a vkml Tensor or a NumPy array"):
        captured("x", B)
    with pytest.raises(TypeError, match="fn must be callable"):
        trace.capture(3)  # type: ignore[arg-type]


def test_specs_are_checked() -> None:
    assert str(vkml.spec((2, 3), vkml.int32)) == "int32[2, 3] on cpu"
    assert vkml.spec(4).shape == (4,) and vkml.spec(4).dtype is vkml.float32
    with pytest.raises(vkml.ShapeError, match="negative dimension"):
        vkml.spec((2, -1))
    with pytest.raises(vkml.DTypeError):
        vkml.spec((2,), "complex64")


def test_a_lazy_input_is_realized_and_left_as_it_was() -> None:
    captured = trace.capture(lambda x: x * 2.0, A)
    lazy = vkml.tensor(A) + 1.0
    node = lazy.node
    np.testing.assert_array_equal(captured(lazy).numpy(), (A + 1) * 2)
    assert lazy.node is node and node.computed


@needs_vulkan
def test_a_captured_call_equals_running_the_function_on_vulkan() -> None:
    vulkan = vkml.device("vulkan:0")
    captured = trace.capture(
        affine, vkml.spec((4, 3), device=vulkan), vkml.spec((3, 5), device=vulkan)
    )
    got = captured(vkml.tensor(A, device=vulkan), vkml.tensor(B, device=vulkan))
    want = affine(vkml.tensor(A, device=vulkan), vkml.tensor(B, device=vulkan))
    for key in want:
        np.testing.assert_array_equal(got[key].numpy(), want[key].numpy(), err_msg=key)
