"""Behaviour of ``vkml/graph/node.py`` and its walks: immutable nodes, the two view edges,
toposort, and 100,000-node chains that build, sort, realize and free without recursion."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import vkml
from vkml.graph.node import Node
from vkml.graph.walk import toposort

CHAIN = 100_000
# A chain the cpu device compiles in under 30 s even on the loaded 2-core dev machine (measured
# with lowering cut into 500-node segments: 10k 6.7 s, 20k 17-37 s, 100k 178 s; 1.4 s cached).
CPU_CHAIN = 10_000


def data(values: object, device: str = "reference") -> vkml.Tensor:
    return vkml.tensor(np.asarray(values, dtype=np.float32), device=device)


def assert_sources_first(order: list[Node]) -> None:
    """Every pending node's sources come before it, and no node appears twice."""
    position = {node: i for i, node in enumerate(order)}
    assert len(position) == len(order), "a node appears twice in the order"
    for i, node in enumerate(order):
        if not node.computed:
            for s in node.src:
                assert position[s] < i, f"{s} comes after its user {node}"


# -- immutability ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["op", "dtype", "shape", "src", "attrs", "device", "view_src", "storage",
             "computed", "_storage", "_computed", "anything_new"],
)  # fmt: skip
def test_node_attribute_assignment_raises(name: str) -> None:
    node = (data([1.0, 2.0]) + 1.0)._node
    before = (node.op, node.dtype, node.shape, node.src, node.attrs, node.storage)
    with pytest.raises(AttributeError):
        setattr(node, name, None)
    assert (node.op, node.dtype, node.shape, node.src, node.attrs, node.storage) == before
    assert not node.computed


@pytest.mark.parametrize("name", ["op", "shape", "src", "storage", "_storage", "view_src"])
def test_node_attribute_deletion_raises(name: str) -> None:
    node = (data([1.0, 2.0]) * 2.0)._node
    with pytest.raises(AttributeError):
        delattr(node, name)
    assert node.op == "mul" and node.shape == (2,) and len(node.src) == 2


def test_node_storage_is_set_only_by_realize() -> None:
    t = data([1.0, 2.0]) * 3.0
    node = t._node
    assert node.storage is None and not node.computed
    t.realize()
    assert node.storage is not None and node.computed
    assert t.numpy().tolist() == [3.0, 6.0]


# -- the two view edges ---------------------------------------------------------------------
def test_view_src_collapses_to_root_while_src0_is_immediate_base() -> None:
    a = vkml.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), device="reference")
    s = a[:, 1:]
    p = s.permute(2, 0, 1)
    r = p.reshape(4, -1)
    assert [s._node.op, p._node.op, r._node.op] == ["slice", "permute", "reshape"]
    for view in (s, p, r):
        assert view._node.view_src is a._node
    assert r._node.src[0] is p._node
    assert p._node.src[0] is s._node
    assert s._node.src[0] is a._node
    expected = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, 1:].transpose(2, 0, 1)
    np.testing.assert_array_equal(r.numpy(), expected.reshape(4, -1))


def test_view_of_computed_op_has_that_op_as_view_src() -> None:
    b = data([[1.0, 2.0], [3.0, 4.0]]) + 1.0
    t = b.T
    v = t.reshape(-1)
    assert v._node.view_src is b._node and t._node.view_src is b._node
    assert v._node.src[0] is t._node
    assert t._node.src[0] is b._node
    assert v.tolist() == [2.0, 4.0, 3.0, 5.0]


def test_non_view_nodes_have_no_view_src() -> None:
    a = data([1.0, 2.0, 3.0])
    v = a.reshape(3, 1)
    for node in (a._node, (a + 1.0)._node, (v * 2.0)._node, v.sum()._node):
        assert node.view_src is None
        assert not node.is_view
    assert v._node.is_view


def test_view_src_collapses_through_a_long_chain_of_views() -> None:
    a = data(np.arange(4))
    x = a
    for i in range(CHAIN):
        x = x.reshape(2, 2) if i % 2 == 0 else x.reshape(4)
    assert x._node.view_src is a._node
    assert x._node.src[0].src[0].src[0].op == "reshape"
    np.testing.assert_array_equal(x.numpy(), np.arange(4, dtype=np.float32))


