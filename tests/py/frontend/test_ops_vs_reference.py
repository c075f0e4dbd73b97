"""Every op of the op table, for every dtype it takes, on cpu against the reference device
(the programs and the comparison: ``support/op_programs.py``). Each dtype's programs realize
together: one compile per dtype.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.op_programs import ALL, check_against_reference, programs

import vkml
from vkml.ops.registry import OPS


@pytest.mark.parametrize("dtype", ALL)
def test_every_op_matches_reference(dtype: str) -> None:
    check_against_reference(vkml.cpu, dtype, programs(dtype))


def test_every_table_op_is_exercised() -> None:
    covered = {op for d in ALL for op, _ in programs(d).values()}
    assert set(OPS) <= covered, sorted(set(OPS) - covered)


def test_cpu_refuses_what_its_support_table_excludes() -> None:
    refused = [(op, d) for op in OPS for d in vkml.dtypes.ALL if not vkml.cpu.supports(op, d)]
    assert ("remainder", vkml.float64) in refused and ("tanh", vkml.float64) not in refused
    for op, dtype in refused:
        x = vkml.tensor(np.ones(3), dtype=dtype)
        operands = (x, x) if OPS[op].rule.name == "binary" else (x,)
        with pytest.raises(vkml.UnsupportedOperatorError, match=f"'{op}'.*{dtype.name}.*cpu"):
            getattr(vkml, op)(*operands).numpy()
