"""The bad input catalogue: every public callable of vkml, walked with wrong types, wrong
dtypes, bad shapes and huge or negative dimensions.

Each bad call must raise an error vkml raised on purpose: a ``VkmlError``, or a built-in
``TypeError``/``ValueError``/``IndexError`` raised by vkml's own validation (the innermost
frame is in ``vkml/``), never one that escaped from NumPy, IREE or an attribute lookup; its
message must name the offending value or parameter; and every tensor made before the call, on
every device, must still give its value afterwards. ``CASES`` must cover every public name:
a new function without bad calls fails ``test_every_public_name_is_walked``.

``tests/py/frontend/test_bad_input.py`` pins exact messages of single cases; this module
walks the whole surface.
"""

from __future__ import annotations

import inspect
import os
import resource
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import vkml
from vkml import aot, linalg, nn, random, trace
from vkml.compiler.target import vulkan_target_for
from vkml.errors import (
    AxisError,
    ConfigError,
    DataError,
    DeviceError,
    DeviceMemoryError,
    DTypeError,
    IndexingError,
    ShapeError,
    ValueRangeError,
    VkmlError,
)
from vkml.frontend import eager
from vkml.ops import rules
from vkml.ops.registry import OPS
from vkml.runtime.vulkan_loader import vulkan_device_reports

VKML_DIR = os.path.dirname(vkml.__file__)
DEVICES = ["cpu", "reference"] + (["vulkan:0"] if vulkan_device_reports() else [])
A = np.array([[1.0, -2.0, 3.5], [0.25, 5.0, -6.0]], np.float32)
H = 2**20  # (H, H) is a 2**40-element tensor: 4 TiB of float32

# values that are not tensors, not data, or both
NOT_TENSORS: dict[str, Any] = {
    "str": "abc", "none": None, "object": object(), "complex": 1j, "dict": {}, "bytes": b"ab",
    "str-list": [["a"]], "object-array": np.array([object()]), "str-array": np.array(["x"]),
}  # fmt: skip


@dataclass(frozen=True)
class Bad:
    """One bad call, the errors it may raise and the words its message must hold."""

    label: str
    call: Callable[[], Any]
    errors: tuple[type[BaseException], ...]
    words: tuple[str, ...] = ()


def bad(label: str, call: Callable[[], Any], error: Any, *words: str) -> Bad:
    return Bad(label, call, error if isinstance(error, tuple) else (error,), words)


def x23() -> vkml.Tensor:
    return vkml.tensor(A)


def img() -> vkml.Tensor:
    """One 1-channel 4x4 image (N, C, H, W)."""
    return vkml.ones((1, 1, 4, 4))


def k33() -> vkml.Tensor:
    """A 3x3 kernel of one channel in and out: (O, C, 3, 3)."""
    return vkml.ones((1, 1, 3, 3))


def not_tensor_cases(name: str, fn: Callable[..., Any], *rest: Any) -> list[Bad]:
    """``fn(bad, *rest)`` for every non-tensor: DTypeError naming the op and the type."""
    return [
        bad(f"{name}({k})", lambda v=v: fn(v, *rest), DTypeError, type(v).__name__)
        for k, v in NOT_TENSORS.items()
    ]


def unary(name: str) -> list[Bad]:
    return not_tensor_cases(name, getattr(vkml, name))


def binary(name: str) -> list[Bad]:
    fn = getattr(vkml, name)
    ints = name.startswith(("bitwise", "left", "right"))
    make = (lambda s: vkml.ones(s, dtype=vkml.int32)) if ints else vkml.ones
    cases = [
        bad(f"{name}(x, {k})", lambda v=v: fn(make((2, 3)), v), (DTypeError, DataError))
        for k, v in NOT_TENSORS.items()
    ]
    cases += [
        bad(f"{name}({k}, x)", lambda v=v: fn(v, make((2, 3))), (DTypeError, DataError))
        for k, v in NOT_TENSORS.items()
    ]
    shapes = ("(2, 3)", "(2,)") if name != "matmul" else ("(2, 3)", "(2, 3)")
    other = (2,) if name != "matmul" else (2, 3)
    cases.append(bad(f"{name}-shapes", lambda: fn(make((2, 3)), make(other)), ShapeError, *shapes))
    cases.append(
        bad(f"{name}-devices", lambda: fn(make((2,)), vkml.ones((2,), device="reference")),
            DeviceError, "cpu", "reference")
    )  # fmt: skip
    return cases


def reduction(name: str) -> list[Bad]:
    fn = getattr(vkml, name)
    cases = not_tensor_cases(name, fn)
    for axis in (5, -3, 1.0, "a"):
        cases.append(bad(f"{name}(axis={axis!r})", lambda a=axis: fn(x23(), a), AxisError,
                         "axis", repr(axis) if isinstance(axis, str) else str(axis)))  # fmt: skip
    return cases


def shaped(name: str) -> list[Bad]:
    """reshape, broadcast_to, expand: float, string, negative and huge target shapes."""
    fn = getattr(vkml, name)
    cases = not_tensor_cases(name, fn, 6)
    for shape in ((2.0, 3), ("6",), (-2, -3), (H, H), (2**63, 1)):
        cases.append(bad(f"{name}{shape}", lambda s=shape: fn(x23(), *s), ShapeError))
    return cases


def axes_fn(name: str) -> list[Bad]:
    """permute, transpose: an axis out of range, repeated or not an integer."""
    fn = getattr(vkml, name)
    return [
        *not_tensor_cases(name, fn, 0, 1),
        bad(f"{name}(0, 5)", lambda: fn(x23(), 0, 5), AxisError, "5"),
        bad(f"{name}(0, 0, 1)", lambda: fn(x23(), 0, 0, 1), AxisError),
        bad(f"{name}(0.0, 1)", lambda: fn(x23(), 0.0, 1), (ShapeError, AxisError), "0.0"),
    ]


def creation(name: str) -> list[Bad]:
    """zeros, ones, full: every kind of bad shape, dtype and device."""
    fn = getattr(vkml, name)
    args: tuple[Any, ...] = (1.0,) if name == "full" else ()
    shapes = {"negative": (2, -1), "float": (2.5, 3), "str": "ab", "none": None,
              "65-axes": (1,) * 65, "2**63": (2**63,), "2**64-elements": (2**32, 2**32)}  # fmt: skip
    cases = [
        bad(
            f"{name}({k})",
            lambda s=s: fn(s, *args),
            ShapeError,
            "shape" if k != "65-axes" else "65",
        )
        for k, s in shapes.items()
    ]
    cases += [
        bad(f"{name}(dtype={d!r})", lambda d=d: fn((2,), *args, dtype=d), DTypeError,
            "float32", "convert")
        for d in ("complex64", np.uint8, np.dtype("U1"), *((5,) if name == "full" else ()))
    ]  # fmt: skip
    if name != "full":  # ones(2, 5): PyTorch's spelling of a shape
        cases.append(bad(f"{name}(dtype=5)", lambda: fn((2,), dtype=5), DTypeError,
                         "dtype=5", f"vkml.{name}((2, 5))"))  # fmt: skip
    cases.append(bad(f"{name}(device='gpu')", lambda: fn((2,), *args, device="gpu"),
                     DeviceError, "'gpu'", "cpu"))  # fmt: skip
    return cases


def full_values() -> list[Bad]:
    f = vkml.full
    return [
        *creation("full"),
        *(bad(f"full({v!r})", lambda v=v: f((2,), v), DTypeError, "not a number")
          for v in ("a", None, 1j)),
        bad("full(nan, int32)", lambda: f((2,), float("nan"), vkml.int32), DTypeError, "nan", "int32"),
        bad("full(inf, int32)", lambda: f((2,), float("inf"), vkml.int32), DTypeError, "inf"),
        bad("full(-1, uint32)", lambda: f((2,), -1, vkml.uint32), DTypeError, "-1", "uint32"),
    ]  # fmt: skip


