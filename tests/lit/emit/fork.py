# RUN: %python %s fork | iree-compile - --iree-input-type=stablehlo --iree-hal-target-backends=llvm-cpu --compile-to=stream | filecheck %s --check-prefix=FORK
# RUN: %python %s plain | iree-compile - --iree-input-type=stablehlo --iree-hal-target-backends=llvm-cpu --compile-to=stream | filecheck %s --check-prefix=PLAIN
# A graph builder fork (vkml.Graph.parallel) in IREE's stream IR: its two branches, two
# matmuls, run in one `stream.cmd.concurrent` region of the one submission, and the join
# after them. Written without the fork, IREE fuses the join into the second matmul's
# dispatch, which then reads the first's result: the two run one after the other.
import sys

import numpy as np

import vkml
from vkml.compiler.lower import emitted_mlir


@vkml.Graph.builder
def forked(x, w1, w2):
    with vkml.Graph.parallel() as fork:
        with fork.branch():
            a = (x @ w1).relu()
        with fork.branch():
            b = (x @ w2).tanh()
    return a + b


@vkml.Graph.builder
def plain(x, w1, w2):
    a = (x @ w1).relu()
    b = (x @ w2).tanh()
    return a + b


args = [vkml.tensor(np.ones((64, 64), np.float32)) for _ in range(3)]
builder = forked if sys.argv[1] == "fork" else plain
print(emitted_mlir(builder(*args).captured.roots, passes=True))

# FORK-COUNT-1: stream.cmd.execute
# FORK: stream.cmd.concurrent {
# FORK-NEXT: stream.cmd.dispatch @{{.*}}matmul
# FORK: stream.cmd.dispatch @{{.*}}matmul
# FORK: }
# FORK: stream.cmd.dispatch @{{.*}}elementwise
# FORK-NOT: stream.cmd.execute

# PLAIN-NOT: stream.cmd.concurrent
# PLAIN: stream.cmd.dispatch @{{.*}}matmul
# PLAIN: stream.cmd.dispatch @{{.*}}matmul
