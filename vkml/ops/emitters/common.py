"""One emitter per vkml op: ``emit(builder, operands, out_type, attrs) -> Value``.

Emitters receive operands of any dtype and shape the op's rule allows and do their own
broadcasting and conversion, so the graph needs no explicit cast or broadcast nodes.
float16 and bfloat16 transcendentals and reductions compute in float32 and round once at
the end; the reference interpreter does the same, so both see the same arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vkml.dialect.builder import FunctionBuilder
from vkml.dialect.nan_bits import float_bits
from vkml.dialect.numerics import compute_dtype
from vkml.dialect.types import TensorType, Value
from vkml.dtypes import bool_, int32, promote_types

Emitter = Callable[[FunctionBuilder, Sequence[Value], TensorType, Mapping[str, Any]], Value]


# -- elementwise ------------------------------------------------------------------------------
def arith(name: str) -> Emitter:
    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        cdt = compute_dtype(out.dtype)
        x, y = (b.prepare(v, out.shape, cdt) for v in xs)
        return b.convert(b.binary(name, x, y), out.dtype)

    return emit


def compare(direction: str) -> Emitter:
    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        common = promote_types(xs[0].dtype, xs[1].dtype)
        x, y = (b.prepare(v, out.shape, common) for v in xs)
        return b.compare(direction, x, y)

    return emit


def unary(name: str, chlo: bool = False) -> Emitter:
    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
        if x.dtype.kind == "uint" and name in ("abs", "negate"):
            # StableHLO has no unsigned abs/negate: |x| is x, and -x wraps modulo 2**32
            if name == "abs":
                return x
            return b.binary("subtract", b.broadcast(b.constant(0, x.dtype), x.shape), x)
        y = b.chlo_unary(name, x) if chlo else b.unary(name, x)
        return b.convert(y, out.dtype)

    return emit


def rounding(name: str) -> Emitter:
    """``floor``, ``ceil`` or ``round_nearest_even`` of a float; an integer is its own value.

    16-bit floats round in float32, exactly: the result is an integer the 16-bit type holds.
    """

    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        if not out.dtype.is_float:
            return b.prepare(xs[0], out.shape, out.dtype)
        x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
        return b.convert(b.unary(name, x), out.dtype)

    return emit


def emit_trunc(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """Toward zero: ``ceil`` where the sign bit is set, else ``floor`` (so -0.5 gives -0.0 and
    NaN stays NaN). The choice reads the sign bit as an integer, so no float compare decides it
    (a Vulkan driver may assume no NaN; ADR 0010)."""
    if not out.dtype.is_float:
        return b.prepare(xs[0], out.shape, out.dtype)
    x = b.prepare(xs[0], out.shape, compute_dtype(out.dtype))
    bits = float_bits(x).integer
    negative = b.compare("LT", b.bitcast(x, bits), b.constant(0, bits, x.shape))
    y = b.select(negative, b.unary("ceil", x), b.unary("floor", x))
    return b.convert(y, out.dtype)


def emit_sign(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """1 above zero, -1 below, 0 at either zero, NaN for NaN (the operand itself); by
    compares and selects, exact on every device (StableHLO's ``sign`` keeps -0.0 and has no
    unsigned form)."""
    x = b.prepare(xs[0], out.shape, out.dtype)

    def splat(value: int) -> Value:
        return b.broadcast(b.constant(value, out.dtype), out.shape)

    zero = splat(0)
    rest = zero
    if out.dtype.is_float:
        rest = b.select(b.compare("NE", x, x), x, zero)
    if out.dtype.kind != "uint":
        rest = b.select(b.compare("LT", x, zero), splat(-1), rest)
    return b.select(b.compare("GT", x, zero), splat(1), rest)


def select_binary(combine: Callable[[FunctionBuilder, Value, Value], Value]) -> Emitter:
    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        x, y = (b.prepare(v, out.shape, out.dtype) for v in xs)
        return combine(b, x, y)

    return emit


def emit_relu(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``0 if x <= 0 else x``, PyTorch's threshold form: relu(NaN) is NaN, relu(-0.0) is +0.0."""
    x = b.prepare(xs[0], out.shape, out.dtype)
    zero = b.broadcast(b.constant(0, out.dtype), out.shape)
    return b.select(b.compare("LE", x, zero), zero, x)


