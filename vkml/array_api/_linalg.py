"""The Array API's linear algebra functions in the main namespace: ``vkml.linalg``'s (the
``linalg`` extension itself is not offered until it is whole: docs/array-api.md)."""

from __future__ import annotations

from vkml.frontend.linalg import matmul, matrix_transpose, tensordot, vecdot

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]
