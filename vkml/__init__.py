"""vkml: lazy tensors compiled through IREE, deterministic by contract.

Operations record an immutable graph; nothing runs until a value is observed
(``numpy()``, ``item()``, ``tolist()``, printing) or ``realize()`` is called. Then the whole
pending graph is lowered to MLIR, rewritten by vkml's passes, compiled by IREE (cached) and
run as ONE invocation on the tensors' device.
"""

from __future__ import annotations

from typing import Any

from vkml.dtypes import (
    DType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int32,
    int64,
    promote_types,
    uint32,
)
from vkml.errors import (
    AxisError,
    CompileError,
    DataError,
    DeviceError,
    DeviceFaultError,
    DeviceMemoryError,
    DTypeError,
    GradientError,
    IndexingError,
    InvocationError,
    ShapeError,
    UnsupportedOperatorError,
    VkmlError,
)
from vkml.frontend import random
from vkml.frontend.autograd import grad, no_grad, value_and_grad
from vkml.frontend.creation import arange, full, linspace, ones, realize, tensor, zeros
from vkml.frontend.devices import Device, best_device, cpu, device, reference
from vkml.frontend.eager import is_eager, set_eager
from vkml.frontend.ops import (
    amax,
    amin,
    argmax,
    argmin,
    astype,
    bitcast,
    clip,
    log_softmax,
    matmul,
    mean,
    softmax,
    where,
)
from vkml.frontend.ops import sum as _sum
from vkml.frontend.ops import binary as _binary
from vkml.frontend.ops import bitwise as _bitwise
from vkml.frontend.ops import compare as _compare
from vkml.frontend.ops import unary as _unary
from vkml.compiler.lower import emitted_mlir as _emitted_mlir
from vkml.frontend.tensor import Tensor
from vkml.frontend.views import (
    broadcast_to,
    concatenate,
    expand,
    permute,
    reshape,
    squeeze,
    stack,
    transpose,
    unsqueeze,
)
from vkml.runtime.stats import reset_stats as _reset_stats
from vkml.runtime.stats import snapshot as _snapshot

from vkml import nn  # the layer above frontend: modules, layers, losses, optimisers

__version__ = "0.1.0"

sum = _sum  # noqa: A001


def add(a: Any, b: Any) -> Tensor:
    return _binary("add", a, b)


def subtract(a: Any, b: Any) -> Tensor:
    return _binary("sub", a, b)


def multiply(a: Any, b: Any) -> Tensor:
    return _binary("mul", a, b)


def divide(a: Any, b: Any) -> Tensor:
    return _binary("div", a, b)


def power(a: Any, b: Any) -> Tensor:
    return _binary("pow", a, b)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum; NaN in either operand gives NaN (PyTorch semantics)."""
    return _binary("maximum", a, b)


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum; NaN in either operand gives NaN (PyTorch semantics)."""
    return _binary("minimum", a, b)


def equal(a: Any, b: Any) -> Tensor:
    return _compare("eq", a, b)


def not_equal(a: Any, b: Any) -> Tensor:
    return _compare("ne", a, b)


def less(a: Any, b: Any) -> Tensor:
    return _compare("lt", a, b)


def less_equal(a: Any, b: Any) -> Tensor:
    return _compare("le", a, b)


def greater(a: Any, b: Any) -> Tensor:
    return _compare("gt", a, b)


def greater_equal(a: Any, b: Any) -> Tensor:
    return _compare("ge", a, b)


def bitwise_and(a: Any, b: Any) -> Tensor:
    """Elementwise ``a & b`` (integers only)."""
    return _bitwise("bitwise_and", a, b)


def bitwise_or(a: Any, b: Any) -> Tensor:
    """Elementwise ``a | b`` (integers only)."""
    return _bitwise("bitwise_or", a, b)


def bitwise_xor(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ^ b`` (integers only)."""
    return _bitwise("bitwise_xor", a, b)


def left_shift(a: Any, b: Any) -> Tensor:
    """Elementwise ``a << b`` (integers only); an amount outside [0, bits) gives 0."""
    return _bitwise("left_shift", a, b)


def right_shift(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >> b`` (integers only): logical on uint32, arithmetic on signed
    integers; an amount outside [0, bits) gives 0, or -1 for a negative signed ``a``."""
    return _bitwise("right_shift", a, b)


def _unary_function(op: str, doc: str) -> Any:
    def fn(x: Tensor) -> Tensor:
        return _unary(op, x)

    fn.__name__ = fn.__qualname__ = {"neg": "negative"}.get(op, op)
    fn.__doc__ = doc
    return fn


negative = _unary_function("neg", "Elementwise negation.")
abs = _unary_function("abs", "Elementwise absolute value.")  # noqa: A001
exp = _unary_function("exp", "Elementwise e**x.")
log = _unary_function("log", "Elementwise natural logarithm.")
sqrt = _unary_function("sqrt", "Elementwise square root.")
rsqrt = _unary_function("rsqrt", "Elementwise 1 / sqrt(x).")
tanh = _unary_function("tanh", "Elementwise hyperbolic tangent.")
sin = _unary_function("sin", "Elementwise sine.")
cos = _unary_function("cos", "Elementwise cosine.")
sigmoid = _unary_function("sigmoid", "Elementwise 1 / (1 + exp(-x)).")
erf = _unary_function("erf", "Elementwise error function.")
relu = _unary_function("relu", "max(x, 0); NaN stays NaN (PyTorch semantics).")
gelu = _unary_function("gelu", "Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))).")


def emit_mlir(*tensors: Tensor, passes: bool = False) -> str:
    """The MLIR module vkml would compile to realize ``tensors`` (after vkml's own passes
    when ``passes`` is true). Nothing is compiled or run."""
    return _emitted_mlir([t.node for t in tensors], passes=passes)


def stats() -> dict[str, float]:
    """Process-wide counters: realizes, invocations, compiles, cache_hits_memory,
    cache_hits_disk, compile_seconds."""
    return _snapshot()


def reset_stats() -> None:
    """Set every counter of ``stats()`` back to zero."""
    _reset_stats()


__all__ = [
    "AxisError", "CompileError", "DTypeError", "DataError", "Device", "DeviceError",
    "DeviceFaultError", "DeviceMemoryError", "DType",
    "GradientError", "IndexingError", "InvocationError", "ShapeError", "Tensor",
    "UnsupportedOperatorError", "VkmlError", "abs", "add", "amax", "amin", "arange", "argmax",
    "argmin", "astype", "best_device", "bfloat16", "bitcast", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bool_", "broadcast_to", "clip", "concatenate", "cos", "cpu", "device", "divide",
    "emit_mlir", "equal", "erf", "exp", "expand", "float16", "float32", "float64", "full",
    "gelu", "grad", "greater", "greater_equal", "int32", "int64", "is_eager", "left_shift",
    "less", "less_equal", "linspace", "log", "log_softmax", "matmul", "maximum", "mean",
    "minimum", "multiply", "negative", "nn", "no_grad", "not_equal", "ones", "permute", "power",
    "promote_types", "random", "realize", "reference", "relu", "reset_stats", "reshape",
    "right_shift", "rsqrt", "set_eager", "sigmoid", "sin", "softmax", "sqrt", "squeeze",
    "stack", "stats", "subtract", "sum", "tanh", "tensor", "transpose", "uint32", "unsqueeze",
    "value_and_grad", "where", "zeros",
]  # fmt: skip
