"""``vkml/graph/walk.py`` on nodes that own regions: the structural key sees inside a region,
the outer walk does not, and a region's parameters are checked; and which nodes compute the
same value."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.dtypes import float32, int32
from vkml.graph.node import Node, Region, param
from vkml.graph.walk import (
    region_key,
    region_nodes,
    region_schedule,
    run_region,
    same_values,
    structure,
    toposort,
)

CPU = vkml.cpu


def _leaf(shape: tuple[int, ...] = (3,)) -> Node:
    return Node("full", float32, shape, (), (("value", 1.0),), CPU)


def _region(op: str) -> Region:
    """``op(p0, p0)`` over one float32 parameter."""
    p = param(0, float32, (3,), CPU)
    return Region((p,), (Node(op, float32, (3,), (p, p), (), CPU),))


def _owner(x: Node, *regions: Region) -> Node:
    return Node("cond", float32, (3,), (x,), (), CPU, regions=regions)


def test_outer_walk_sees_the_owner_not_the_region_nodes() -> None:
    x = _leaf()
    owner = _owner(x, _region("add"))
    assert toposort([owner]) == [x, owner]


def test_region_schedule_puts_parameters_first() -> None:
    region = _region("mul")
    order = region_schedule(region)
    assert order[0] is region.params[0] and order[-1] is region.results[0]


def test_structural_key_tells_apart_regions_that_differ() -> None:
    x = _leaf()
    same_a, same_b = _owner(x, _region("add")), _owner(x, _region("add"))
    other = _owner(x, _region("mul"))
    key = lambda n: structure(toposort([n]), [n])[0]
    assert key(same_a) == key(same_b)
    assert key(same_a) != key(other)
    assert region_key(_region("add")) != region_key(_region("mul"))


def test_region_parameters_must_be_numbered_param_nodes() -> None:
    p1 = param(1, float32, (3,), CPU)
    with pytest.raises(ValueError, match="region parameter 0"):
        Region((p1,), (p1,))
    with pytest.raises(ValueError, match="must be a 'param' node"):
        Region((_leaf(),), ())


def test_parameter_dtype_and_shape_enter_the_region_key() -> None:
    p32 = param(0, float32, (3,), CPU)
    pi = param(0, int32, (3,), CPU)
    assert region_key(Region((p32,), (p32,))) != region_key(Region((pi,), (pi,)))


def test_regions_are_immutable_like_their_owner() -> None:
    owner = _owner(_leaf(), _region("add"))
    with pytest.raises(AttributeError, match="immutable"):
        owner.regions = ()  # type: ignore[misc]


def test_run_region_binds_parameters_and_evaluates_in_order() -> None:
    region = _region("mul")
    seen: list[str] = []

    def evaluate(node: Node, values: list[float]) -> float:
        seen.append(node.op)
        return values[0] * values[1]

    assert run_region(region, [3.0], evaluate) == [9.0]
    assert seen == ["mul"]  # the parameter is bound, not evaluated
    with pytest.raises(ValueError, match="a region of 1 parameters got 2 values"):
        run_region(region, [1.0, 2.0], evaluate)


def test_region_nodes_lists_nested_regions_without_parameters() -> None:
    inner = _owner(_leaf(), _region("sub"))
    p = param(0, float32, (3,), CPU)
    middle = Node("cond", float32, (3,), (p,), (), CPU, regions=(_region("sub"),))
    outer = _owner(_leaf(), Region((p,), (Node("add", float32, (3,), (middle, p), (), CPU),)))
    assert sorted(n.op for n in region_nodes(outer)) == ["add", "cond", "sub"]
    assert [n.op for n in region_nodes(inner)] == ["sub"]


def test_same_values_numbers_equal_computations_alike() -> None:
    x = vkml.tensor(np.ones(3, np.float32), device="reference")
    y = vkml.tensor(np.ones(3, np.float32), device="reference")  # same data, another leaf
    a, b, c = x + x, x + x, y + y
    d, e = a * 2.0, b * 2.0
    f = a * -0.0
    g = a * 0.0  # 0.0 == -0.0 in Python: still another value
    roots = [t.node for t in (a, b, c, d, e, f, g)]
    schedule = toposort(roots)
    number = same_values(schedule)
    n = [number[r] for r in roots]
    assert n[0] == n[1] and n[3] == n[4]
    assert len({n[0], n[2], n[3], n[5], n[6]}) == 5