def arange() -> list[Bad]:
    f = vkml.arange
    return [
        bad("arange('5')", lambda: f("5"), DTypeError, "'5'"),
        bad("arange(step=0)", lambda: f(0, 5, 0), ValueError, "step"),
        bad("arange(inf)", lambda: f(0.0, float("inf")), ShapeError, "inf", "finite"),
        bad("arange(nan)", lambda: f(0.0, float("nan")), ShapeError, "nan"),
        bad("arange(int32 overflow)", lambda: f(2**31, 2**31 + 2, dtype="int32"), DTypeError,
            "2147483648", "int32"),
        bad("arange(bool)", lambda: f(3, dtype="bool"), DTypeError, "bool"),
    ]  # fmt: skip


def linspace() -> list[Bad]:
    f = vkml.linspace
    return [
        bad("linspace('a')", lambda: f("a", 1, 3), DTypeError, "'a'"),
        bad("linspace(num=-1)", lambda: f(0, 1, -1), ValueError, "num=-1"),
        bad("linspace(int32)", lambda: f(0, 1, 3, dtype="int32"), DTypeError, "int32"),
    ]


def tensor() -> list[Bad]:
    f = vkml.tensor
    data = {"str": "abc", "ragged": [[1, 2], [3]], "object": [object()],
            "complex-array": np.ones(2, np.complex64), "str-array": np.array(["1", "2"]),
            "object-array": np.array([1.0, 2.0], dtype=object), "set": {1, 2},
            "datetime": np.array(["2020-01-01"], "datetime64[D]"), "generator": iter([1])}  # fmt: skip
    cases = [bad(f"tensor({k})", lambda d=d: f(d), DataError) for k, d in data.items()]
    cases += [
        bad("tensor(huge-int)", lambda: f([2**70]), ValueRangeError, str(2**70), "int64"),
        bad("tensor(uint8 array)", lambda: f(np.ones(2, np.uint8)), DTypeError, "uint8", "convert"),
        bad("tensor(dtype='float128')", lambda: f([1.0], dtype="float128"), DTypeError, "float128"),
        bad("tensor(device=3)", lambda: f([1.0], device=3), DeviceError, "3"),
        bad("tensor(4 TiB view)", lambda: f(np.broadcast_to(np.float32(1), (H, H))),
            DeviceMemoryError, "4.00 TiB", "memory"),
    ]  # fmt: skip
    return cases


def from_dlpack() -> list[Bad]:
    f = vkml.from_dlpack
    raw = np.zeros(32, np.float32)
    start = (-raw.ctypes.data % 64) // 4 + 1  # one element past a 64-byte boundary
    unaligned = raw[start : start + 8]
    cases = [
        bad(f"from_dlpack({k})", lambda v=v: f(v), TypeError, type(v).__name__, "DLPack")
        for k, v in NOT_TENSORS.items()
        if k not in ("object-array", "str-array")  # NumPy arrays: refused for their dtype
    ]
    cases += [
        bad("from_dlpack(object array)", lambda: f(np.array([object()])), BufferError, "DLPack"),
        bad("from_dlpack(uint8)", lambda: f(np.ones(2, np.uint8)), DTypeError, "uint8", "convert"),
        bad("from_dlpack(complex)", lambda: f(np.ones(2, np.complex64)), DTypeError, "complex64"),
        bad("from_dlpack(device=3)", lambda: f(np.ones(2, np.float32), device=3), DeviceError, "3"),
        bad("from_dlpack(unaligned, copy=False)", lambda: f(unaligned, copy=False), BufferError,
            "64-byte", "copy=None"),
    ]  # fmt: skip
    return cases


def sequence_fn(name: str) -> list[Bad]:
    fn = getattr(vkml, name)
    return [
        bad(f"{name}([])", lambda: fn([]), ShapeError, "at least one"),
        bad(f"{name}(None)", lambda: fn(None), (ShapeError, DTypeError)),
        bad(f"{name}([x, 'a'])", lambda: fn([x23(), "a"]), DTypeError, "str"),
        bad(f"{name}(shapes)", lambda: fn([x23(), vkml.ones(3)]), ShapeError, "(2, 3)"),
        bad(f"{name}(axis=5)", lambda: fn([x23(), x23()], axis=5), AxisError, "5"),
    ]


def cases_of(*builders: Callable[[], list[Bad]]) -> Callable[[], list[Bad]]:
    return lambda: [c for b in builders for c in b()]


def one(label: str, call: Callable[[], Any], error: Any, *words: str) -> Callable[[], list[Bad]]:
    return lambda: [bad(label, call, error, *words)]


def fn_checks(name: str, fn: Callable[..., Any]) -> list[Bad]:
    """grad, value_and_grad: fn and argnums of the wrong type."""
    return [
        bad(f"{name}(3)", lambda: fn(3), TypeError, "int"),
        bad(f"{name}(argnums='a')", lambda: fn(lambda a: a.sum(), argnums="a")(x23()),
            TypeError, "argnums", "'a'"),
        bad(f"{name}(argnums=3)", lambda: fn(lambda a: a.sum(), argnums=3)(x23()),
            IndexError, "argnums 3"),
    ]  # fmt: skip


