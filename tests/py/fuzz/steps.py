"""What each step kind of ``fuzz.strategies`` builds: public vkml calls on values made so far.

A step function takes three operands (picked by the step's ``a``, ``b``, ``c``), a reader of
the step's parameters and the device, and returns the new tensor. It may raise a vkml error
(an incompatible shape, a dtype the op does not take): the builder records that the step was
refused, and every device must refuse it the same way.

Inputs the contract leaves unspecified are steered around here, with exact ops, so that the
rest of the graph stays checkable: float -> integer casts of NaN or out-of-range values,
``pow`` of floats outside the moderate range its ULP bound is
stated for.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

import vkml
from vkml.frontend.control import fusion_stop
from vkml.frontend.functions import place_at, scatter_add
from vkml.ops import rules
from vkml.ops.registry import OPS
from vkml.ops.spec import OpDef


def _table_order(
    pinned: tuple[str, ...], rule: object, keep: Callable[[OpDef], bool]
) -> tuple[str, ...]:
    """The ops of the table a step kind draws from: ``pinned`` (the campaign's order, which
    the recorded regressions' picks index) followed by every op of ``rule`` added since, so
    that a new op reaches the generator with its definition."""
    new = tuple(n for n, d in OPS.items() if d.rule is rule and keep(d) and n not in pinned)
    return pinned + new


BINARY = _table_order(
    ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "floor_divide", "remainder"),
    rules.binary, lambda d: d.inputs != "integer",
)  # fmt: skip
COMPARE = _table_order(("eq", "ne", "lt", "le", "gt", "ge"), rules.compare, lambda d: True)
EXACT_UNARY = _table_order(
    ("neg", "abs", "relu", "floor", "ceil", "trunc", "round", "sign"), rules.unary,
    lambda d: d.bit_exact,
) + ("clip",)  # fmt: skip
BOUNDED_UNARY = _table_order(
    ("exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "sigmoid", "erf", "gelu", "expm1",
     "log1p", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"),
    rules.unary, lambda d: not d.bit_exact,
)  # fmt: skip
BITWISE = _table_order(
    ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"), rules.binary,
    lambda d: d.inputs == "integer",
)  # fmt: skip
REDUCE = ("sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "cumsum") + tuple(
    n for n, d in OPS.items()
    if d.rule.name == "reduction" and d.spelling and n not in ("sum", "amax", "amin", "argmax", "argmin", "prod")
)  # fmt: skip
SCALARS = (0.5, -2, 3, 1.25, 0, -0.0, float("inf"), float("nan"), 7)
# integers past the small ones: exponents of 64 and more, MIN and MAX of int32, past int32
WIDE_SCALARS = (64, 70, 2**31 - 1, -(2**31), 2**40)
SCALAR_OPS = BINARY[:7] + ("floor_divide", "remainder")
CAST_TO = ("float32", "float16", "bfloat16", "float64", "int32", "int64", "uint32", "bool")
BITCAST_PARTNER = {
    "float32": "int32", "int32": "uint32", "uint32": "float32", "float16": "bfloat16",
    "bfloat16": "float16", "float64": "int64", "int64": "float64",
}  # fmt: skip


class Params:
    """The step's parameters read in order; 0 once they run out (what shrinking tends to)."""

    def __init__(self, values: tuple[int, ...]) -> None:
        self._values = iter(values)

    def next(self, n: int) -> int:
        """The next parameter modulo ``n``."""
        return next(self._values, 0) % n

    def pick(self, options: tuple) -> object:
        return options[self.next(len(options))]


Operand = vkml.Tensor
StepFn = Callable[[Operand, Operand, Operand, Params, vkml.Device], vkml.Tensor]


def _function(op: str) -> Callable[..., vkml.Tensor]:
    """The public function of a table op (``sub`` is ``vkml.subtract``)."""
    spelling = OPS[op].spelling
    assert spelling is not None, f"{op} has no public spelling"
    return getattr(vkml, spelling.function)  # type: ignore[no-any-return]


_BINARY_FN = {op: _function(op) for op in BINARY}
_COMPARE_FN = {op: _function(op) for op in COMPARE}


def _power(x: Operand, y: Operand) -> vkml.Tensor:
    if vkml.promote_types(x.dtype, y.dtype).is_float:
        return vkml.power(vkml.clip(abs(x), 0.25, 4.0), vkml.clip(y, -4.0, 4.0))
    return vkml.power(x, y)  # integers are exact at every exponent, negative ones included


def binary(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    op = p.pick(BINARY)
    return _power(x, y) if op == "pow" else _BINARY_FN[str(op)](x, y)


def _moderate(value: float, low: float) -> float:
    """A finite scalar moved into [low, 4] in magnitude (``pow``'s moderate range)."""
    if value != value or abs(value) == float("inf"):
        return value
    return float(np.copysign(min(max(abs(value), low), 4.0), value))


def scalar(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """A binary op with a Python scalar on either side (weakly typed); a scalar that does
    not fit an integer tensor's dtype is a refusal every device must make."""
    op, value = str(p.pick(SCALAR_OPS)), p.pick(SCALARS + WIDE_SCALARS)
    first = bool(p.next(2))
    if op == "pow" and vkml.dtypes.result_type_with_scalar(x.dtype, value).is_float:
        if first:  # value ** x
            value, x = _moderate(float(value), 0.25), vkml.clip(x, -4.0, 4.0)
        else:
            value, x = _moderate(float(value), 0.0), vkml.clip(abs(x), 0.25, 4.0)
    fn = vkml.power if op == "pow" else _BINARY_FN[op]
    return fn(value, x) if first else fn(x, value)


def compare(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    return _COMPARE_FN[str(p.pick(COMPARE))](x, y)


def where(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    cond = z.astype(vkml.bool_) if p.next(2) else compare(z, x, y, p, dev)
    return vkml.where(cond, x, y)


def unary(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    op = str(p.pick(EXACT_UNARY))
    if op == "clip":
        lo, hi = sorted((p.pick(SCALARS[:5]), p.pick(SCALARS[:5])))
        return vkml.clip(x, lo, hi)
    return _function(op)(x)


def bounded(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    return _function(str(p.pick(BOUNDED_UNARY)))(x)


def cast(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    to = vkml.dtypes.to_dtype(str(p.pick(CAST_TO)))
    if x.dtype.is_float and to.is_integer:
        # NaN and out-of-range values have no specified integer (docs/contracts.md "Casts")
        limit = 60000.0 if to.name != "uint32" else 0.0
        x = vkml.where(abs(x) < 60000.0, vkml.maximum(x, -limit), 0.0)
    return x.astype(to)


def _one_nan(x: vkml.Tensor) -> vkml.Tensor:
    """``x`` with every NaN replaced by one NaN. A NaN's sign and payload are not promised
    (docs/contracts.md), and a bit cast makes them an exact value: without this, cpu's
    0x7FC00000 from a softmax and the reference's 0xFFC00000 were a false violation."""
    return vkml.where(x != x, float("nan"), x) if x.dtype.is_float else x


def bitcast(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    if x.dtype.name == "bool":
        x = x.astype(vkml.int32)
    return vkml.bitcast(_one_nan(x), BITCAST_PARTNER[x.dtype.name])


def _as_integer(x: Operand) -> vkml.Tensor:
    if x.dtype.is_integer:
        return x
    if x.dtype.name in ("float16", "bfloat16", "bool"):
        x = x.astype(vkml.float32)
    return vkml.bitcast(_one_nan(x), "int64" if x.dtype.name == "float64" else "int32")


def bitwise(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    return _function(str(p.pick(BITWISE)))(_as_integer(x), _as_integer(y))


def _slice_axis(n: int, p: Params) -> slice | int:
    """A slice of an axis of length ``n``: any start/stop (negatives too), step -3..3."""
    if n and p.next(5) == 0:
        return p.next(2 * n) - n  # an integer index, from the end too
    step = (1, -1, 2, -2, 3, -3)[p.next(6)]
    start = p.next(2 * n + 3) - n - 1 if p.next(2) else None
    stop = p.next(2 * n + 3) - n - 1 if p.next(2) else None
    return slice(start, stop, step)


def _view_move(x: Operand, p: Params) -> vkml.Tensor:
    move = p.next(7)
    if move == 0 and x.ndim >= 2:
        perms = list(itertools.permutations(range(x.ndim)))
        return x.permute(*perms[p.next(len(perms))])
    if move == 1:
        return x.transpose()
    if move == 2:
        return x[tuple(_slice_axis(n, p) for n in x.shape)]
    if move == 3:
        return x.reshape(-1) if p.next(2) or x.size == 0 else x.reshape(x.size, 1)
    if move == 4:
        return x.unsqueeze(p.next(x.ndim + 1))
    if move == 5:
        return x.squeeze()
    return x.broadcast_to(1 + p.next(3), *x.shape)


def view(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """A chain of 1 to 4 view moves: permutes, transposes, strided and reversed slices,
    reshapes, broadcasts; a slice after a transpose is the case the issue asks for."""
    for _ in range(1 + p.next(4)):
        x = _view_move(x, p)
    return x


def concat(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    axis = p.next(max(x.ndim, 1))
    if p.next(2):
        return vkml.stack([x, y], axis=p.next(x.ndim + 1))
    other = y if p.next(2) else x[(slice(None),) * axis + (slice(None, None, -1),)]
    return vkml.concatenate([x, other], axis=axis)


def matmul(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    if p.next(2) or x.ndim < 2:
        return vkml.matmul(x, y)
    return vkml.matmul(x, x.transpose(-1, -2))


def conv(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """A convolution of ``x`` (as it is when of rank 3 to 5, else one channel of its elements)
    with a kernel of ``y``'s elements repeated: strides, padding, dilation, groups (one, or
    one per channel) and the transposed form, each drawn."""
    if not 3 <= x.ndim <= 5:
        x = x.reshape(1, 1, -1)
    channels = x.shape[1]
    groups = channels if channels > 1 and p.next(2) else 1
    kernel = tuple(1 + p.next(3) for _ in x.shape[2:])
    transposed = p.next(4) == 0
    out = groups * (1 + p.next(2))
    shape = (channels, out // groups, *kernel) if transposed else (out, channels // groups, *kernel)
    need = int(np.prod(shape))
    flat = y.reshape(-1) if y.size else x.reshape(-1)
    if flat.size:
        flat = vkml.concatenate([flat] * -(-need // flat.size))[:need]
    w = flat.reshape(*shape)
    stride, dilation = 1 + p.next(2), 1 + p.next(2)
    if transposed:
        extra = p.next(max(stride, dilation))
        return vkml.conv_transpose(x, w, stride, p.next(2), extra, groups, dilation)
    return vkml.conv(x, w, stride, p.next(3), dilation, groups)


def pool(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """A max, average or adaptive average pooling of ``x``'s last one to three axes (of
    ``x`` as it is when of rank 2 to 5, else of one row of its elements)."""
    if not 2 <= x.ndim <= 5:
        x = x.reshape(1, -1)
    spatial = 1 + p.next(min(3, x.ndim - 1))
    sizes = x.shape[x.ndim - spatial :]
    kind = p.next(3)
    if kind == 2:
        return vkml.adaptive_avg_pool(x, tuple(1 + p.next(max(n, 1)) for n in sizes))
    kernel = tuple(1 + p.next(3) for _ in sizes)
    stride = tuple(1 + p.next(3) for _ in sizes)
    padding = tuple(p.next(k // 2 + 1) for k in kernel)
    if kind == 0:
        return vkml.max_pool(x, kernel, stride, padding, 1 + p.next(2))
    return vkml.avg_pool(x, kernel, stride, padding, count_include_pad=bool(p.next(2)))


def update(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """``x.at[index].set/add/max/min(v)`` along the first axis, the index a host list or a
    device tensor (positions repeated and negative), the values ``y``'s first element or
    ``y`` itself where it fits."""
    if x.ndim == 0 or x.shape[0] == 0:
        return x.at[()].set(y.reshape(-1)[:1].reshape(()) if y.size else 0)
    n = x.shape[0]
    picks = [p.next(2 * n) - n for _ in range(1 + p.next(4))]
    index = picks if p.next(2) else vkml.tensor(np.array(picks), device=dev)
    op = ("set", "add", "max", "min")[p.next(4)]
    values = y if y.shape == (len(picks), *x.shape[1:]) else (y.reshape(-1)[:1] if y.size else 0)
    return getattr(x.at[index], op)(values)


def einsum(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """``vkml.einsum`` of ``x`` with itself or ``y``: letters drawn per axis (kept, summed or
    shared), the output a drawn order of the kept ones."""
    letters = "abcde"[: x.ndim]
    other = y if p.next(2) and y.ndim == x.ndim else x
    mine = "".join(letters)
    theirs = "".join(letters[i] if p.next(2) else letters[i].upper() for i in range(x.ndim))
    kept = [c for c in mine + theirs if p.next(2)]
    out = "".join(dict.fromkeys(kept))
    return vkml.einsum(f"{mine},{theirs}->{out}", x, other)


def _axes(x: Operand, p: Params, single: bool) -> int | tuple[int, ...] | None:
    if x.ndim == 0 or p.next(3) == 0:
        return None
    if single:
        return p.next(2 * x.ndim) - x.ndim
    chosen = [a for a in range(x.ndim) if p.next(2)]
    return tuple(a - x.ndim if p.next(2) else a for a in chosen) or (p.next(x.ndim),)


def reduce(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    op = str(p.pick(REDUCE))
    if op == "cumsum":
        return x.cumsum(axis=None if x.ndim == 0 or p.next(3) == 0 else p.next(2 * x.ndim) - x.ndim)
    axis = _axes(x, p, single=op.startswith("arg"))
    return getattr(x, op)(axis=axis, keepdims=bool(p.next(2)))


def _indices_like(x: Operand, y: Operand, axis: int, p: Params) -> vkml.Tensor:
    """Indices for a gather along ``axis`` of ``x``: ``y``'s values as integers where its rank
    is ``x``'s (any value: out-of-range ones take the documented wrap-once-then-clamp rule),
    else a permutation (``argsort`` of ``x``)."""
    if y.ndim == x.ndim and p.next(2):
        return _as_integer(y)
    return vkml.argsort(x, axis=axis)


def gather(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """argsort, sort (stable, either direction), take_along_axis and its transpose scatter_add."""
    x = x.reshape(1) if x.ndim == 0 else x
    axis, choice = p.next(2 * x.ndim) - x.ndim, p.next(4)
    if choice < 2:
        fn = vkml.argsort if choice == 0 else vkml.sort
        return fn(x, axis=axis, descending=bool(p.next(2)))
    indices = _indices_like(x, y, axis, p)
    if choice == 2:
        return vkml.take_along_axis(x, indices, axis=axis)
    if indices.shape != x.shape:
        indices = vkml.argsort(x, axis=axis)
    size = max(x.shape[axis] + p.next(4) - 1, 0)
    return scatter_add(x, indices, axis, size)


def position(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """``x[i]`` along any axis, ``i`` a Python integer (from the end too): a position read at
    run time (``index_at``); or its transpose ``place_at``, a row put into zeros."""
    choice = p.next(2)
    axis = p.next(max(x.ndim, 1))
    if x.ndim == 0 or x.shape[axis] == 0:
        return x
    if choice:
        n = x.shape[axis]
        return x[(slice(None),) * axis + (p.next(2 * n) - n,)]
    size = 1 + p.next(4)
    row = x[(slice(None),) * axis + (slice(0, 1),)]
    return place_at(row, vkml.tensor(np.int32(p.next(size)), device=dev), axis, size)


def softmax(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    fn = vkml.softmax if p.next(2) else vkml.log_softmax
    return fn(x, axis=p.next(max(x.ndim, 1)) if x.ndim else -1)


def creation(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    choice = p.next(3)
    if choice == 0:
        value = p.pick(SCALARS) if x.dtype.is_float else p.next(9) - 4 * x.dtype.is_integer
        return vkml.full(x.shape, value, dtype=x.dtype, device=dev)
    n = 1 + p.next(7)
    if choice == 1 and x.dtype.name != "bool":
        start, step = p.next(7) - 3, (1, 2, -1, 3)[p.next(4)]
        if x.dtype.name == "uint32":
            start, step = abs(start), abs(step)
        return vkml.arange(start, start + n * step, step, dtype=x.dtype, device=dev)
    return vkml.linspace(-1.5, float(p.next(5)), n, device=dev)


def _arms(x: Operand) -> tuple[Callable, Callable]:
    if x.dtype.name == "bool":
        return (lambda u, v: u != v), (lambda u, v: u == v)
    return (lambda u, v: u - v), (lambda u, v: vkml.maximum(u, v) * u)


def cond(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    first = z.reshape(-1)[p.next(max(z.size, 1))]
    on_true, on_false = _arms(x)
    return vkml.cond(first.astype(vkml.bool_), on_true, on_false, x, y)


def while_(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    turns = p.next(4)
    step = (lambda v: v == False) if x.dtype.name == "bool" else (lambda v: v + v)
    start = vkml.tensor(np.int32(0), device=dev)
    return vkml.while_loop(lambda i, v: i < turns, lambda i, v: (i + 1, step(v)), start, x)[1]


def fusion_stopped(x: Operand, y: Operand, z: Operand, p: Params, dev: vkml.Device) -> vkml.Tensor:
    """``x`` through a fusion stop (the end of a graph builder's fork branch)."""
    return fusion_stop(x)


STEPS: dict[str, StepFn] = {
    "binary": binary, "scalar": scalar, "compare": compare, "where": where, "unary": unary,
    "bounded": bounded, "cast": cast, "bitcast": bitcast, "bitwise": bitwise, "view": view,
    "concat": concat, "matmul": matmul, "reduce": reduce, "softmax": softmax,
    "creation": creation, "cond": cond, "while": while_, "gather": gather, "fusion_stop": fusion_stopped,
    "position": position, "conv": conv, "pool": pool, "update": update,
    "einsum": einsum,
}  # fmt: skip
