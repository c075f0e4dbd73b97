"""``vkml.linalg``: the linear algebra that composes from vkml's ops, with the Array API's
names and signatures (its ``linalg`` extension): ``matmul``, ``matrix_transpose``, ``vecdot``,
``tensordot``, ``outer``, ``cross``, ``diagonal``, ``trace``, ``matrix_power``,
``vector_norm``, ``matrix_norm``. Sums are vkml's pairwise sums and products its matmul, so
each function keeps the contract of the ops it is made of (docs/contracts.md), and gradients
come from them.

Not yet: the factorizations and what needs them (``solve``, ``inv``, ``det``, ``slogdet``,
``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``pinv``, ``matrix_rank``,
``lstsq``), nor the 2-norms and nuclear norm of a matrix (its singular values).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vkml.errors import DTypeError, ShapeError, VkmlError
from vkml.frontend import creation, functions as fn, op_functions as ops
from vkml.frontend.tensor import Tensor

matmul = fn.matmul


def matrix_transpose(x: Tensor, /) -> Tensor:
    """The last two axes swapped."""
    _at_least_2d("matrix_transpose", x)
    return x.mT


def _at_least_2d(name: str, x: Tensor) -> None:
    if x.ndim < 2:
        raise ShapeError(f"linalg.{name}: expected a matrix or a stack of them, got {x.shape}")


def _axes(name: str, axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    """``axes`` made non-negative, checked in range and distinct."""
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"linalg.{name}: axis {a} is out of range for {ndim} dimensions")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ShapeError(f"linalg.{name}: axes {tuple(axes)} repeat an axis")
    return tuple(out)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along ``axis`` (the other axes broadcast), summed in the
    pairwise tree; integers stay in their dtype (modulo 2**bits), as the standard says."""
    if x1.shape[axis] != x2.shape[axis]:
        raise ShapeError(f"linalg.vecdot: axis {axis} differs: {x1.shape} and {x2.shape}")
    product = x1 * x2
    return ops.sum(product, axis).astype(product.dtype)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: Any = 2) -> Tensor:
    """The sum of products over ``axes`` (a count of trailing/leading axes, or two lists),
    as one matmul."""
    if isinstance(axes, int):
        a_axes: Sequence[int] = range(x1.ndim - axes, x1.ndim)
        b_axes: Sequence[int] = range(axes)
    else:
        a_axes, b_axes = axes
    a_axes, b_axes = _axes("tensordot", a_axes, x1.ndim), _axes("tensordot", b_axes, x2.ndim)
    a_free = [i for i in range(x1.ndim) if i not in a_axes]
    b_free = [i for i in range(x2.ndim) if i not in b_axes]
    k = math.prod(x1.shape[i] for i in a_axes)
    a = x1.permute(*a_free, *a_axes).reshape(math.prod(x1.shape[i] for i in a_free), k)
    b = x2.permute(*b_axes, *b_free).reshape(k, math.prod(x2.shape[i] for i in b_free))
    shape = [x1.shape[i] for i in a_free] + [x2.shape[i] for i in b_free]
    return fn.matmul(a, b).reshape(*shape)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """``x1[i] * x2[j]`` of two vectors."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ShapeError(f"linalg.outer: expected two vectors, got {x1.shape} and {x2.shape}")
    return x1[:, None] * x2[None, :]


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis`` (the other axes broadcast)."""
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ShapeError(
            f"linalg.cross: axis {axis} must have 3 elements, got {x1.shape} and {x2.shape}"
        )
    a = [fn.take(x1, creation.tensor([i], device=x1.device), axis) for i in range(3)]
    b = [fn.take(x2, creation.tensor([i], device=x2.device), axis) for i in range(3)]
    parts = [a[(i + 1) % 3] * b[(i + 2) % 3] - a[(i + 2) % 3] * b[(i + 1) % 3] for i in range(3)]
    return fn.concatenate(parts, axis)


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The diagonal of each matrix of the last two axes (``offset`` above the main one,
    negative below), on a new last axis."""
    _at_least_2d("diagonal", x)
    rows, cols = x.shape[-2:]
    start_row, start_col = max(-offset, 0), max(offset, 0)
    count = max(min(rows - start_row, cols - start_col), 0)
    index = creation.tensor([start_row * cols + start_col + i * (cols + 1) for i in range(count)],
                            device=x.device)  # fmt: skip
    flat = x.reshape(*x.shape[:-2], rows * cols)
    return fn.take(flat, index, -1) if count else flat[..., :0]


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """The sum of ``diagonal(x, offset=offset)`` (the pairwise tree), in ``dtype`` if given;
    integers keep their dtype, as the standard says."""
    d = diagonal(x, offset=offset)
    out_dtype = d.dtype if dtype is None else dtype
    return ops.sum(d.astype(out_dtype), -1).astype(out_dtype)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """``x`` multiplied by itself ``n`` times (by squaring); ``n = 0`` the identity."""
    _at_least_2d("matrix_power", x)
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"linalg.matrix_power: expected square matrices, got {x.shape}")
    if not isinstance(n, int) or isinstance(n, bool):
        raise DTypeError(f"linalg.matrix_power: n must be an int, got {n!r}")
    if n < 0:
        raise VkmlError(
            f"linalg.matrix_power: n = {n} needs the inverse, which vkml.linalg does not "
            f"compute yet; compute it on the host (numpy.linalg.inv) and pass it in"
        )
    if n == 0:
        return fn.broadcast_to(creation.eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape)
    result: Tensor | None = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else fn.matmul(result, base)
        n >>= 1
        if n:
            base = fn.matmul(base, base)
    assert result is not None
    return result


def _float(name: str, x: Tensor) -> Tensor:
    if x.dtype.kind == "bool":
        raise DTypeError(f"linalg.{name}: expected numbers, got bool; use x.astype(...)")
    return x if x.dtype.is_float else x.astype("float32")


def vector_norm(
    x: Tensor, /, *, axis: Any = None, keepdims: bool = False, ord: float = 2
) -> Tensor:
    """The ``ord``-norm over ``axis`` (all axes when None): ``(sum |x|**ord)**(1/ord)``, with
    ``ord`` 2 as ``sqrt(sum x*x)``, 1 as ``sum |x|``, inf/-inf as max/min ``|x|`` and 0 as the
    count of nonzeros."""
    a = abs(_float("vector_norm", x))
    if ord == math.inf:
        return ops.amax(a, axis, keepdims)
    if ord == -math.inf:
        return ops.amin(a, axis, keepdims)
    if ord == 0:
        return ops.sum((a != 0).astype(a.dtype), axis, keepdims)
    if ord == 1:
        return ops.sum(a, axis, keepdims)
    if ord == 2:
        return ops.sqrt(ops.sum(a * a, axis, keepdims))
    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise DTypeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return ops.sum(a**ord, axis, keepdims) ** (1.0 / ord)


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord: Any = "fro") -> Tensor:
    """The norm of each matrix of the last two axes: ``"fro"`` (Frobenius), 1/-1 the
    largest/smallest column sum of ``|x|``, inf/-inf the largest/smallest row sum."""
    _at_least_2d("matrix_norm", x)
    a = abs(_float("matrix_norm", x))
    if ord == "fro":
        return ops.sqrt(ops.sum(a * a, (-2, -1), keepdims))
    sums = {1: (-2, ops.amax), -1: (-2, ops.amin), math.inf: (-1, ops.amax),
            -math.inf: (-1, ops.amin)}  # fmt: skip
    if ord in (2, -2, "nuc"):
        raise VkmlError(
            f"linalg.matrix_norm: ord={ord!r} needs the singular values, which vkml.linalg does "
            f"not compute yet; use ord='fro', 1, -1, inf or -inf"
        )
    if ord not in sums:
        raise VkmlError(
            f"linalg.matrix_norm: ord={ord!r} is not a matrix norm; use 'fro', 1, -1, inf or -inf"
        )
    axis, pick = sums[ord]
    total = ops.sum(a, axis, True)
    other = -1 if axis == -2 else -2
    out = pick(total, other, True)
    return out if keepdims else out.reshape(*x.shape[:-2])


__all__ = [
    "cross",
    "diagonal",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_transpose",
    "outer",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]
