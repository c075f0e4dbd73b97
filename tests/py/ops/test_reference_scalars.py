"""The reference implementations on 0-d inputs: each elementwise op's result for a 0-d array
is an array with the bits of the same op on a one-element array (a NumPy ufunc made with
``np.frompyfunc`` returns a Python float for a 0-d input; the reference's gelu crashed on
one, found by the fuzz campaign)."""

from __future__ import annotations

import numpy as np
import pytest

from vkml.dtypes import DType, float16, float32, float64
from vkml.ops.registry import OPS

UNARY = sorted(name for name, op in OPS.items() if op.rule.name == "unary" and op.inputs != "bool")


@pytest.mark.parametrize("dtype", [float16, float32, float64], ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_references_take_0d_inputs(name: str, dtype: DType) -> None:
    op = OPS[name]
    x = np.array(0.75, dtype.numpy)
    scalar = op.reference([x], dtype, (), {})
    vector = op.reference([x.reshape(1)], dtype, (1,), {})
    assert isinstance(scalar, np.ndarray) and scalar.shape == (), type(scalar)
    assert scalar.dtype == vector.dtype
    assert scalar.tobytes() == vector.tobytes()
