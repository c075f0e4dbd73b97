"""Control flow: ops that own regions (``vkml.graph.node.Region``).

``cond(pred, *operands)`` owns two regions, the true arm and the false arm, each taking the
operands as its parameters and returning one value. The compiled devices emit both arms
inline and select between their results, one kernel with no host round trip (IREE runs
``stablehlo.if`` on the host: a sync per decision, measured in issue 7); the reference device
evaluates the chosen arm only. Arms are pure, so the two give the same bits. The selection is
bit-exact; each op inside an arm keeps its own contract.

``while(*carried)`` owns a condition region and a body region over the carried values and
has one result per carried value, each read by a ``result`` node (the node's own dtype and
shape are its first result's; ``attrs["results"]`` lists them all). It is lowered to a
``stablehlo.while``, which IREE runs on the host, one turn at a time: what the graph builder
puts in the body (several predicated turns at once) decides how many host turns it costs.
The reference device runs the loop in Python. No gradient rules yet: the graph builder
(issue 10) brings reverse mode through regions.

``fusion_stop(x)`` is ``x``, with a boundary IREE fuses nothing across (``vkml.dialect.fusion_stops``):
what the graph builder puts at the end of each branch of a fork, so that the branches are
dispatches of their own that IREE can run side by side in one submission. Bit-exact, and its
gradient is the gradient it receives.
"""

from __future__ import annotations

from vkml.graph.node import Node
from vkml.ops import rules
from vkml.ops.emitters import common as emit
from vkml.ops.references import common as ref
from vkml.ops.spec import Algebra, Grads, Handle, OpDef, table


def grad_fusion_stop(node: Node, g: Handle, f: Algebra) -> Grads:
    return (g,)


CONTROL: dict[str, OpDef] = table(
    OpDef("cond", rules.control, emit.emit_cond, ref.cond, True),
    OpDef("while", rules.control, emit.emit_while, ref.while_loop, True),
    OpDef("result", rules.control, emit.emit_result, ref.result, True),
    OpDef(
        "fusion_stop",
        rules.fusion_stop,
        emit.emit_fusion_stop,
        ref.identity,
        True,
        gradient=grad_fusion_stop,
    ),
)
