"""On cpu, ``x * a + b`` rounds twice, as on the reference device.

The op table declares ``mul`` and ``add`` bit-exact across devices, but IREE's llvm-cpu marks
every float multiply and add ``contract``, so LLVM fused a multiply feeding an add into one FMA
(one rounding). vkml now passes every float multiply through ``bits ^ fence`` with a fence
argument that is 0 at run time (``FunctionBuilder._unfusable``), which the compiler cannot see
through. Compiling for a CPU without FMA was not an option: it took matmul from ~100 to
3 GFLOP/s.
"""

from __future__ import annotations

import numpy as np

import vkml


def test_multiply_then_add_rounds_twice_on_cpu_as_on_reference() -> None:
    unit = np.random.default_rng(0).random(4096).astype(np.float32)
    span, low = 0.17677669, -0.08838835
    want = (vkml.tensor(unit, device=vkml.reference) * span + low).numpy()
    got = (vkml.tensor(unit) * span + low).numpy()
    assert np.array_equal(want, unit * np.float32(span) + np.float32(low))
    differ = int(np.sum(got != want))
    assert differ == 0, f"{differ} of 4096 elements differ: cpu fused the multiply-add"