# the functions generated from the op table, by the shape of their call (a new op of one of
# these rules is walked without a line here)
SPELLED = [d for d in OPS.values() if d.spelling]
UNARY = sorted(d.spelling.function for d in SPELLED if d.spelling and d.rule is rules.unary)
BINARY = sorted(
    d.spelling.function for d in SPELLED if d.spelling and d.rule.operands == "promoted"
)
REDUCTIONS = sorted(
    d.spelling.function for d in SPELLED if d.spelling and d.rule.name == "reduction"
)
BINARY_METHODS = sorted(
    m for d in SPELLED if d.spelling and d.rule.operands == "promoted" for m in d.spelling.methods
)
REDUCTION_METHODS = sorted(
    m for d in SPELLED if d.spelling and d.rule.name == "reduction" for m in d.spelling.methods
)
ALWAYS_TRUE = lambda: vkml.ones(()) > 0.0
CASES: dict[str, Callable[[], list[Bad]]] = {
    **{n: (lambda n=n: unary(n)) for n in UNARY},
    **{n: (lambda n=n: binary(n)) for n in [*BINARY, "matmul"]},
    **{n: (lambda n=n: reduction(n)) for n in
       [*REDUCTIONS, "cumsum", "mean", "softmax", "log_softmax", "squeeze", "var", "std", "any", "all"]},
    **{n: (lambda n=n: unary(n)) for n in ("isnan", "isinf", "isfinite")},
    "flatten": cases_of(lambda: not_tensor_cases("flatten", vkml.flatten),
                        one("flatten(x, 5)", lambda: vkml.flatten(x23(), 5), AxisError, "5"),
                        one("flatten(x, 1, 0)", lambda: vkml.flatten(x23(), 1, 0), AxisError, "start_dim 1", "end_dim 0")),
    **{n: cases_of(lambda n=n: not_tensor_cases(n, getattr(vkml, n), *((1.0,) if n == "full_like" else ())),
                   one(f"{n}(dtype='foo')", lambda n=n: getattr(vkml, n)(x23(), *((1.0,) if n == "full_like" else ()), dtype="foo"), DTypeError, "'foo'"))
       for n in ("zeros_like", "ones_like", "full_like")},
    "eye": cases_of(*(one(f"eye({v!r})", lambda v=v: vkml.eye(v), ShapeError, str(v)) for v in (-1, 2.5, "a")),
                    one("eye(2, k=0.5)", lambda: vkml.eye(2, k=0.5), ShapeError, "k=0.5")),
    **{n: cases_of(lambda n=n: not_tensor_cases(n, getattr(vkml, n), k33()),
                   one(f"{n}(2-D x)", lambda n=n: getattr(vkml, n)(x23(), k33()), ShapeError, "(2, 3)", "x[None]"),
                   one(f"{n}(int x)", lambda n=n: getattr(vkml, n)(img().astype(vkml.int32), k33().astype(vkml.int32)), DTypeError, "int32"),
                   one(f"{n}(stride=0)", lambda n=n: getattr(vkml, n)(img(), k33(), 0), ValueError, "stride=0"),
                   one(f"{n}(stride=(1, 2, 3))", lambda n=n: getattr(vkml, n)(img(), k33(), (1, 2, 3)), ValueError, "(1, 2, 3)"),
                   one(f"{n}(padding=-1)", lambda n=n: getattr(vkml, n)(img(), k33(), 1, -1), ValueError, "padding=-1"),
                   one(f"{n}(groups=2)", lambda n=n: getattr(vkml, n)(img(), k33(), groups=2), (ShapeError, ValueError), "groups"),
                   one(f"{n}(bias wrong)", lambda n=n: getattr(vkml, n)(img(), k33(), bias=vkml.zeros(5)), ShapeError, "bias"))
       for n in ("conv", "conv_transpose")},
    **{n: cases_of(lambda n=n: not_tensor_cases(n, getattr(vkml, n), 2),
                   one(f"{n}(x, 0)", lambda n=n: getattr(vkml, n)(img(), 0), ValueError, "=0"),
                   one(f"{n}(bool x)", lambda n=n: getattr(vkml, n)(img() > 0, 2), DTypeError, "bool"),
                   one(f"{n}(x, (2, 2, 2, 2))", lambda n=n: getattr(vkml, n)(img(), (2, 2, 2, 2)), ShapeError, "4 spatial axes"),
                   *([one(f"{n}(x, 2, padding=2)", lambda n=n: getattr(vkml, n)(img(), 2, 1, 2), ValueError, "padding=2", "half"),
                      one(f"{n}(x, 5)", lambda n=n: getattr(vkml, n)(img(), 5), ShapeError, "does not fit")] if n != "adaptive_avg_pool" else []))
       for n in ("max_pool", "avg_pool", "adaptive_avg_pool")},
    **{n: cases_of(lambda n=n: not_tensor_cases(n, getattr(vkml, n)),
                   one(f"{n}(x, dim=5)", lambda n=n: getattr(vkml, n)(x23(), dim=5), AxisError, "5"),
                   one(f"{n}(x, 0, dim=1)", lambda n=n: getattr(vkml, n)(x23(), 0, dim=1), TypeError, "not both"))
       for n in ("max", "min")},
    "topk": cases_of(lambda: not_tensor_cases("topk", vkml.topk, 1),
                     one("topk(x, 4)", lambda: vkml.topk(x23(), 4), ShapeError, "k=4")),
    "nonzero": cases_of(lambda: not_tensor_cases("nonzero", vkml.nonzero),
                        one("nonzero(0-d)", lambda: vkml.nonzero(vkml.ones(())), ShapeError, "0-d")),
    "index_add": cases_of(lambda: not_tensor_cases("index_add", vkml.index_add, 0, [0], vkml.ones((1, 3))),
                          one("index_add(dim=5)", lambda: vkml.index_add(x23(), 5, [0], vkml.ones((1, 3))), AxisError, "5"),
                          one("index_add(index 2-D)", lambda: vkml.index_add(x23(), 0, [[0]], vkml.ones((1, 3))), IndexingError, "1-D"),
                          one("index_add(source wrong)", lambda: vkml.index_add(x23(), 0, [0], vkml.ones((2, 3))), IndexingError, "source of shape (2, 3)")),
    "einsum": cases_of(*(one(f"einsum('ij', {k})", lambda v=v: vkml.einsum("ij", v), DTypeError, type(v).__name__)
                         for k, v in NOT_TENSORS.items()),
                       one("einsum(3, x)", lambda: vkml.einsum(3, x23()), TypeError, "3"),
                       one("einsum('ij,jk', x)", lambda: vkml.einsum("ij,jk", x23()), ValueError, "names 2 operand"),
                       one("einsum('ij,jk', x, x)", lambda: vkml.einsum("ij,jk", x23(), x23()), ShapeError, "'j' is 3"),
                       one("einsum('ijk', x)", lambda: vkml.einsum("ijk", x23()), ShapeError, "names 3 axes")),
    "cat": cases_of(one("cat(x)", lambda: vkml.cat(x23()), (TypeError, DTypeError, ShapeError), "list"),
                    one("cat([x, x], dim=5)", lambda: vkml.cat([x23(), x23()], dim=5), AxisError, "5")),
    "conv-same-stride": one("conv(padding='same', stride=2)", lambda: vkml.conv(img(), k33(), 2, "same"), ValueError, "'same'", "stride 1"),
    "conv-padding-word": one("conv(padding='full')", lambda: vkml.conv(img(), k33(), 1, "full"), TypeError, "'full'"),
    "conv-too-small": one("conv(1x1 image, 3x3 kernel)", lambda: vkml.conv(vkml.ones((1, 1, 1, 1)), k33()), ShapeError, "does not fit"),
    "conv_transpose-output_padding": one("conv_transpose(output_padding=1, stride=1)", lambda: vkml.conv_transpose(img(), k33(), 1, 0, 1), ValueError, "output_padding=1"),
    "var-ddof": one("var(correction, ddof)", lambda: vkml.var(x23(), correction=1, ddof=1), TypeError, "not both"),
    **{n: (lambda n=n: shaped(n)) for n in ("reshape", "broadcast_to", "expand")},
    **{n: (lambda n=n: axes_fn(n)) for n in ("permute", "transpose")},
    **{n: (lambda n=n: creation(n)) for n in ("zeros", "ones")},
    **{n: (lambda n=n: sequence_fn(n)) for n in ("concatenate", "stack")},
    "full": full_values, "arange": arange, "linspace": linspace, "tensor": tensor,
    "from_dlpack": from_dlpack,
    "take": cases_of(lambda: not_tensor_cases("take", vkml.take, vkml.tensor([0])),
                     one("take(float indices)", lambda: vkml.take(x23(), vkml.tensor([0.5]), axis=1), DTypeError, "float32", "astype"),
                     one("take(2-d indices)", lambda: vkml.take(x23(), vkml.tensor([[0]]), axis=1), ShapeError, "(1, 1)"),
                     one("take(axis=5)", lambda: vkml.take(x23(), vkml.tensor([0]), axis=5), AxisError, "axis 5")),
    "take_along_axis": cases_of(lambda: not_tensor_cases("take_along_axis", vkml.take_along_axis, vkml.tensor([[0]])),
                                one("take_along_axis(rank 1)", lambda: vkml.take_along_axis(x23(), vkml.tensor([0])), ShapeError, "(1,)", "rank"),
                                one("take_along_axis(bool)", lambda: vkml.take_along_axis(x23(), vkml.tensor([[True]])), DTypeError, "bool"),
                                one("take_along_axis(axis=2)", lambda: vkml.take_along_axis(x23(), vkml.tensor([[0]]), 2), AxisError, "axis 2"),
                                one("take_along_axis(broadcast)", lambda: vkml.take_along_axis(x23(), vkml.tensor([[0], [0], [0]])), ShapeError, "(3, 1)")),
    **{n: cases_of(lambda n=n: reduction(n),
                   one(f"{n}(axis=(0, 1))", lambda n=n: getattr(vkml, n)(x23(), (0, 1)), AxisError, "(0, 1)", "not an integer"),
                   one(f"{n}(axis=None)", lambda n=n: getattr(vkml, n)(x23(), None), AxisError, "None", "not an integer"),
                   one(f"{n}(descending=1)", lambda n=n: getattr(vkml, n)(x23(), descending=1), DTypeError, "descending=1", "bool"))
       for n in ("sort", "argsort")},
    "argmax-tuple": one("argmax((0, 1))", lambda: vkml.argmax(x23(), (0, 1)), AxisError, "(0, 1)", "not an integer"),
    "unsqueeze": cases_of(lambda: not_tensor_cases("unsqueeze", vkml.unsqueeze, 0),
                          one("unsqueeze('a')", lambda: vkml.unsqueeze(x23(), "a"), AxisError, "'a'", "not an integer"),
                          one("unsqueeze(5)", lambda: vkml.unsqueeze(x23(), 5), AxisError, "5")),
    "astype": cases_of(lambda: not_tensor_cases("astype", vkml.astype, vkml.float32),
                       one("astype('foo')", lambda: vkml.astype(x23(), "foo"), DTypeError, "'foo'")),
    "bitcast": cases_of(lambda: not_tensor_cases("bitcast", vkml.bitcast, vkml.int32),
                        one("bitcast('foo')", lambda: vkml.bitcast(x23(), "foo"), DTypeError, "'foo'")),
    "clip": cases_of(lambda: not_tensor_cases("clip", vkml.clip, 0.0),
                     one("clip()", lambda: vkml.clip(x23()), ValueError, "min", "max"),
                     one("clip('a')", lambda: vkml.clip(x23(), "a"), DataError, "'a'")),
    "where": cases_of(lambda: not_tensor_cases("where", vkml.where, x23(), x23()),
                      one("where-shapes", lambda: vkml.where(x23() > 0, x23(), vkml.ones(2)), ShapeError, "(2,)")),
    "realize": cases_of(*(one(f"realize({v!r})", lambda v=v: vkml.realize(v), DTypeError, type(v).__name__)
                          for v in ("a", None, 3)), one("realize([x, 1])", lambda: vkml.realize([x23(), 1]), DTypeError, "int")),
    "emit_mlir": one("emit_mlir('a')", lambda: vkml.emit_mlir("a"), DTypeError, "str"),
    "device": cases_of(*(one(f"device({v!r})", lambda v=v: vkml.device(v), DeviceError, repr(v), "cpu")
                         for v in ("vulkan:7", "gpu", None, 0, ""))),
    "set_eager": cases_of(*(one(f"set_eager({v!r})", lambda v=v: vkml.set_eager(v), DTypeError, repr(v))
                            for v in ("maybe", None))),
    "promote_types": cases_of(*(one(f"promote_types({v!r})", lambda v=v: vkml.promote_types(v, vkml.float32), DTypeError, repr(v))
                                for v in ("a", 3))),
    "spec": cases_of(*(one(f"spec({s!r})", lambda s=s: vkml.spec(s), ShapeError, "shape")
                       for s in ((-1,), "ab", (2**64,), (1.5,)))),
    "grad": lambda: fn_checks("grad", vkml.grad),
    "value_and_grad": lambda: fn_checks("value_and_grad", vkml.value_and_grad),
    "cond": cases_of(one("cond('a')", lambda: vkml.cond("a", x23, x23), DTypeError, "str"),
                     one("cond(x > 0)", lambda: vkml.cond(x23() > 0, x23, x23), ShapeError, "one-element"),
                     one("cond(arm=1)", lambda: vkml.cond(ALWAYS_TRUE(), 1, x23), TypeError, "on_true", "callable")),
    "while_loop": cases_of(one("while_loop(1, 2, x)", lambda: vkml.while_loop(1, 2, x23()), TypeError, "keep_going", "callable"),
                           one("while_loop(init='a')", lambda: vkml.while_loop(lambda v: v.sum() < 5, lambda v: v + 1, "a"), DTypeError, "str"),
                           one("while_loop()", lambda: vkml.while_loop(lambda v: v, lambda v: v), TypeError, "carried")),
}  # fmt: skip

