"""Where vkml stops IREE from fusing across a value: fusion stops, and the host waits they avoid.

IREE's dispatch formation fuses elementwise producers into their consumers; vkml has to stop
it in a few places (a boolean copied into every reader, a widened matmul operand, scalar
dispatches past 32 bindings, compile time of huge graphs). Two ops stop it:

- ``stablehlo.optimization_barrier``: IREE 3.13 turns it into the end of one queue
  submission and the start of the next, with a host wait between (~1 ms each on an H200
  through Vulkan, issue 12).
- ``iree_tensor_ext.compute_barrier.end`` (``FUSION_STOP``): IREE's own marker of a value
  leaving a computation. Dispatch formation fuses and clones nothing across it, and IREE
  removes it once the dispatches are formed, so both sides stay in one submission: it
  costs nothing at run time. vkml uses it wherever only fusion must stop.

A barrier remains where IREE needs a value materialized in a buffer of its own (the initial
values of a device loop, ``FunctionBuilder.barrier``).
"""

from __future__ import annotations

from vkml.dtypes import DType, int32, uint32

FUSION_STOP = "iree_tensor_ext.compute_barrier.end"

# IREE 3.13 cannot legalize a fusion stop of an unsigned type ("failed to legalize operation
# 'iree_tensor_ext.compute_barrier.end'"): such a value crosses as its signless bits.
SIGNLESS: dict[DType, DType] = {uint32: int32}

# Ops across which IREE's dispatch formation fuses nothing.
FUSION_STOPS = frozenset({
    FUSION_STOP, "iree_tensor_ext.compute_barrier.start", "stablehlo.optimization_barrier",
})  # fmt: skip
