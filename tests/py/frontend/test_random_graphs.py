"""Hypothesis-generated graphs (shapes, broadcasting, views, reductions) on cpu vs reference.

Every op drawn here is bit-exact by contract (elementwise add/sub/mul/maximum/minimum/where,
comparisons, casts, views, pairwise sums, amax), so the whole graph must agree bit for bit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from support.numerics import assert_bit_exact

import vkml

BINARY = ["add", "sub", "mul", "maximum", "minimum"]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[np.ndarray], list[tuple]]:
    """Input arrays plus a program: a list of instructions over a growing value list."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    n_inputs = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays = []
    for _ in range(n_inputs):
        # broadcastable variants of the base shape: drop leading axes or set some to 1
        keep = draw(st.integers(0, rank))
        sub = tuple(1 if draw(st.booleans()) else s for s in shape[rank - keep :])
        arrays.append(rng.normal(0, 4, sub).astype(np.float32))
    program = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["binary", "where", "view", "reduce", "cast", "scalar"]))
        program.append(
            (
                kind,
                draw(st.integers(0, 1000)),
                draw(st.integers(0, 1000)),
                draw(st.sampled_from(BINARY)),
            )
        )
    return arrays, program


def run(arrays: list[np.ndarray], program: list[tuple], device: vkml.Device) -> list[vkml.Tensor]:
    values = [vkml.tensor(a, device=device) for a in arrays]
    for kind, i, j, op in program:
        x = values[i % len(values)]
        y = values[j % len(values)]
        try:
            if kind == "binary":
                out = _binary(op, x, y)
            elif kind == "where":
                out = vkml.where(x > y, x, y)
            elif kind == "view":
                out = _view(x, j)
            elif kind == "reduce":
                axis = j % x.ndim if x.ndim else None
                out = (
                    x.sum(axis=axis)
                    if op in ("add", "sub", "mul")
                    else x.amax(axis=axis, keepdims=True)
                )
            elif kind == "cast":
                out = x.astype(vkml.float16).astype(vkml.float32)
            else:
                out = x * 0.5 + 1.25
        except vkml.ShapeError:
            continue  # an incompatible pair: both devices refuse it the same way
        values.append(out)
    return values


def _binary(op: str, x: vkml.Tensor, y: vkml.Tensor) -> vkml.Tensor:
    if op == "maximum":
        return vkml.maximum(x, y)
    if op == "minimum":
        return vkml.minimum(x, y)
    return {"add": vkml.add, "sub": vkml.subtract, "mul": vkml.multiply}[op](x, y)


def _view(x: vkml.Tensor, j: int) -> vkml.Tensor:
    choice = j % 4
    if choice == 0 or x.ndim < 2:
        return x.reshape(-1)[:: 1 + j % 2]
    if choice == 1:
        return x.transpose()
    if choice == 2:
        return x[..., ::-1]
    return x.unsqueeze(0).broadcast_to(2, *x.shape)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graph_cpu_matches_reference_bit_for_bit(case: tuple) -> None:
    arrays, program = case
    ref = run(arrays, program, vkml.reference)
    got = run(arrays, program, vkml.cpu)
    assert len(ref) == len(got)
    vkml.realize(*got)
    for k, (a, b) in enumerate(zip(got, ref)):
        assert_bit_exact(a.numpy(), b.numpy(), f"value {k} of {program}")