KEY = lambda: random.key(0)
PARAMS = lambda: [vkml.ones(2, requires_grad=True)]
SGD = lambda: nn.SGD(PARAMS(), lr=0.1)
LINEAR = lambda: nn.Linear(2, 3, key=KEY())


def double(x: vkml.Tensor) -> vkml.Tensor:
    return x * 2.0


SQUARE = lambda: vkml.ones((3, 3))
SUBMODULE_CASES: dict[str, Callable[[], list[Bad]]] = {
    "linalg.matmul": one("matmul(x, x)", lambda: linalg.matmul(x23(), x23()), ShapeError, "(2, 3)"),
    "linalg.matrix_transpose": one("matrix_transpose(v)", lambda: linalg.matrix_transpose(vkml.ones(3)), ShapeError, "(3,)"),
    "linalg.vecdot": one("vecdot(x, ones(2, 4))", lambda: linalg.vecdot(x23(), vkml.ones((2, 4))), ShapeError, "axis -1"),
    "linalg.tensordot": one("tensordot(axes=5)", lambda: linalg.tensordot(x23(), x23(), axes=5), ShapeError, "out of range"),
    "linalg.outer": one("outer(x, x)", lambda: linalg.outer(x23(), x23()), ShapeError, "two vectors"),
    "linalg.cross": one("cross(ones(2, 4))", lambda: linalg.cross(vkml.ones((2, 4)), vkml.ones((2, 4))), ShapeError, "3 elements"),
    "linalg.diagonal": one("diagonal(v)", lambda: linalg.diagonal(vkml.ones(3)), ShapeError, "(3,)"),
    "linalg.trace": one("trace(v)", lambda: linalg.trace(vkml.ones(3)), ShapeError, "(3,)"),
    "linalg.matrix_power": cases_of(one("matrix_power(x, 2)", lambda: linalg.matrix_power(x23(), 2), ShapeError, "square"),
                                    one("matrix_power(-1)", lambda: linalg.matrix_power(SQUARE(), -1), VkmlError, "inverse"),
                                    one("matrix_power(0.5)", lambda: linalg.matrix_power(SQUARE(), 0.5), DTypeError, "0.5")),
    "linalg.vector_norm": cases_of(one("vector_norm(bool)", lambda: linalg.vector_norm(vkml.tensor([True])), DTypeError, "bool"),
                                   one("vector_norm(ord='a')", lambda: linalg.vector_norm(x23(), ord="a"), DTypeError, "'a'")),
    "linalg.matrix_norm": cases_of(one("matrix_norm(ord=2)", lambda: linalg.matrix_norm(SQUARE(), ord=2), VkmlError, "singular values"),
                                   one("matrix_norm(ord='x')", lambda: linalg.matrix_norm(SQUARE(), ord="x"), VkmlError, "'x'")),
    "random.key": cases_of(one("key('a')", lambda: random.key("a"), DTypeError, "'a'"),
                           one("key(2**70)", lambda: random.key(2**70), ValueError, "seed")),
    "random.uniform": cases_of(one("uniform(x)", lambda: random.uniform(x23(), (2,)), DTypeError, "key"),
                               one("uniform(-1)", lambda: random.uniform(KEY(), (-1,)), ShapeError, "negative"),
                               one("uniform(2**40)", lambda: random.uniform(KEY(), (H, H)), ValueError, "split"),
                               one("uniform(low='a')", lambda: random.uniform(KEY(), (2,), low="a"), DTypeError, "low='a'", "not a number"),
                               one("uniform(high=None)", lambda: random.uniform(KEY(), (2,), high=None), DTypeError, "high=None")),
    "random.normal": cases_of(one("normal(dtype='foo')", lambda: random.normal(KEY(), (2,), dtype="foo"), DTypeError, "'foo'"),
                              one("normal(dtype=int32)", lambda: random.normal(KEY(), (2,), dtype=vkml.int32), DTypeError, "int32", "randint"),
                              one("normal(mean='a')", lambda: random.normal(KEY(), (2,), mean="a"), DTypeError, "mean='a'"),
                              one("normal(std=inf)", lambda: random.normal(KEY(), (2,), std=float("inf")), ValueError, "std=inf", "finite")),
    "random.randint": cases_of(one("randint(0.5)", lambda: random.randint(KEY(), (2,), 0.5, 5), DTypeError, "0.5"),
                               one("randint('a', 5)", lambda: random.randint(KEY(), (2,), "a", 5), DTypeError, "low='a'")),
    "random.bits": one("bits('ab')", lambda: random.bits(KEY(), "ab"), ShapeError, "'ab'"),
    "random.split": cases_of(one("split(-1)", lambda: random.split(KEY(), -1), ValueError, "num=-1"),
                             one("split('a')", lambda: random.split(KEY(), "a"), ValueError, "num='a'")),
    "random.permutation": cases_of(one("permutation(2**40)", lambda: random.permutation(KEY(), 2**40), ValueError, "n="),
                                   one("permutation('a')", lambda: random.permutation(KEY(), "a"), ValueError, "n='a'")),
    "trace.capture": cases_of(one("capture(3)", lambda: trace.capture(3), TypeError, "callable"),
                              one("capture(fn, 'a')", lambda: trace.capture(lambda a: a, "a"), DataError, "'a'")),
    "trace.spec": one("spec(-1)", lambda: trace.spec((-1,)), ShapeError, "negative"),
    "aot.load": cases_of(one("load(missing)", lambda: aot.load("/nonexistent/m.vmfb"), VkmlError, "/nonexistent/m.vmfb"),
                         one("load(3)", lambda: aot.load(3), TypeError, "path=3", "not a path"),
                         one("load(parameters=3)", lambda: aot.load("m.vmfb", parameters=3), TypeError, "parameters=3")),
    "aot.export": cases_of(one("export(3)", lambda: aot.export(3, vkml.spec((2,))), TypeError, "callable"),
                           one("export(fn, 'a')", lambda: aot.export(double, "a"), DataError, "'x'", "str"),
                           one("export(name=3)", lambda: aot.export(double, vkml.spec((2,)), name=3), ValueError, "name 3")),
    "nn.Linear": cases_of(one("Linear(key='a')", lambda: nn.Linear(2, 3, key="a"), DTypeError, "key"),
                          one("Linear('a', 3)", lambda: nn.Linear("a", 3, key=KEY()), ShapeError, "in_features='a'"),
                          one("Linear(2, 'a')", lambda: nn.Linear(2, "a", key=KEY()), ShapeError, "out_features='a'"),
                          one("Linear(-1, 3)", lambda: nn.Linear(-1, 3, key=KEY()), ShapeError, "in_features=-1", "positive"),
                          one("Linear(0, 3)", lambda: nn.Linear(0, 3, key=KEY()), ShapeError, "in_features=0"),
                          one("linear('a')", lambda: LINEAR()("a"), DTypeError, "Linear", "str")),
    "nn.Embedding": cases_of(one("Embedding(-1)", lambda: nn.Embedding(-1, 3, key=KEY()), ShapeError, "negative"),
                             one("Embedding('a', 3)", lambda: nn.Embedding("a", 3, key=KEY()), ShapeError, "num_embeddings='a'"),
                             one("Embedding(key='a')", lambda: nn.Embedding(2, 3, key="a"), DTypeError, "key"),
                             one("embedding('a')", lambda: nn.Embedding(2, 3, key=KEY())("a"), DTypeError, "str")),
    "nn.LayerNorm": cases_of(one("LayerNorm(-1)", lambda: nn.LayerNorm(-1), ShapeError, "negative"),
                             one("LayerNorm('a')", lambda: nn.LayerNorm("a"), ShapeError, "'a'"),
                             one("LayerNorm(eps='a')", lambda: nn.LayerNorm(3, eps="a"), DTypeError, "eps='a'"),
                             one("layer_norm('a')", lambda: nn.LayerNorm(3)("a"), DTypeError, "str")),
    **{f"nn.{n}": cases_of(one(f"{n}('a', 2, 3)", lambda n=n: getattr(nn, n)("a", 2, 3, key=KEY()), ShapeError, "in_channels='a'"),
                           one(f"{n}(2, 2, 0)", lambda n=n: getattr(nn, n)(2, 2, 0, key=KEY()), ValueError, "kernel_size=0"),
                           one(f"{n}(stride=0)", lambda n=n: getattr(nn, n)(2, 2, 1, 0, key=KEY()), ValueError, "stride=0"),
                           one(f"{n}(groups=3)", lambda n=n: getattr(nn, n)(2, 2, 1, groups=3, key=KEY()), ValueError, "groups=3"),
                           one(f"{n}(key='a')", lambda n=n: getattr(nn, n)(2, 2, 1, key="a"), DTypeError, "key"),
                           one(f"{n}()('a')", lambda n=n: getattr(nn, n)(2, 2, 1, key=KEY())("a"), DTypeError, "str"),
                           one(f"{n}()(2-D)", lambda n=n: getattr(nn, n)(2, 2, 1, key=KEY())(vkml.ones((2, 2))), ShapeError, "(2, 2)"))
       for n in ("Conv1d", "Conv2d", "Conv3d")},
    **{f"nn.{n}": cases_of(one(f"{n}(0)", lambda n=n: getattr(nn, n)(0), ValueError, "kernel_size=0"),
                           one(f"{n}(2, padding=2)", lambda n=n: getattr(nn, n)(2, padding=2), ValueError, "padding=2", "half"),
                           one(f"{n}(2)('a')", lambda n=n: getattr(nn, n)(2)("a"), DTypeError, "str"))
       for n in ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d")},
    "nn.AdaptiveAvgPool2d": cases_of(one("AdaptiveAvgPool2d(0)", lambda: nn.AdaptiveAvgPool2d(0), ValueError, "output_size=0"),
                                     one("AdaptiveAvgPool2d((1, 2, 3))", lambda: nn.AdaptiveAvgPool2d((1, 2, 3)), ValueError, "(1, 2, 3)"),
                                     one("AdaptiveAvgPool2d(1)('a')", lambda: nn.AdaptiveAvgPool2d(1)("a"), DTypeError, "str")),
    "nn.Flatten": cases_of(one("Flatten(5)(x)", lambda: nn.Flatten(5)(x23()), AxisError, "5"),
                           one("Flatten()('a')", lambda: nn.Flatten()("a"), DTypeError, "str")),
    **{f"nn.{n}": cases_of(one(f"{n}(0)", lambda n=n: getattr(nn, n)(0), ShapeError, "num_features=0"),
                           one(f"{n}(3, momentum=2)", lambda n=n: getattr(nn, n)(3, momentum=2), ValueError, "momentum=2"),
                           one(f"{n}(3, eps='a')", lambda n=n: getattr(nn, n)(3, eps="a"), DTypeError, "eps='a'"),
                           one(f"{n}(3)(wrong channels)", lambda n=n: getattr(nn, n)(3)(vkml.ones((2, 4, 5, 5)[: 3 if n.endswith("1d") else 4])), ShapeError, "3 channels"),
                           one(f"{n}(3)(ints)", lambda n=n: getattr(nn, n)(3)(vkml.ones((2, 3, 5, 5)[: 3 if n.endswith("1d") else 4], dtype=vkml.int32)), DTypeError, "int32"),
                           one(f"{n}(3)('a')", lambda n=n: getattr(nn, n)(3)("a"), DTypeError, "str"))
       for n in ("BatchNorm1d", "BatchNorm2d")},
    "nn.GroupNorm": cases_of(one("GroupNorm(4, 6)", lambda: nn.GroupNorm(4, 6), ShapeError, "num_groups=4"),
                             one("GroupNorm(0, 6)", lambda: nn.GroupNorm(0, 6), ShapeError, "num_groups=0"),
                             one("GroupNorm(2, 6)(5 channels)", lambda: nn.GroupNorm(2, 6)(vkml.ones((2, 5, 3))), ShapeError, "(2, 5, 3)"),
                             one("GroupNorm(2, 6)('a')", lambda: nn.GroupNorm(2, 6)("a"), DTypeError, "str")),
    "nn.manual_seed": cases_of(one("manual_seed('a')", lambda: nn.manual_seed("a"), DTypeError, "'a'"),
                               one("manual_seed(2**70)", lambda: nn.manual_seed(2**70), ValueError, str(2**70))),
    "nn.Dropout": cases_of(one("Dropout(1.5)", lambda: nn.Dropout(1.5), ValueError, "p=1.5"),
                           one("Dropout('a')", lambda: nn.Dropout("a"), DTypeError, "p='a'"),
                           one("Dropout(key='a')", lambda: nn.Dropout(0.5, key="a"), DTypeError, "key", "str"),
                           one("dropout('a')", lambda: nn.Dropout(0.5)("a"), DTypeError, "str")),
    "nn.ReLU": one("relu('a')", lambda: nn.ReLU()("a"), DTypeError, "str"),
    "nn.GELU": one("gelu('a')", lambda: nn.GELU()("a"), DTypeError, "str"),
    "nn.Sequential": one("Sequential('a')", lambda: nn.Sequential("a"), TypeError, "str"),
    "nn.Module": cases_of(one("load_state_dict(3)", lambda: LINEAR().load_state_dict(3), TypeError, "mapping", "int"),
                          one("load_state_dict('a')", lambda: LINEAR().load_state_dict({"bias": "a"}, strict=False), DataError, "'bias'", "str"),
                          one("load(3)", lambda: LINEAR().load(3), TypeError, "path=3"),
                          one("save(3)", lambda: LINEAR().save(3), TypeError, "path=3"),
                          one("train('a')", lambda: LINEAR().train("a"), TypeError, "mode='a'")),
    "nn.Optimizer": cases_of(one("opt.lr = 'a'", lambda: setattr(SGD(), "lr", "a"), DTypeError, "lr='a'"),
                             one("opt.step(3)", lambda: SGD().step(3), TypeError, "closure", "int")),
    "nn.SGD": cases_of(one("SGD([])", lambda: nn.SGD([], lr=0.1), ValueError, "empty"),
                       one("SGD('a')", lambda: nn.SGD("a", lr=0.1), TypeError, "str"),
                       one("SGD(3)", lambda: nn.SGD(3, lr=0.1), TypeError, "params", "int"),
                       one("SGD(lr='a')", lambda: nn.SGD(PARAMS(), lr="a"), DTypeError, "lr='a'", "not a number"),
                       one("SGD(lr=-1)", lambda: nn.SGD(PARAMS(), lr=-1), ValueError, "lr=-1", ">= 0"),
                       one("SGD(lr=nan)", lambda: nn.SGD(PARAMS(), lr=float("nan")), ValueError, "lr=nan", "finite"),
                       one("SGD(momentum='a')", lambda: nn.SGD(PARAMS(), lr=0.1, momentum="a"), DTypeError, "momentum='a'"),
                       one("SGD(weight_decay=-1)", lambda: nn.SGD(PARAMS(), lr=0.1, weight_decay=-1), ValueError, "weight_decay=-1")),
    "nn.Adam": cases_of(one("Adam(betas)", lambda: nn.Adam(PARAMS(), betas=(2.0, 0.9)), ValueError, "betas"),
                        one("Adam(betas='a')", lambda: nn.Adam(PARAMS(), betas="a"), TypeError, "betas='a'", "pair"),
                        one("Adam(lr='a')", lambda: nn.Adam(PARAMS(), lr="a"), DTypeError, "lr='a'"),
                        one("Adam(eps='a')", lambda: nn.Adam(PARAMS(), eps="a"), DTypeError, "eps='a'")),
    "nn.AdamW": cases_of(one("AdamW([])", lambda: nn.AdamW([]), ValueError, "empty"),
                         one("AdamW(weight_decay='a')", lambda: nn.AdamW(PARAMS(), weight_decay="a"), DTypeError, "weight_decay='a'")),
    "nn.mse_loss": cases_of(one("mse_loss(shapes)", lambda: nn.mse_loss(x23(), vkml.ones(3)), ShapeError, "(3,)"),
                            one("mse_loss(reduction)", lambda: nn.mse_loss(x23(), x23(), reduction="avg"), ValueError, "'avg'"),
                            one("mse_loss(x, 'a')", lambda: nn.mse_loss(x23(), "a"), DTypeError, "mse_loss", "str")),
    "nn.cross_entropy": cases_of(one("cross_entropy(float labels)", lambda: nn.cross_entropy(x23(), vkml.ones(2)), DTypeError, "labels"),
                                 one("cross_entropy(x, 'a')", lambda: nn.cross_entropy(x23(), "a"), DTypeError, "cross_entropy", "str")),
    "nn.CompiledStep": cases_of(one("CompiledStep(opt, 4)", lambda: nn.CompiledStep(SGD(), 4), TypeError, "callable"),
                                one("CompiledStep(3, fn)", lambda: nn.CompiledStep(3, double), TypeError, "optimizer", "int")),
}  # fmt: skip

# Public names with no bad calls here, and why.
EXEMPT = {
    **{n: "takes no arguments" for n in ("best_device", "is_eager", "stats", "reset_stats", "no_grad")},
    **{n: "a value, not a callable" for n in ("cpu", "reference")},
    "Tensor": "constructed by vkml from a node; its public methods are walked by TENSOR_METHODS",
    "Graph": "Graph.builder turns Python source into a graph: tests/py/builder/ walks its errors",
    "Device": "a base class; devices come from vkml.device(name), walked above",
    "DType": "the dtype vocabulary: every dtype argument above is walked with bad ones",
    **{f"aot.{n}": "read from an artefact, not built from user data"
       for n in ("Artifact", "Loaded", "Manifest", "Signature", "Slot")},
    **{f"trace.{n}": "built by capture/spec, walked above" for n in ("Argument", "Captured", "Spec")},
    "random.Key": "made by random.key (walked above)",
}  # fmt: skip
SUBMODULES = {"aot": aot, "linalg": linalg, "nn": nn, "random": random, "trace": trace}
# Public submodules whose bad inputs are walked elsewhere, and where.
SUBMODULES_ELSEWHERE = {
    "array_api": "the standard's namespace over the functions walked here: its own checks are "
    "in tests/py/array_api and the standard's suite (make array-api)",
    "diff": "the reverse pass of a builder graph: tests/py/builder/test_reverse.py walks its "
    "refusals (no record=True, temporaries, integer parameters, bad seeds, device loops)",
}
TENSOR_METHODS: dict[str, Callable[[], list[Bad]]] = {
    "astype": one("x.astype('foo')", lambda: x23().astype("foo"), DTypeError, "'foo'"),
    "to": one("x.to('gpu')", lambda: x23().to("gpu"), DeviceError, "'gpu'"),
    "to_device": one("x.to_device('gpu')", lambda: x23().to_device("gpu"), DeviceError, "'gpu'"),
    "item": one("x.item()", lambda: x23().item(), ShapeError, "(2, 3)"),
    "backward": one("x.backward('a')", lambda: x23().sum().backward("a"), (DataError, VkmlError)),
    "grad": one("x.grad = 3", lambda: setattr(x23(), "grad", 3), DTypeError, "int"),
    "__getitem__": cases_of(*(one(f"x[{i!r}]", lambda i=i: x23()[i], IndexingError)
                              for i in (1.5, "a", slice(None, None, 0), slice("a", None), 2, [0.5])),
                           one("x[mask]", lambda: x23()[vkml.tensor([True])], IndexingError, "(1,)", "leading shape", "(2,)"),
                           one("x[mask, 0]", lambda: x23()[x23() > 0.0, 0], IndexingError, "(2, 3)", "sole index"),
                           one("x[i, 1:]", lambda: x23()[vkml.tensor([0]), 1:], IndexingError, "per axis", "slice"),
                           one("x[i, 3]", lambda: x23()[vkml.tensor([0]), 3], IndexingError, "3", "out of bounds")),
    "__add__": one("x + 'a'", lambda: x23() + "a", DataError, "'a'"),
    "__matmul__": one("x @ 'a'", lambda: x23() @ "a", DTypeError, "str"),
    "__lt__": one("x < None", lambda: x23() < None, DataError, "NoneType"),
    "__bool__": one("bool(x)", lambda: bool(x23()), ShapeError, "6 elements"),
    **{m: (lambda m=m: [bad(f"x.{m}(axis=5)", lambda: getattr(x23(), m)(axis=5), AxisError, "axis 5")])
       for m in [*REDUCTION_METHODS, "cumsum", "mean", "softmax", "log_softmax", "squeeze", "var", "std", "any", "all", "sort", "argsort"]},
    **{m: cases_of(one(f"x.{m}(axis=5)", lambda m=m: getattr(x23(), m)(axis=5), AxisError, "axis 5"),
                   one(f"x.{m}(dim=5)", lambda m=m: getattr(x23(), m)(dim=5), AxisError, "5"),
                   one(f"x.{m}(dim=(0, 1))", lambda m=m: getattr(x23(), m)(dim=(0, 1)), AxisError, "(0, 1)"),
                   one(f"x.{m}(0, dim=1)", lambda m=m: getattr(x23(), m)(0, dim=1), TypeError, "not both"),
                   one(f"x.{m}(dim=0, keepdim='a')", lambda m=m: getattr(x23(), m)(dim=0, keepdim="a"), DTypeError, "keepdim='a'"))
       for m in ("max", "min")},
    "topk": cases_of(one("x.topk(4)", lambda: x23().topk(4), ShapeError, "k=4", "[0, 3]"),
                     one("x.topk(-1)", lambda: x23().topk(-1), ShapeError, "k=-1"),
                     one("x.topk(1.5)", lambda: x23().topk(1.5), ShapeError, "k=1.5"),
                     one("x.topk(1, dim=2)", lambda: x23().topk(1, dim=2), AxisError, "2"),
                     one("x.topk(1, largest='a')", lambda: x23().topk(1, largest="a"), DTypeError, "largest='a'")),
    "at": cases_of(one("x.at[5].set(0)", lambda: x23().at[5].set(0.0), IndexingError, "index 5"),
                   one("x.at[0].set(ones(4))", lambda: x23().at[0].set(np.ones(4)), ShapeError, "broadcast"),
                   one("x.at[0].add('a')", lambda: x23().at[0].add("a"), DTypeError, "str"),
                   one("mask.at[0].max(1)", lambda: (x23() > 0).at[0].max(1), DTypeError, "bool")),
    "nonzero": one("scalar.nonzero()", lambda: vkml.ones(()).nonzero(), ShapeError, "0-d"),
    "flatten": one("x.flatten(5)", lambda: x23().flatten(5), AxisError, "5"),
    "view": one("x.view('foo')", lambda: x23().view("foo"), DTypeError, "'foo'"),
    **{m: (lambda m=m: [bad(f"x.{m}(2.5)", lambda: getattr(x23(), m)(2.5, 3), ShapeError, "2.5")])
       for m in ("reshape", "broadcast_to", "expand")},
    **{m: (lambda m=m: [bad(f"x.{m}(0, 5)", lambda: getattr(x23(), m)(0, 5), AxisError, "5")])
       for m in ("permute", "transpose")},
    "unsqueeze": one("x.unsqueeze('a')", lambda: x23().unsqueeze("a"), AxisError, "'a'"),
    "clip": one("x.clip()", lambda: x23().clip(), ValueError, "min"),
    **{m: (lambda m=m: [bad(f"x.{m}('a')", lambda: getattr(x23(), m)("a"), DataError, "'a'")])
       for m in BINARY_METHODS},
    "matmul": one("x.matmul(x)", lambda: x23().matmul(x23()), ShapeError, "(2, 3)"),
    "requires_grad_": one("int.requires_grad_()", lambda: vkml.tensor([1]).requires_grad_(), DTypeError, "int64"),
}  # fmt: skip
# every other public attribute of Tensor takes no argument: a property or a no-argument op
NO_ARGUMENT_METHODS = {m for d in SPELLED if d.spelling and d.rule is rules.unary for m in d.spelling.methods} | {
    "T", "mT", "detach", "device", "dtype", "is_leaf", "is_realized", "ndim", "node", "numpy",
    "realize", "requires_grad", "shape", "size", "tolist", "isnan", "isinf", "isfinite", "ravel", "clone"}  # fmt: skip


def public_names() -> set[str]:
    names = {n for n in vkml.__all__ if not inspect.ismodule(getattr(vkml, n))}
    names -= {n for n in names if isinstance(getattr(vkml, n), vkml.DType)}
    names -= {n for n in names if inspect.isclass(getattr(vkml, n))
              and issubclass(getattr(vkml, n), (BaseException, Warning))}  # fmt: skip
    return names | {f"{m}.{n}" for m, mod in SUBMODULES.items() for n in mod.__all__}


def test_every_public_name_is_walked() -> None:
    covered = set(CASES) | set(SUBMODULE_CASES) | set(EXEMPT)
    assert not public_names() - covered, "add bad calls (CASES) or an EXEMPT reason"
    extra = {"argmax-tuple", "var-ddof", "conv-same-stride", "conv-padding-word", "conv-too-small",
             "conv_transpose-output_padding"}  # fmt: skip
    assert not covered - public_names() - extra, "CASES names no public name"
    modules = {m for m in vkml.__all__ if inspect.ismodule(getattr(vkml, m))}
    assert modules == set(SUBMODULES) | set(SUBMODULES_ELSEWHERE)
    methods = {n for n in dir(vkml.Tensor) if not n.startswith("_")}
    assert not methods - set(TENSOR_METHODS) - NO_ARGUMENT_METHODS, "walk the new Tensor method"


class Survivors:
    """Tensors made before a bad call on every device, realized and lazy."""

    def __init__(self) -> None:
        self.made = [
            (vkml.tensor(A, device=d), vkml.tensor(A, device=d) * 2.0 + 1.0) for d in DEVICES
        ]

    def check(self) -> None:
        for realized, lazy in self.made:
            assert realized.is_realized and not lazy.is_realized
            assert realized.numpy().tobytes() == A.tobytes()
        want = (vkml.tensor(A, device="reference") * 2.0 + 1.0).numpy()
        for _, lazy in self.made:  # elementwise ops are bit-exact across devices by contract
            assert lazy.numpy().tobytes() == want.tobytes(), lazy.device


def assert_raised_on_purpose(case: Bad) -> None:
    with pytest.raises(BaseException) as info:
        case.call()
    error = info.value
    assert isinstance(error, case.errors), f"{case.label}: {type(error).__name__}: {error}"
    innermost = traceback.extract_tb(error.__traceback__)[-1].filename
    assert isinstance(error, VkmlError) or innermost.startswith(VKML_DIR), (
        f"{case.label}: {type(error).__name__} escaped from {innermost}: {error}")  # fmt: skip
    for word in case.words:
        assert word in str(error), f"{case.label}: {word!r} missing from {error}"


ALL_CASES = {**CASES, **SUBMODULE_CASES, **{f"Tensor.{k}": v for k, v in TENSOR_METHODS.items()}}


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_bad_calls_raise_a_named_error_and_leave_tensors_usable(name: str) -> None:
    survivors = Survivors()
    cases = ALL_CASES[name]()
    assert cases
    for case in cases:
        assert_raised_on_purpose(case)
    survivors.check()


# -- 2**40 elements: refused before anything is allocated (RSS stays flat) ----------------------
HUGE: dict[str, Callable[[str], vkml.Tensor]] = {
    "zeros": lambda d: vkml.zeros((H, H), device=d),
    "ones": lambda d: vkml.ones((H, H), device=d),
    "full": lambda d: vkml.full((H, H), 2.5, device=d),
    "arange": lambda d: vkml.arange(2**40, device=d),
    "broadcast_to": lambda d: vkml.broadcast_to(vkml.ones((1, 1), device=d), (H, H)),
    "reshape": lambda d: vkml.ones((1, 1), device=d).expand(H, H).reshape(2**40),
}


def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", sorted(HUGE))
def test_huge_tensor_fails_before_allocating(make: str, device: str) -> None:
    survivors = Survivors()
    huge = HUGE[make](device)  # recording is free: a lazy tensor holds no memory
    peak = _rss_bytes()
    with pytest.raises(DeviceMemoryError) as info:  # vkml's guard or the device's refusal
        huge.numpy()
    assert "TiB" in str(info.value) and "smaller" in str(info.value)
    assert info.value.nbytes is not None and info.value.nbytes >= 2**42
    assert info.value.device == device
    assert _rss_bytes() - peak < 2**28, "the peak RSS grew by more than 256 MiB"
    assert not huge.is_realized
    survivors.check()
    # a huge *lazy* intermediate stays legal: only what must be allocated is refused
    assert huge.shape in ((H, H), (2**40,))


# -- NumPy inputs that are unusual but valid: the values arrive intact ------------------------
def _numpy_inputs() -> dict[str, np.ndarray]:
    base = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5
    readonly = base.copy()
    readonly.flags.writeable = False
    return {
        "strided": base[:, ::2], "negative-step": base[::-1, ::-3], "transposed": base.T,
        "readonly": readonly, "big-endian-f4": base.astype(">f4"),
        "big-endian-f8": base.astype(">f8"), "big-endian-i4": base.astype(">i4"),
        "big-endian-i8-strided": base.astype(">i8")[::2], "big-endian-f2": base.astype(">f2"),
        "fortran": np.asfortranarray(base),
    }  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", sorted(_numpy_inputs()))
def test_unusual_numpy_inputs_keep_their_values(kind: str, device: str) -> None:
    host = _numpy_inputs()[kind]
    want = host.astype(host.dtype.newbyteorder("="))  # the same numbers in native order
    t = vkml.tensor(host, device=device)
    got = t.numpy()
    assert got.dtype == want.dtype and got.tobytes() == np.ascontiguousarray(want).tobytes()
    total = (t * 2).sum().numpy()
    ref = (vkml.tensor(want, device="reference") * 2).sum().numpy()
    assert total.tobytes() == ref.tobytes()  # pairwise sums are bit-exact across devices
    assert vkml.zeros(2, dtype=host.dtype).dtype is t.dtype  # '>f4' names float32 too


# -- environment variables vkml reads: a bad value is a named error, never silently ignored --
@pytest.mark.parametrize("value", ["maybe", "2", "enable", "tru"])
def test_bad_vkml_eager_names_the_accepted_values(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    survivors = Survivors()
    monkeypatch.setattr(eager, "_EAGER", None)  # read the variable again, as a new process
    monkeypatch.setenv("VKML_EAGER", value)
    with pytest.raises(ConfigError) as info:
        _ = vkml.ones(2) + 1.0
    assert f"VKML_EAGER={value!r}" in str(info.value) and "set_eager" in str(info.value)
    monkeypatch.setenv("VKML_EAGER", " Off ")
    survivors.check()
    assert not vkml.is_eager()


@pytest.mark.parametrize(
    ("variable", "value", "error", "words"),
    [
        ("VKML_COVERAGE", "/nonexistent/dir/cov.tsv", ConfigError, ("VKML_COVERAGE", "writable")),
        ("VKML_COVERAGE", "/", ConfigError, ("VKML_COVERAGE", "directory")),
        ("VKML_PRECOMPILE_VULKAN", "ampere,bogus", DeviceError, ("'bogus'", "+f64")),
        ("VKML_PRECOMPILE_VULKAN", "ampere,,+f64", DeviceError, ("VKML_PRECOMPILE_VULKAN",)),
    ],
)
def test_bad_environment_value_is_a_named_error(
    variable: str, value: str, error: type[VkmlError], words: tuple[str, ...],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    device = "cpu" if variable == "VKML_COVERAGE" else "vulkan:0"
    if device not in DEVICES:
        pytest.skip("needs a Vulkan device")
    survivors = Survivors()
    scale = 3.0 + sum(map(ord, variable + value))  # a graph this process has not compiled
    # a compiled-in constant (full), not a Python number, which would be a run-time input
    fresh = (
        vkml.tensor(A[::-1].copy(), device=device) * vkml.full(A.shape, scale, device=device) - 0.5
    )
    monkeypatch.setenv(variable, value)
    with pytest.raises(error) as info:
        fresh.numpy()
    for word in words:
        assert word in str(info.value), f"{word!r} missing from {info.value}"
    monkeypatch.delenv(variable)
    survivors.check()
    want = vkml.tensor(A[::-1].copy(), device="reference") * scale - 0.5
    assert fresh.numpy().tobytes() == want.numpy().tobytes()


@pytest.mark.parametrize("value", ["", "__file__", "/dev/null/x"])
def test_cache_dir_that_is_a_file_or_empty_still_computes(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also a path under a file, which once was refused because /dev/null is writable by
    all, with the advice to chmod it."""
    # permissions of the cache directory are tests/py/compiler's subject, not this one's
    survivors = Survivors()
    monkeypatch.setenv("VKML_CACHE_DIR", __file__ if value == "__file__" else value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # a graph not compiled yet: its full constant is compiled in
        got = (vkml.tensor(A) * vkml.full(A.shape, 7.0 + len(value)) - 3.0).numpy()
    if value == "/dev/null/x":
        said = [str(w.message) for w in caught if issubclass(w.category, vkml.CacheWarning)]
        assert any("/dev/null is not a directory" in m for m in said), said
    want = vkml.tensor(A, device="reference") * (7.0 + len(value)) - 3.0
    assert got.tobytes() == want.numpy().tobytes()
    survivors.check()


def test_bad_vulkan_target_names_the_known_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    # read when a Vulkan device is first opened (once per process): ask the rule directly
    if "vulkan:0" not in DEVICES:
        pytest.skip("needs a Vulkan device")
    monkeypatch.setenv("VKML_VULKAN_TARGET", "bogus")
    with pytest.raises(DeviceError) as info:
        vulkan_target_for(vulkan_device_reports()[0])
    assert "VKML_VULKAN_TARGET='bogus'" in str(info.value) and "llvmpipe" in str(info.value)