def emit_gelu(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """Exact GELU as ``(x * 0.5) * erfc(x * -sqrt(1/2))``, in this order of operations.

    erfc rather than ``1 + erf``: for x below about -4, ``1 + erf`` cancels to 0 and the
    result loses every digit; erfc keeps them.
    """
    cdt = compute_dtype(out.dtype)
    x = b.prepare(xs[0], out.shape, cdt)

    def splat(value: float) -> Value:
        return b.broadcast(b.constant(value, cdt), out.shape)

    scaled = b.binary("multiply", x, splat(-math.sqrt(0.5)))
    erfc = b.chlo_unary("erfc", scaled)
    half_x = b.binary("multiply", x, splat(0.5))
    return b.convert(b.binary("multiply", half_x, erfc), out.dtype)


def emit_where(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    cond = b.prepare(xs[0], out.shape, bool_)
    return b.select(
        cond, b.prepare(xs[1], out.shape, out.dtype), b.prepare(xs[2], out.shape, out.dtype)
    )


def emit_cond(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """Both arms inline on the operands ``xs[1:]``, then the one ``xs[0]`` (a 0-d bool)
    picks: one kernel, no host decision."""
    on_true, on_false = (region(list(xs[1:]))[0] for region in attrs["regions"])
    return b.select(b.prepare(xs[0], out.shape, bool_), on_true, on_false)


def emit_while(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Any:
    """``stablehlo.while`` over the carried values ``xs``: the condition region gives a 0-d
    bool, the body region the next values. One value per carried value (a tuple)."""
    keep_going, body = attrs["regions"]
    # The initial values pass through a barrier: without one, IREE 3.13's stream partitioner
    # can put the dispatch making an initial value in one partition with a dispatch that
    # reads the loop's result, and fails with "circular dependency: input operation uses
    # partition output" (the loop runs on the host between them; found by fuzzing,
    # tests/py/fuzz/test_fuzz_regressions.py).
    # Each initial value is also computed into a buffer of the loop's own: IREE 3.13's host
    # loop deallocates the buffer it starts from, so a loop starting from a constant (a
    # global), a value another loop also starts from, or a value that is also a result
    # failed at run time ("queue_dealloca buffer was not returned by queue_alloca", "transient
    # buffer has already been queued for deallocation").
    # The results pass through a barrier too. IREE 3.13 runs a counted loop (``i < n``) as
    # a host ``scf.for`` and deallocates the buffer it ends with; after zero turns that is
    # the buffer it started from, a slice of a larger allocation on Vulkan, and the call
    # failed ("queue_dealloca buffer was not returned by queue_alloca": every counted
    # Vulkan loop of zero turns). Behind a barrier IREE cannot follow the results' lifetime,
    # so it leaves their buffers to reference counting and deallocates none of them.
    # A module compiled for realize can be stopped (Ctrl-C): the loop also carries a turn
    # count and holds only while the caller's stop flag at the count's parity is 0 (read at
    # a position that changes every turn, so no compiler hoists the read out of the loop).
    stoppable = b.stoppable
    if stoppable:
        xs = [*xs, b.constant(0, int32)]
    xs = b.barrier([b.own_buffer(x) for x in xs])
    types = [v.type for v in xs]
    carried = len(xs) - int(stoppable)
    with b.block(types) as test:
        (flag,) = keep_going(test.args[:carried])
        if stoppable:
            flag = b.binary("and", flag, _not_stopped(b, test.args[-1]))
        test.yield_([flag])
    with b.block(types) as step:
        turned = [b.binary("add", step.args[-1], b.constant(1, int32))] if stoppable else []
        step.yield_([*body(step.args[:carried]), *turned])
    return tuple(b.barrier(b.while_loop(xs, test, step)))[:carried]


def _not_stopped(b: FunctionBuilder, count: Value) -> Value:
    """The caller's stop flag (``FunctionBuilder.stop_flag``) is still 0 at ``count``'s parity."""
    parity = b.binary("and", count, b.constant(1, int32))
    stop = b.stop_flag()
    bit = b.emit(
        f"stablehlo.dynamic_slice {stop.name}, {parity.name}, sizes = [1] : "
        f"({stop.type}, {parity.type}) -> tensor<1xi32>",
        TensorType((1,), int32),
    )
    return b.compare("EQ", b.reshape(bit, ()), b.constant(0, int32))


def emit_result(
    b: FunctionBuilder, xs: Sequence[Any], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """Result ``index`` of a node with several (a ``while``)."""
    value: Value = xs[0][attrs["index"]]
    return value


def emit_fusion_stop(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``xs[0]`` through a fusion stop (``vkml.dialect.fusion_stops``)."""
    return b.stop_fusion([xs[0]])[0]


def emit_astype(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    return b.convert(xs[0], out.dtype)


def emit_bitcast(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """The same bits read as another dtype of the same width (``ndarray.view``)."""
    return b.bitcast(xs[0], out.dtype)


# -- bitwise (integers only) ------------------------------------------------------------------
def bitwise(name: str) -> Emitter:
    def emit(
        b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
    ) -> Value:
        x, y = (b.prepare(v, out.shape, out.dtype) for v in xs)
        return b.binary(name, x, y)

    return emit


def emit_right_shift(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """NumPy's ``>>``: logical for unsigned, arithmetic (sign-filling) for signed integers.

    StableHLO defines an amount outside ``[0, bits)`` to give 0 (logical) or the sign fill
    (arithmetic); ``shift_left`` gives 0. The reference implements the same rule.
    """
    name = "shift_right_logical" if out.dtype.kind == "uint" else "shift_right_arithmetic"
    return bitwise(name)(b, xs, out, attrs)


# -- creation ---------------------------------------------------------------------------------
def emit_full(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    return b.broadcast(b.constant(attrs["value"], out.dtype), out.shape)


def emit_arange(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """``start + i * step`` in the compute dtype; ``stop`` (linspace) pins the last element."""
    cdt = compute_dtype(out.dtype)
    i = b.iota(out.shape, 0, cdt)
    scaled = b.binary("multiply", i, b.broadcast(b.constant(attrs["step"], cdt), out.shape))
    y = b.binary("add", scaled, b.broadcast(b.constant(attrs["start"], cdt), out.shape))
    if attrs.get("stop") is not None and out.shape[0] > 1:
        last = b.broadcast(b.constant(out.shape[0] - 1, cdt), out.shape)
        y = b.select(
            b.compare("EQ", i, last), b.broadcast(b.constant(attrs["stop"], cdt), out.shape), y
        )
    return b.convert(y, out.dtype)


# -- views ------------------------------------------------------------------------------------
def emit_reshape(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    return b.reshape(xs[0], out.shape)


def emit_permute(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    return b.transpose(xs[0], attrs["perm"])


def emit_broadcast_to(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    return b.broadcast(xs[0], out.shape)


def emit_slice(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    x = b.reverse(xs[0], attrs["reverse"])
    return b.slice(x, attrs["start"], attrs["limit"], attrs["stride"])


def emit_concatenate(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    parts = [b.convert(x, out.dtype) for x in xs if 0 not in x.shape or len(xs) == 1]
    if not parts:
        return b.broadcast(b.constant(0, out.dtype), out.shape)
    return b.concatenate(parts, attrs["axis"], out.shape)


# -- contraction ------------------------------------------------------------------------------
def emit_matmul(
    b: FunctionBuilder, xs: Sequence[Value], out: TensorType, attrs: Mapping[str, Any]
) -> Value:
    """Batched matmul on operands of rank >= 2; 16-bit floats accumulate in float32.

    16-bit operands go into the ``dot_general`` as they are (except in a product over one
    element, below), with a float32 result: the widening happens inside the matmul
    (``linalg.matmul`` extends each element it reads).
    Widened outside, the convert and its float fence would be a producer IREE 3.13 fuses into the
    matmul's dispatch, which its Vulkan code shares through workgroup memory without a
    barrier: wrong sums on lavapipe (``tests/py/frontend/test_matmul_operands.py``).
    """
    x, y = xs
    batch = out.shape[:-2]
    if 0 in out.shape or x.shape[-1] == 0:
        # an empty sum is 0 (NumPy's +0.0); IREE's compiler dies of SIGFPE on a zero extent
        return b.broadcast(b.constant(0, out.dtype), out.shape)
    acc = compute_dtype(out.dtype)
    # a product over one element IREE turns into a multiply of broadcasts, which it cannot do
    # on mixed types; and its Vulkan code for that multiply of bfloat16 rows widened in the
    # same dispatch staged them in workgroup memory with no barrier (fuzz sitting 16): the
    # operands are widened in dispatches of their own (fusion stops, no run-time cost)
    outer = x.shape[-1] == 1
    # each operand in the op's dtype first (an integer rounds to a 16-bit result dtype), then,
    # for a product over one element, widened to the accumulator
    x = b.prepare(b.convert(x, out.dtype), batch + x.shape[-2:], acc if outer else out.dtype)
    y = b.prepare(b.convert(y, out.dtype), batch + y.shape[-2:], acc if outer else out.dtype)
    if outer and acc is not out.dtype:
        x, y = b.stop_fusion([x, y])
    return b.convert(b.dot_general(x, y, len(batch), out.with_dtype(acc)), out.dtype)
