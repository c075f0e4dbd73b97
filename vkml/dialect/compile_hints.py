"""Hints an emitter leaves in a function's text for the compile step: comment lines, which
MLIR's parser skips and the compile cache's key (a hash of the text) includes.

``WIDE_FUSION``: the function holds a long elementwise chain whose values are read many
times (vkml's float64 argument reduction, ``vkml.ops.float64.trigonometric``), which IREE
3.13 cuts into about ten dispatches that write and read each intermediate: the cpu compile
asks for ``--iree-dispatch-creation-enable-aggressive-fusion`` for such a module (one
dispatch; float64 sin of 10^6 values 123 ms -> 16 ms), and compiles it again without the
flag if IREE fails with it (it failed on a float64 StandardScaler module: "operand #1 does not
dominate this use", which is why the flag is not passed for every module).
"""

from __future__ import annotations

WIDE_FUSION = "    // vkml: fuse wide"
