"""vkml-vulkan-nan: a Vulkan module's NaN decisions made by integer tests, its values unchanged.

The GPU that needed the pass (an NVIDIA H200 gave relu(NaN) = 0, exp(NaN) = 0, tanh(NaN) = 1)
is not here, and lavapipe and cpu get NaN right without the pass. So these tests pin (1) the
property of the rewritten IR that makes it immune, read from the printed module: no float
compare decides a NaN outcome on its own, and the result of every op that may lose a NaN is
selected again by integer tests of its operands' bits; and (2) that the rewritten modules
compute the reference's values on cpu (the Vulkan pipeline forced) and on vulkan:0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vkml
from vkml.compiler import compile as compile_module
from vkml.compiler.cache import default_cache
from vkml.passes import pairwise_extremes, vulkan_nan
from vkml.passes.registry import PIPELINE, VULKAN_PASSES, pipeline_for
from vkml.passes.run import run_passes

# a sweep whose every case another test in make test covers on another device or dtype
EXHAUSTIVE = pytest.mark.exhaustive

from support import op_programs as ops_test
from support.devices import needs_vulkan

VULKAN = pipeline_for("vulkan-spirv")
NAN, INF = math.nan, math.inf

# -- (1) the property, read from the printed module ---------------------------------------------
# the integer constants a NaN test compares with: +inf's bits and the sign-clearing masks
NEW_TRANSCENDENTAL = (
    "expm1",
    "log1p",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
)
_INFINITIES = {"31744", "32640", "2139095040", "9218868437227405312"}
_MASKS = {"32767", "2147483647", "9223372036854775807"}
# ops whose lowering may lose a NaN operand (the H200 lost it in exp, tanh and logistic)
_PRODUCERS = {
    "stablehlo.exponential", "stablehlo.log", "stablehlo.sqrt", "stablehlo.rsqrt",
    "stablehlo.tanh", "stablehlo.logistic", "stablehlo.sine", "stablehlo.cosine", "chlo.erf",
    "chlo.erfc", "stablehlo.power", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.clamp",
    "stablehlo.floor", "stablehlo.ceil", "stablehlo.round_nearest_even",
}  # fmt: skip
_DEF = re.compile(r"^\s*(%[\w#]+)(?::\d+)? = \"?([\w.]+)\"?(.*)$")


@dataclass(frozen=True)
class _Op:
    result: str
    name: str
    operands: tuple[str, ...]
    text: str


def _parse(text: str) -> tuple[dict[str, _Op], dict[str, list[_Op]]]:
    """(the op defining each SSA name, the ops using each name) of a printed module."""
    defs: dict[str, _Op] = {}
    users: dict[str, list[_Op]] = {}
    for line in text.splitlines():
        found = _DEF.match(line)
        if found:
            name, opname, rest = found.groups()
            op = _Op(name, opname, tuple(re.findall(r"%[\w#]+", rest.split(" : ")[0])), line)
            defs[name] = op
        elif line.strip().startswith("return"):
            op = _Op("", "return", tuple(re.findall(r"%[\w#]+", line.split(" : ")[0])), line)
        else:
            continue
        for operand in op.operands:
            users.setdefault(operand, []).append(op)
    return defs, users


def _nan_test_subject(op: _Op, defs: dict[str, _Op], direction: str) -> str | None:
    """x when ``op`` is ``compare direction, bits(x) & MASK, INF`` on integers, else None."""
    if op.name != "stablehlo.compare" or f"{direction}," not in op.text or "FLOAT" in op.text:
        return None
    masked, bound = (defs.get(v) for v in op.operands)
    if masked is None or bound is None or masked.name != "stablehlo.and":
        return None
    if not any(f"dense<{c}>" in bound.text for c in _INFINITIES):
        return None
    parts = [defs.get(v) for v in masked.operands]
    bits = [p for p in parts if p is not None and p.name == "stablehlo.bitcast_convert"]
    mask = [p for p in parts if p is not None and any(f"dense<{m}>" in p.text for m in _MASKS)]
    return bits[0].operands[0] if bits and mask else None


def _leaves(value: str, defs: dict[str, _Op], logic: set[str]) -> list[_Op | None]:
    """The ops under ``value`` through the logic ops named in ``logic`` (None: an argument)."""
    found: list[_Op | None] = []
    pending = [value]
    while pending:
        op = defs.get(pending.pop())
        if op is not None and op.name in logic:
            pending.extend(op.operands)
        else:
            found.append(op)
    return found


def _is_constant(value: str, defs: dict[str, _Op]) -> bool:
    op = defs.get(value)
    return op is not None and op.name == "stablehlo.constant"


def _compare_problems(
    name: str, op: _Op, defs: dict[str, _Op], users: dict[str, list[_Op]]
) -> list[str]:
    x, y = op.operands
    if x == y:
        return [f"{name} is a float self-compare (a NaN test the driver may fold): {op.text}"]
    nan_true = " NE," in op.text
    join, direction = ("stablehlo.or", "GT") if nan_true else ("stablehlo.and", "LE")
    wanted = {v for v in (x, y) if not _is_constant(v, defs)}
    problems = []
    for user in users.get(name, []):
        if user.name != join:
            problems.append(f"{name} ({op.text.strip()}) reaches {user.name} without a NaN guard")
            continue
        guard = next(v for v in user.operands if v != name)
        tested = {_nan_test_subject(leaf, defs, direction) if leaf else None
                  for leaf in _leaves(guard, defs, {join})}  # fmt: skip
        if None in tested or not wanted <= tested:
            problems.append(f"{name}'s guard {guard} tests {tested}, not every operand of {wanted}")
    return problems


def _producer_problems(
    name: str, op: _Op, defs: dict[str, _Op], users: dict[str, list[_Op]]
) -> list[str]:
    """The result must pass through selects whose integer NaN tests cover each operand."""
    wanted = {v for v in op.operands if not _is_constant(v, defs)}
    covered: set[str] = set()
    value = name
    while len(users.get(value, [])) == 1 and users[value][0].name == "stablehlo.select":
        select = users[value][0]
        pred, on_true, on_false = select.operands
        if on_false != value:
            break
        leaves = _leaves(pred, defs, {"stablehlo.and", "stablehlo.or", "stablehlo.not"})
        if any(leaf is not None and "FLOAT" in leaf.text for leaf in leaves):
            return [f"{name} ({op.name}) is re-selected by a float compare"]
        for leaf in leaves:
            subject = _nan_test_subject(leaf, defs, "GT") if leaf else None
            source = defs.get(on_true)
            if subject is not None and (
                on_true == subject or (source and subject in source.operands)
            ):
                covered.add(subject)
        value = select.result
    if not wanted <= covered:
        return [
            f"{name} ({op.name}) keeps the driver's result for a NaN in {sorted(wanted - covered)}"
        ]
    return []


def nan_problems(text: str) -> list[str]:
    """Every place in ``text`` where a float decides a NaN outcome without an integer test."""
    defs, users = _parse(text)
    problems = []
    for name, op in defs.items():
        is_float = re.search(r"x(f16|bf16|f32|f64)>|<(f16|bf16|f32|f64)>", op.text.split(" : ")[-1])
        if op.name == "stablehlo.compare" and "FLOAT" in op.text:
            problems += _compare_problems(name, op, defs, users)
        elif op.name in _PRODUCERS and is_float:
            problems += _producer_problems(name, op, defs, users)
    return problems


Program = Callable[[dict[str, vkml.Tensor]], vkml.Tensor]
# fmt: off
AFFECTED: dict[str, Program] = {
    "relu": lambda t: t["x"].relu(),
    "maximum": lambda t: vkml.maximum(t["x"], t["y"]),
    "minimum": lambda t: vkml.minimum(t["x"], t["y"]),
    "clip": lambda t: vkml.clip(t["x"], -1.0, 1.0),
    "amax": lambda t: t["x"].amax(axis=1),
    "amin": lambda t: t["x"].amin(),
    "argmax": lambda t: t["x"].argmax(axis=1),
    "argmin": lambda t: t["x"].argmin(),
    "exp": lambda t: vkml.exp(t["x"]),
    "log": lambda t: vkml.log(t["x"]),
    "sqrt": lambda t: vkml.sqrt(t["x"]),
    "rsqrt": lambda t: vkml.rsqrt(t["x"]),
    "tanh": lambda t: vkml.tanh(t["x"]),
    "sigmoid": lambda t: vkml.sigmoid(t["x"]),
    "sin": lambda t: vkml.sin(t["x"]),
    "cos": lambda t: vkml.cos(t["x"]),
    "erf": lambda t: vkml.erf(t["x"]),
    "gelu": lambda t: vkml.gelu(t["x"]),
    "pow": lambda t: t["x"] ** t["y"],
    "floor": lambda t: vkml.floor(t["x"]),
    "ceil": lambda t: vkml.ceil(t["x"]),
    "trunc": lambda t: vkml.trunc(t["x"]),
    "round": lambda t: vkml.round(t["x"]),
    "sign": lambda t: vkml.sign(t["x"]),
    "lt": lambda t: t["x"] < t["y"],
    "ge": lambda t: t["x"] >= t["y"],
    "eq": lambda t: t["x"] == t["y"],
    "ne": lambda t: t["x"] != t["y"],
    "where_isnan": lambda t: vkml.where(t["x"] != t["x"], 0.0, t["x"]),
    "astype_bool": lambda t: t["x"].astype(vkml.bool_),
    "softmax": lambda t: vkml.softmax(t["x"]),
    "log_softmax": lambda t: vkml.log_softmax(t["x"]),
}
# fmt: on


def _emitted(name: str, dtype: str) -> str:
    t = {k: vkml.tensor(np.ones((3, 4), np.float32), dtype=dtype) for k in ("x", "y")}
    return vkml.emit_mlir(AFFECTED[name](t))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", AFFECTED)
def test_no_float_compare_decides_a_nan_outcome_after_the_pass(name: str, dtype: str) -> None:
    text = run_passes(_emitted(name, dtype), VULKAN)
    assert nan_problems(text) == [], text


@pytest.mark.parametrize("name", AFFECTED)
def test_the_property_check_flags_each_op_without_the_pass(name: str) -> None:
    """The check above can fail: each op, compiled for cpu (no vkml-vulkan-nan), is flagged."""
    assert nan_problems(run_passes(_emitted(name, "float32"), PIPELINE)), name


def test_vulkan_compiles_run_the_pass_before_the_verifier_and_cpu_compiles_do_not() -> None:
    assert vulkan_nan.ARGUMENT in VULKAN_PASSES
    verifier = VULKAN.index("vkml-verify-nan-semantics")
    assert VULKAN.index(vulkan_nan.ARGUMENT) < verifier == len(VULKAN) - 1
    assert vulkan_nan.ARGUMENT not in pipeline_for("llvm-cpu")


def test_nan_self_compares_become_integer_tests() -> None:
    x = vkml.tensor(np.ones(4, np.float32))
    text = run_passes(vkml.emit_mlir(vkml.not_equal(x, x), vkml.equal(x, x)), VULKAN)
    assert "FLOAT" not in text
    assert len(re.findall(r"compare +GT, .*SIGNED : \(tensor<4xi32>", text)) == 1  # x != x
    assert len(re.findall(r"compare +LE, .*SIGNED : \(tensor<4xi32>", text)) == 1  # x == x


def test_a_users_where_stays_a_select_the_verifier_accepts() -> None:
    """The guard around ``x > y`` is read as ``x > y`` alone by the verifier, so a user's
    ``where(x > y, x, y)`` still compiles (it drops a NaN x, as torch.where does)."""
    x, y = vkml.tensor([NAN, 1.0]), vkml.tensor([0.0, NAN])
    text = run_passes(vkml.emit_mlir(vkml.where(x > y, x, y)), VULKAN)
    assert "stablehlo.select" in text and nan_problems(text) == []


def test_the_verifier_still_catches_a_nan_swallowing_maximum_after_the_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken_select_max(b: Any, x: Any, y: Any) -> Any:
        return b.select(b.binary("or", b.compare("GE", x, y), b.compare("NE", y, y)), x, y)

    monkeypatch.setattr(pairwise_extremes, "select_max", broken_select_max)
    text = vkml.emit_mlir(vkml.tensor([1.0, NAN, 3.0]).amax())
    with pytest.raises(vkml.CompileError, match="is a maximum that swallows NaN"):
        run_passes(text, VULKAN)


# -- (2) the values: cpu with the Vulkan pipeline, and vulkan:0 ---------------------------------
@pytest.fixture
def vulkan_pipeline_on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """cpu compiles run the Vulkan pipeline, into an empty cache (the cache key does not hold
    the pass list, so nothing compiled before may be reused); the test must compile."""
    runs: list[object] = []
    run = vulkan_nan.run

    def counted(module: Any) -> None:
        runs.append(module)
        run(module)

    monkeypatch.setattr(vulkan_nan, "run", counted)
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compile_module, "pipeline_for", lambda backend, loop_cap=None: VULKAN)
    vkml.cpu.clear_executables()
    default_cache().clear_memory()
    yield
    vkml.cpu.clear_executables()
    default_cache().clear_memory()
    assert runs, "nothing was compiled with vkml-vulkan-nan"


@pytest.fixture(scope="module")
def vulkan() -> vkml.Device:
    return vkml.device("vulkan:0")


# float32 here; the 16-bit and 64-bit sweeps (50 s more) with make test-exhaustive: every
# dtype runs through the pass on lavapipe in test_vulkan_device.py
@pytest.mark.parametrize(
    "dtype", [d if d == "float32" else pytest.param(d, marks=EXHAUSTIVE) for d in ops_test.FLOATS]
)
def test_every_float_op_matches_reference_on_cpu_with_the_pass(
    dtype: str, vulkan_pipeline_on_cpu: None
) -> None:
    ops_test.check_against_reference(vkml.cpu, dtype, ops_test.programs(dtype))


def _patterns(dtype: str) -> np.ndarray:
    """Every 16-bit pattern; for float32 every sign and exponent with the mantissas around
    the NaN and infinity boundaries and a random spread."""
    if dtype != "float32":
        return np.arange(1 << 16, dtype=np.uint16).view(vkml.dtypes.to_dtype(dtype).numpy)
    mantissas = np.concatenate([[0, 1, 2, 0x400000, 0x7FFFFE, 0x7FFFFF],
                                np.random.default_rng(5).integers(0, 1 << 23, 58)])  # fmt: skip
    sign_exponent = np.arange(512, dtype=np.uint32) << 23
    return (sign_exponent[:, None] | mantissas.astype(np.uint32)[None, :]).ravel().view(np.float32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_integer_tests_find_nan_in_every_pattern_like_the_reference(
    dtype: str, vulkan_pipeline_on_cpu: None
) -> None:
    """x != x, x == x, and which of log, sqrt, sin and exp give NaN, with the pass's bit tests
    on cpu, against NumPy on the reference, for every bit pattern of the 16-bit types."""
    patterns = _patterns(dtype)
    ops: dict[str, Program] = {
        "ne": lambda t: vkml.not_equal(t["x"], t["x"]),
        "eq": lambda t: vkml.equal(t["x"], t["x"]),
        "log": lambda t: vkml.log(t["x"]),
        "sqrt": lambda t: vkml.sqrt(t["x"]),
        "sin": lambda t: vkml.sin(t["x"]),
        "exp": lambda t: vkml.exp(t["x"]),
    }
    results = {}
    for device in (vkml.cpu, vkml.reference):
        t = {"x": vkml.tensor(patterns, device=device)}
        outs = {name: fn(t) for name, fn in ops.items()}
        vkml.realize(*outs.values())
        with np.errstate(invalid="ignore"):  # signalling NaNs among the patterns
            results[device.name] = {k: v.numpy().astype(np.float64) for k, v in outs.items()}
    for name in ops:
        if name in ("ne", "eq"):
            got, want = results["cpu"][name] == 1.0, results["reference"][name] == 1.0
        else:
            got, want = np.isnan(results["cpu"][name]), np.isnan(results["reference"][name])
        bad = np.flatnonzero(got != want)
        bits = patterns.view(f"u{patterns.itemsize}")
        assert bad.size == 0, f"{name} on {dtype}: {bad.size} differ, e.g. {hex(bits[bad[0]])}"


NEGATIVE_TINY = -1e-45  # a float32 subnormal: cpu's float ops read it as -0.0
DOMAIN = [NAN, -NAN, INF, -INF, 0.0, -0.0, -1.0, 2.0, NEGATIVE_TINY]


def _of_d(name: str) -> Program:
    return lambda t: getattr(vkml, name)(t["d"])


# fmt: off
EDGES: dict[str, tuple[str, Program]] = {
    name: (name, _of_d(name))
    for name in ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos", "erf", "gelu",
                 *NEW_TRANSCENDENTAL)
} | {
    # on "m": cpu flushes d's subnormal to -0.0, whose floor is not the reference's -1.0
    # (docs/contracts.md, "Subnormals"; tests/py/frontend/test_rounding.py)
    name: (name, lambda t, name=name: getattr(vkml, name)(t["m"]))
    for name in ("floor", "ceil", "trunc", "round", "sign")
} | {
    "relu": ("relu", lambda t: t["d"].relu()),
    "pow": ("pow", lambda t: t["p"] ** t["q"]),
    "clip": ("maximum", lambda t: vkml.clip(t["d"], -0.5, 0.5)),
    "maximum": ("maximum", lambda t: vkml.maximum(t["d"], t["d"][::-1])),
    "minimum": ("minimum", lambda t: vkml.minimum(t["d"][::-1], t["d"])),
    "amax": ("amax", lambda t: t["m"].amax(axis=1)),
    "argmin": ("argmin", lambda t: t["m"].argmin(axis=1)),
    "le": ("le", lambda t: t["d"] <= t["d"][::-1]),
    "ne": ("ne", lambda t: t["d"] != t["d"][::-1]),
}
# fmt: on


def _edge_inputs(dtype: str) -> dict[str, np.ndarray]:
    npdt = vkml.dtypes.to_dtype(dtype).numpy
    rows = [[1.0, NAN, 3.0, -1.0], [NAN, NAN, 0.0, -0.0], [-INF, 2.0, INF, 1.0]]
    # no NaN ** ±0, 1 ** NaN or (-2) ** 3: the reference gives 1, 1 and -8, IREE's power NaN
    # on every device; the pass keeps IREE's result where IEEE's is not NaN
    p = [NAN, 2.0, NAN, 1.0, -8.0, 0.0, INF, 0.5]
    q = [2.0, NAN, 0.5, 3.0, 0.5, -1.0, NAN, 3.0]
    return {k: np.array(v, np.float64).astype(npdt)
            for k, v in {"d": DOMAIN, "m": rows, "p": p, "q": q}.items()}  # fmt: skip


def check_edges(device: vkml.Device, dtype: str) -> None:
    """EDGES on ``device`` and on the reference, compared as the per-op contract tests compare
    (NaN in the same places; the rest bit for bit or within the op table's bound)."""
    results = {}
    for where in (vkml.reference, device):
        t = {k: vkml.tensor(v, device=where) for k, v in _edge_inputs(dtype).items()}
        outs = {
            name: fn(t) for name, (op, fn) in EDGES.items() if device.supports(op, t["d"].dtype)
        }
        vkml.realize(*outs.values())
        results[where.name] = {k: v.numpy() for k, v in outs.items()}
    failures = []
    for name, got in results[device.name].items():
        try:
            ops_test.check_result(name, EDGES[name][0], got, results["reference"][name], dtype)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        pytest.param("float16", marks=EXHAUSTIVE),
        pytest.param("bfloat16", marks=EXHAUSTIVE),
    ],
)
def test_nan_and_domain_edges_match_reference_on_cpu_with_the_pass(
    dtype: str, vulkan_pipeline_on_cpu: None
) -> None:
    check_edges(vkml.cpu, dtype)


def test_negative_subnormal_is_outside_log_and_sqrt_by_its_bits(
    vulkan_pipeline_on_cpu: None,
) -> None:
    """cpu's float ops read -1e-45 as -0.0 (log -inf, sqrt -0.0); the pass's domain test reads
    the bits, so with it those are NaN, as on the reference."""
    x = vkml.tensor([NEGATIVE_TINY, -0.0])
    assert [math.isnan(v) for v in x.log().tolist()] == [True, False]
    assert [math.isnan(v) for v in x.sqrt().tolist()] == [True, False]


@needs_vulkan
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_nan_and_domain_edges_match_reference_on_vulkan(vulkan: vkml.Device, dtype: str) -> None:
    if not vulkan.supports("add", vkml.dtypes.to_dtype(dtype)):
        pytest.skip(f"{vulkan} does not support {dtype}")
    check_edges(vulkan, dtype)