# -- toposort -------------------------------------------------------------------------------
def test_toposort_puts_sources_before_users_once_each() -> None:
    a = data([1.0, 2.0])
    b = a * 2.0
    c = (b + a).exp() - b
    order = toposort([c._node])
    assert_sources_first(order)
    assert order[-1] is c._node
    assert {a._node, b._node, c._node} <= set(order)


def test_toposort_visits_a_diamond_base_once() -> None:
    a = data([1.0, 2.0])
    left, right = a + 1.0, a * 3.0
    top = left - right
    order = toposort([top._node])
    assert order.count(a._node) == 1
    assert order.index(a._node) < order.index(left._node) < order.index(top._node)
    assert order.index(right._node) < order.index(top._node)
    assert_sources_first(order)


def test_toposort_of_several_roots_shares_their_common_nodes() -> None:
    a = data([1.0, 2.0])
    b = a + 1.0
    c, d = b * 2.0, b - 3.0
    order = toposort([c._node, d._node, c._node, b._node])
    assert_sources_first(order)
    assert order.count(b._node) == 1 and order.count(c._node) == 1
    assert order.index(c._node) < order.index(d._node)


def test_toposort_is_the_same_for_the_same_structure() -> None:
    def build() -> list[str]:
        a, b = data([1.0]), data([2.0])
        return [n.op for n in toposort([((a + b) * a - b.exp())._node])]

    assert build() == build()


def test_toposort_treats_computed_nodes_as_leaves() -> None:
    a0 = data([1.0, 2.0])
    a = a0 * 2.0
    b = a + 1.0
    b.realize()
    c = b * 3.0
    order = toposort([c._node])
    assert b._node in order
    assert a._node not in order and a0._node not in order
    assert order[-1] is c._node
    np.testing.assert_array_equal(c.numpy(), np.array([9.0, 15.0], np.float32))


def test_toposort_of_a_computed_root_is_just_the_root() -> None:
    b = (data([1.0]) + 1.0).realize()
    assert toposort([b._node]) == [b._node]


# -- 100,000-node chains --------------------------------------------------------------------
def test_100k_chain_builds_toposorts_and_realizes_on_reference() -> None:
    x = data(np.arange(4))
    for _ in range(CHAIN):
        x = x + 1.0
    order = toposort([x._node])
    assert len(order) == 2 * CHAIN + 1  # the data, then each add and its own number 1.0
    assert_sources_first(order)
    del order
    np.testing.assert_array_equal(x.numpy(), np.arange(4, dtype=np.float32) + CHAIN)


def test_100k_chain_of_alternating_ops_is_freed_without_recursion() -> None:
    x = data(np.arange(4))
    first = weakref.ref(x._node)
    middle: weakref.ref[Node] | None = None
    for i in range(CHAIN):
        x = x * 1.0 if i % 2 == 0 else x + 0.5
        if i == CHAIN // 2:
            middle = weakref.ref(x._node)
    assert first() is not None and middle is not None and middle() is not None
    del x
    gc.collect()
    assert first() is None
    assert middle() is None


def test_realized_100k_chain_is_freed() -> None:
    x = data([0.0])
    first = weakref.ref(x._node)
    for _ in range(CHAIN):
        x = x - 2.0
    assert x.item() == -2.0 * CHAIN
    del x
    gc.collect()
    assert first() is None


def test_long_chain_realizes_on_cpu_in_parts_of_a_few_modules() -> None:
    """20,000 nodes (each op and its number): ten parts of 2,000 (vkml/devices/realize.py
    PART_NODES), which repeat one structure: a module or two, not ten."""
    x = data(np.arange(4), device="cpu")
    first = weakref.ref(x._node)
    for i in range(CPU_CHAIN):
        x = (x + 3.0) if i % 2 == 0 else (x - 1.0)
    before = vkml.stats()
    x.realize()
    after = vkml.stats()
    assert after["invocations"] - before["invocations"] == 10
    modules = sum(after[k] - before[k] for k in ("compiles", "cache_hits_disk"))
    assert modules <= 2
    np.testing.assert_array_equal(x.numpy(), np.arange(4, dtype=np.float32) + CPU_CHAIN)
    del x
    gc.collect()
    assert first() is None
