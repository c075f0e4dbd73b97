"""The Array API's linear algebra functions in the main namespace (no ``linalg`` extension)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vkml.array_api._manipulation import ordered_axes
from vkml.errors import ShapeError
from vkml.frontend import functions, op_functions
from vkml.frontend.tensor import Tensor

matmul = functions.matmul


def matrix_transpose(x: Tensor, /) -> Tensor:
    return x.mT


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along ``axis`` (the other axes broadcast)."""
    if x1.shape[axis] != x2.shape[axis]:
        raise ShapeError(f"vecdot: axis {axis} differs: {x1.shape} and {x2.shape}")
    product = x1 * x2
    # vkml's sum widens integers to 64 bits; the standard keeps the operands' dtype (modulo
    # 2**bits, as accumulating in it would)
    return op_functions.sum(product, axis).astype(product.dtype)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: Any = 2) -> Tensor:
    """The sum of products over ``axes`` (a count of trailing/leading axes, or two lists)."""
    if isinstance(axes, int):
        a_axes: Sequence[int] = range(x1.ndim - axes, x1.ndim)
        b_axes: Sequence[int] = range(axes)
    else:
        a_axes, b_axes = axes
    a_axes = ordered_axes("tensordot", tuple(a_axes), x1.shape)
    b_axes = ordered_axes("tensordot", tuple(b_axes), x2.shape)
    a_free = [i for i in range(x1.ndim) if i not in a_axes]
    b_free = [i for i in range(x2.ndim) if i not in b_axes]
    k = math.prod(x1.shape[i] for i in a_axes)
    a = x1.permute(*a_free, *a_axes).reshape(math.prod(x1.shape[i] for i in a_free), k)
    b = x2.permute(*b_axes, *b_free).reshape(k, math.prod(x2.shape[i] for i in b_free))
    shape = [x1.shape[i] for i in a_free] + [x2.shape[i] for i in b_free]
    return functions.matmul(a, b).reshape(*shape)
