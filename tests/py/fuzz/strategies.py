"""Hypothesis strategies for fuzzed vkml graphs: a ``Case`` is plain data, built on a device later.

A case is its inputs (dtype, shape, payload class and a seed for the values) and a list of
``Step`` s, each a kind (``KINDS``) and a few small integers that pick its operands among the
values made so far and its parameters (which op, which axes, which slice). Keeping the case as
integers, not tensors, is what lets hypothesis shrink a failing graph to a few steps over tiny
inputs, and lets one case be built on the reference, cpu and vulkan devices alike
(``fuzz.programs.build``). ``repeat`` replays the step list that many times over the growing
value list: graphs of thousands of nodes from a description small enough to shrink.

Inputs of one case share a base shape and are broadcastable variants of it (leading axes
dropped, axes set to 1), so binary steps broadcast; shapes are small (axes of 0 to 5) because
every graph is compiled, and compiling is what a campaign spends its time on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

DTYPES = ("float32", "float16", "bfloat16", "float64", "int32", "int64", "uint32", "bool")
FLOATS = ("float32", "float16", "bfloat16", "float64")
# float32, float64 and bfloat16 subnormals are float32/float64 subnormals, which the cpu device
# flushes (docs/contracts.md "Subnormals: the stated exception"); float16 ones are normal floats
# in the float32 arithmetic 16-bit ops use, so they are inside the bit-exact contract
FLUSHED = ("float32", "float64", "bfloat16")
PAYLOADS = ("normal", "special", "subnormal", "integral", "wide")

# Step kinds: each names a family of ops (see fuzz.programs for what each builds). Between
# them they reach every op of vkml.ops.registry.OPS (tests/py/fuzz/test_fuzz_slice.py checks).
KINDS = (
    "binary", "scalar", "compare", "where", "unary", "bounded", "cast", "bitcast", "bitwise",
    "view", "concat", "matmul", "reduce", "softmax", "creation", "cond", "while", "gather",
    "fusion_stop", "position", "conv", "pool", "update", "einsum",
)  # fmt: skip


@dataclass(frozen=True)
class Input:
    """One input array: made by ``input_array`` from these fields alone."""

    dtype: str
    shape: tuple[int, ...]
    payload: str
    seed: int


@dataclass(frozen=True)
class Step:
    """One instruction: ``kind``, operand picks ``a``/``b``/``c`` (indices modulo the number of
    values so far) and ``params``, read in order by the step (0 once they run out)."""

    kind: str
    a: int
    b: int
    c: int
    params: tuple[int, ...]


@dataclass(frozen=True)
class Case:
    """A graph: ``steps`` replayed ``repeat`` times over the inputs; values listed in
    ``observe`` (indices modulo the number of values) are realized first when the graph is
    realized in pieces."""

    inputs: tuple[Input, ...]
    steps: tuple[Step, ...]
    repeat: int = 1
    observe: tuple[int, ...] = ()


# How far ``reseeded`` moves each input's seed: any offset gives other data of the same
# shape, dtype and payload class.
RESEED = 7919


def reseeded(case: Case) -> Case:
    """The same graph on other input data: the structure, hence the compiled module, is the
    same (the replay check of ``fuzz.checker``)."""
    inputs = tuple(replace(spec, seed=spec.seed + RESEED) for spec in case.inputs)
    return replace(case, inputs=inputs)


def _specials(dtype: np.dtype) -> np.ndarray:
    big = float(ml_dtypes.finfo(dtype).max)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, big, -big])


def _subnormals(dtype: np.dtype, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    normal = float(ml_dtypes.finfo(dtype).smallest_normal)
    mags = rng.uniform(tiny, normal, shape)
    mags = np.where(rng.random(shape) < 0.3, tiny, mags)
    return np.where(rng.random(shape) < 0.5, -mags, mags)


def input_array(spec: Input) -> np.ndarray:
    """The input's values: deterministic in the spec, with the payload class asked for.

    normal: N(0, 4); special: a third of the elements NaN, +-inf, +-0, +-1, halves, the
    dtype's largest finite values; subnormal: a third subnormal (and +-0); integral: small
    whole numbers, so that compares tie and rounding sees exact halves; wide: integers drawn
    from the dtype's whole range, floats of either sign with exponents drawn from the
    dtype's whole normal range (the values a newcomer's ``2 ** 70`` or ``MIN % 3`` reach,
    which small values never did)."""
    rng = np.random.default_rng(spec.seed)
    shape = spec.shape
    if spec.dtype == "bool":
        return rng.random(shape) < 0.5
    npdt = np.dtype(ml_dtypes.bfloat16) if spec.dtype == "bfloat16" else np.dtype(spec.dtype)
    if spec.dtype in FLOATS:
        values = rng.normal(0, 4, shape)
        pick = rng.random(shape) < 0.35
        if spec.payload == "special":
            values = np.where(pick, rng.choice(_specials(npdt), shape), values)
        elif spec.payload == "subnormal":
            zeros = np.where(rng.random(shape) < 0.5, -0.0, 0.0)
            extra = np.where(rng.random(shape) < 0.8, _subnormals(npdt, rng, shape), zeros)
            values = np.where(pick, extra, values)
        elif spec.payload == "integral":
            values = rng.integers(-6, 7, shape) / np.where(pick, 2.0, 1.0)
        elif spec.payload == "wide":
            info = ml_dtypes.finfo(npdt)
            exponent = rng.uniform(
                np.log2(float(info.smallest_normal)), np.log2(float(info.max)), shape
            )
            sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
            values = np.minimum(np.exp2(exponent), float(info.max)) * sign
        return np.asarray(values).astype(npdt)
    info = np.iinfo(npdt)
    if spec.payload == "wide":
        return rng.integers(info.min, info.max, shape, dtype=npdt, endpoint=True)
    lo = 0 if info.min == 0 else -20
    values = rng.integers(lo, 21, shape)
    if spec.payload == "special":
        edges = np.array([info.min, info.min + 1, -1 if lo else 1, 0, 1, info.max - 1, info.max])
        values = np.where(rng.random(shape) < 0.35, rng.choice(edges, shape), values)
    return np.asarray(values).astype(npdt)


@st.composite
def inputs(draw: st.DrawFn, max_inputs: int = 3) -> tuple[Input, ...]:
    """Broadcast-compatible inputs: one base shape (rank 0 to 4, axes 0 to 5, empty ones
    rare), each input a variant with leading axes dropped or axes set to 1."""
    rank = draw(st.integers(0, 4))
    dim = st.integers(1, 5) | st.just(0) if draw(st.integers(0, 9)) == 0 else st.integers(1, 5)
    base = tuple(draw(st.lists(dim, min_size=rank, max_size=rank)))
    dtype_pool = draw(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=3, unique=True))
    made = []
    for _ in range(draw(st.integers(1, max_inputs))):
        keep = draw(st.integers(0, rank))
        shape = tuple(1 if draw(st.booleans()) else s for s in base[rank - keep :])
        dtype = draw(st.sampled_from(dtype_pool))
        payload = draw(st.sampled_from(PAYLOADS))
        made.append(Input(dtype, shape, payload, draw(st.integers(0, 2**16))))
    return tuple(made)


def steps(kinds: tuple[str, ...] = KINDS, max_params: int = 6) -> st.SearchStrategy[Step]:
    """One step of any of ``kinds``, with operand picks and parameters as small integers."""
    small = st.integers(0, 255)
    return st.builds(
        Step,
        kind=st.sampled_from(kinds),
        a=small,
        b=small,
        c=small,
        params=st.lists(small, max_size=max_params).map(tuple),
    )


@st.composite
def cases(
    draw: st.DrawFn, max_steps: int = 12, max_repeat: int = 1, kinds: tuple[str, ...] = KINDS
) -> Case:
    """A fuzzed graph: inputs, 1 to ``max_steps`` steps replayed up to ``max_repeat`` times
    (repeats are drawn for one case in 25: most graphs stay small and cheap to compile)."""
    ins = draw(inputs())
    body = tuple(draw(st.lists(steps(kinds), min_size=1, max_size=max_steps)))
    repeat = 1
    if max_repeat > 1 and draw(st.integers(0, 24)) == 0:
        repeat = draw(st.integers(2, max_repeat))
    observe = tuple(draw(st.lists(st.integers(0, 255), max_size=3)))
    return Case(ins, body, repeat, observe)


def batches(
    size: int, max_steps: int = 12, max_repeat: int = 1, min_size: int = 1
) -> st.SearchStrategy[list[Case]]:
    """Up to ``size`` independent cases, realized together: one compile per device per
    batch. A campaign asks for full batches (``min_size``); a test lets a failing batch
    shrink to the one case that fails."""
    return st.lists(
        cases(max_steps=max_steps, max_repeat=max_repeat), min_size=min_size, max_size=size
    )
