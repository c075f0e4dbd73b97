"""The op programs every device runs against the reference: each op of the op table, for
every dtype it takes, on deterministic operands with special values, all of one dtype in one
realize; and the comparison, bit-exact where the op table (and DESIGN.md's determinism
contract) says so, within the stated ULP bound elsewhere."""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

import vkml
from support.numerics import assert_bit_exact, assert_within_ulp, ulp_distance
from vkml.frontend import functions
from vkml.frontend.control import fusion_stop
from vkml.ops import rules
from vkml.ops.registry import OPS

FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int32", "int64", "uint32"]
ALL = FLOATS + INTS + ["bool"]

Program = Callable[[dict[str, vkml.Tensor]], vkml.Tensor]


def inputs(dtype: str) -> dict[str, np.ndarray]:
    """Deterministic operands: a (3, 8) matrix with special values, a (8,) row, a positive one."""
    rng = np.random.default_rng(7)
    npdt = vkml.dtypes.to_dtype(dtype).numpy
    if dtype in FLOATS:
        a = rng.normal(0, 3, (3, 8))
        a[0, :8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-6, -2.5, 65504.0]
        b = rng.normal(0, 2, (8,))
        b[1] = -0.0
        pos = rng.uniform(0.1, 4.0, (3, 8))
        mid = rng.uniform(-20.0, 20.0, (3, 8))
        mid[0, :4] = [np.nan, np.inf, -0.0, 0.0]
    elif dtype == "bool":
        a = rng.integers(0, 2, (3, 8)).astype(bool)
        b = rng.integers(0, 2, (8,)).astype(bool)
        pos = np.ones((3, 8), bool)
        mid = a
    else:
        lo = 0 if dtype == "uint32" else -50
        a = rng.integers(lo, 50, (3, 8))
        b = rng.integers(1, 9, (8,))
        pos = rng.integers(0, 4, (3, 8))
        mid = a
    return {k: v.astype(npdt) for k, v in {"a": a, "b": b, "pos": pos, "mid": mid}.items()}


GATHER = np.array(
    [[0, 7, -1, -8, 3, 3, 9, -20], [1, 2, 3, 4, 5, 6, 7, 0], [5, 5, 5, 5, 5, 5, 5, 5]]
)

BITCAST_PARTNER = {
    "float32": "uint32", "uint32": "float32", "int32": "float32", "int64": "float64",
    "float64": "int64", "float16": "bfloat16", "bfloat16": "float16",
}  # fmt: skip


def shift_edges(dtype: str, device: vkml.Device) -> tuple[vkml.Tensor, vkml.Tensor]:
    """(values as a column, amounts as a row): the extremes of ``dtype`` shifted by amounts
    in and outside ``[0, bits)``, negative ones too for signed dtypes."""
    info = np.iinfo(dtype)
    bits = info.bits
    values = [info.min, info.min + 1, -5, -1, 0, 1, 12345, info.max - 1, info.max]
    amounts = [0, 1, 7, bits - 1, bits, bits + 1, 100, info.max]
    if info.min < 0:
        amounts += [-1, info.min]
    values = list(dict.fromkeys(v for v in values if info.min <= v <= info.max))
    x = vkml.tensor(np.array(values, dtype).reshape(-1, 1), device=device)
    return x, vkml.tensor(np.array(amounts, dtype).reshape(1, -1), device=device)


def programs(dtype: str) -> dict[str, tuple[str, Program]]:
    """name -> (op under test, a function of the operand tensors), for every op on ``dtype``."""
    p: dict[str, tuple[str, Program]] = {}
    number = dtype != "bool"
    flt = dtype in FLOATS
    if number:
        p["add"] = ("add", lambda t: t["a"] + t["b"])
        p["sub"] = ("sub", lambda t: t["a"] - t["b"])
        p["mul"] = ("mul", lambda t: t["a"] * t["b"])
        p["div"] = ("div", lambda t: t["a"] / t["b"])
        p["maximum"] = ("maximum", lambda t: vkml.maximum(t["a"], t["b"]))
        p["minimum"] = ("minimum", lambda t: vkml.minimum(t["a"], t["b"]))
        p["pow"] = (
            "pow",
            (lambda t: t["pos"] ** t["b"]) if flt else (lambda t: t["a"] ** t["pos"]),
        )
        if vkml.cpu.supports("remainder", vkml.dtypes.to_dtype(dtype)):
            p["floor_divide"] = ("floor_divide", lambda t: t["a"] // t["b"])
            p["remainder"] = ("remainder", lambda t: t["a"] % t["b"])
        p["neg"] = ("neg", lambda t: -t["a"])
        p["abs"] = ("abs", lambda t: abs(t["a"]))
        p["relu"] = ("relu", lambda t: t["a"].relu())
        for name in ("floor", "ceil", "trunc", "round", "sign"):
            p[name] = (name, lambda t, n=name: getattr(vkml, n)(t["a"]))
        p["lt"] = ("lt", lambda t: t["a"] < t["b"])
        p["le"] = ("le", lambda t: t["a"] <= t["b"])
        p["gt"] = ("gt", lambda t: t["a"] > t["b"])
        p["ge"] = ("ge", lambda t: t["a"] >= t["b"])
        p["matmul"] = ("matmul", lambda t: t["pos"] @ t["pos"].transpose())
    if flt:
        # positive operands, as matmul's: the check bounds the error relative to the sum
        p["conv"] = (
            "conv",
            lambda t: vkml.conv(
                t["pos"].reshape(1, 3, 8), t["pos"][:, :3].reshape(3, 1, 3), 2, 1, groups=3
            ),
        )
        p["conv_2d"] = (
            "conv",
            lambda t: vkml.conv(
                t["pos"].reshape(1, 1, 3, 8), t["pos"][:2, :3].reshape(1, 1, 2, 3), padding=1
            ),
        )
        p["conv_transpose"] = (
            "conv",
            lambda t: vkml.conv_transpose(
                t["pos"].reshape(1, 3, 8), t["pos"][:, :2].reshape(3, 1, 2), 2
            ),
        )
        p["add_scalar"] = ("add", lambda t: t["a"] + 3)
        p["mul_scalar_float"] = ("mul", lambda t: t["a"] * 0.5)
    if dtype in INTS:
        p["bitwise_and"] = ("bitwise_and", lambda t: vkml.bitwise_and(t["a"], t["b"]))
        p["bitwise_or"] = ("bitwise_or", lambda t: vkml.bitwise_or(t["a"], t["b"]))
        p["bitwise_xor"] = ("bitwise_xor", lambda t: vkml.bitwise_xor(t["a"], t["b"]))
        p["xor_scalar"] = ("bitwise_xor", lambda t: vkml.bitwise_xor(t["a"], 0x2D))
        p["left_shift"] = ("left_shift", lambda t: vkml.left_shift(t["a"], t["b"]))
        p["right_shift"] = ("right_shift", lambda t: vkml.right_shift(t["a"], t["b"]))
        for op in ("left_shift", "right_shift"):
            # extreme values by every amount, those outside [0, bits) included
            p[f"{op}_edges"] = (
                op,
                lambda t, o=op: getattr(vkml, o)(*shift_edges(dtype, t["a"].device)),
            )
    if dtype != "bool":
        p["bitcast"] = ("bitcast", lambda t: vkml.bitcast(t["a"], BITCAST_PARTNER[dtype]))
    p["eq"] = ("eq", lambda t: t["a"] == t["b"])
    p["ne"] = ("ne", lambda t: t["a"] != t["b"])
    p["where"] = ("where", lambda t: vkml.where(t["pos"] > t["pos"].amin(), t["a"], t["b"]))
    # a condition decided on the device, each way: the arms are regions of the cond node
    for taken in (True, False):
        p[f"cond_{taken}"] = ("cond", lambda t, taken=taken: vkml.cond(
            (t["pos"].reshape(-1)[0] == t["pos"].reshape(-1)[0]) == taken,
            (lambda x, y: x - y) if number else (lambda x, y: x != y),
            (lambda x, y: vkml.maximum(x, y) * x) if number else (lambda x, y: x == y),
            t["a"], t["b"],
        ))  # fmt: skip
    # a fork branch's end (the graph builder's): the value through a fusion stop, then used
    p["fusion_stop"] = (
        "fusion_stop",
        lambda t: fusion_stop(t["a"]) if not number else fusion_stop(t["a"] + t["b"]) * t["a"],
    )
    # a loop on the device: double (or negate, for bool) until the first element's value has
    # been seen three times; each carried value read back by a result node
    p["while"] = ("while", lambda t: vkml.while_loop(
        lambda i, x: i < 3,
        (lambda i, x: (i + 1, x + x)) if number else (lambda i, x: (i + 1, x == False)),
        vkml.tensor(np.int32(0), device=t["a"].device), t["a"],
    )[1])  # fmt: skip
    p["while_result_count"] = ("result", lambda t: vkml.while_loop(
        lambda i, x: i < 2, lambda i, x: (i + 1, x), vkml.tensor(np.int32(0), device=t["a"].device), t["b"],
    )[0])  # fmt: skip
    if flt and vkml.cpu.supports("atan2", vkml.dtypes.to_dtype(dtype)):
        p["atan2"] = ("atan2", lambda t: vkml.atan2(t["a"], t["mid"]))
    for name in (n for n, d in OPS.items() if d.rule is rules.unary and not d.bit_exact):
        if flt and not vkml.cpu.supports(name, vkml.dtypes.to_dtype(dtype)):
            continue  # pinned by test_cpu_refuses_what_its_support_table_excludes
        if flt and name in ("sin", "cos", "tan"):
            # |x| <= 20: for large arguments the devices' range reductions differ (docs)
            p[name] = (name, lambda t, n=name: getattr(vkml, n)(t["mid"]))
            p[name + "_pos"] = (name, lambda t, n=name: getattr(vkml, n)(t["pos"]))
        elif flt:
            p[name] = (name, lambda t, n=name: getattr(vkml, n)(t["a"]))
            p[name + "_pos"] = (name, lambda t, n=name: getattr(vkml, n)(t["pos"]))
    p["sum"] = ("sum", lambda t: t["a"].sum(axis=1))
    p["sum_all"] = ("sum", lambda t: t["pos"].sum())
    p["sum_axis0_keep"] = ("sum", lambda t: t["a"].sum(axis=0, keepdims=True))
    p["prod"] = ("prod", lambda t: t["a"].prod(axis=1))
    p["cumsum"] = ("cumsum", lambda t: t["a"].cumsum(axis=1))
    # indices in range, negative, repeated and out of range (clamped), in every index dtype
    p["take_along_axis"] = (
        "take_along_axis",
        lambda t: vkml.take_along_axis(t["a"], vkml.tensor(GATHER, device=t["a"].device), 1),
    )
    p["take"] = (
        "take_along_axis",
        lambda t: vkml.take(t["a"], vkml.tensor([2, 0, -1, 2], "int32", device=t["a"].device), 0),
    )
    if number:
        p["scatter_add"] = (
            "scatter_add",
            lambda t: functions.scatter_add(
                t["a"], vkml.tensor(GATHER[:, :8] % 5, device=t["a"].device), 1, 5
            ),
        )
    p["cumsum_flat"] = ("cumsum", lambda t: t["pos"].cumsum())
    # NaN, ±inf, ±0.0 (equal: stable), repeats; along each axis, both directions
    p["argsort"] = ("argsort", lambda t: vkml.argsort(t["a"]))
    p["argsort_desc_axis0"] = ("argsort", lambda t: vkml.argsort(t["a"], 0, descending=True))
    p["sort"] = ("argsort", lambda t: vkml.sort(t["mid"], descending=True))
    p["sort_axis0"] = ("argsort", lambda t: vkml.sort(t["pos"], axis=0))
    p["prod_all_keep"] = ("prod", lambda t: t["a"].prod(axis=(0, 1), keepdims=True))
    if flt:
        p["mean"] = ("sum", lambda t: t["pos"].mean(axis=1))
        p["softmax"] = ("exp", lambda t: vkml.softmax(t["pos"], axis=1))
        p["log_softmax"] = ("exp", lambda t: vkml.log_softmax(t["pos"], axis=0))
    p["amax"] = ("amax", lambda t: t["a"].amax(axis=1))
    p["amin"] = ("amin", lambda t: t["a"].amin(axis=(0, 1), keepdims=True))
    p["argmax"] = ("argmax", lambda t: t["a"].argmax(axis=1))
    p["argmin"] = ("argmin", lambda t: t["a"].argmin())
    p["reshape"] = ("reshape", lambda t: t["a"].reshape(4, 6))
    p["permute"] = ("permute", lambda t: t["a"].reshape(3, 2, 4).permute(2, 0, 1))
    p["broadcast_to"] = ("broadcast_to", lambda t: t["b"].broadcast_to(2, 3, 8))
    p["slice"] = ("slice", lambda t: t["a"][1:, ::-3])
    p["index"] = ("slice", lambda t: t["a"][-1, 2:7:2])
    p["index_at"] = ("index_at", lambda t: t["a"][1, -2])
    p["place_at"] = (
        "place_at",
        lambda t: functions.place_at(
            t["a"][:1], vkml.tensor(np.int32(2), device=t["a"].device), 0, 4
        ),
    )
    p["concatenate"] = ("concatenate", lambda t: vkml.concatenate([t["a"], t["pos"]], axis=0))
    p["stack"] = ("concatenate", lambda t: vkml.stack([t["a"], t["pos"]], axis=2))
    p["full"] = ("full", lambda t: vkml.full((2, 3), 7, dtype=dtype, device=t["a"].device))
    # a Python number an op is given: read from the module's table of numbers at run time
    p["scalar"] = (
        "scalar",
        lambda t: vkml.where(t["a"] == t["a"], t["a"], 1 if dtype != "bool" else True),
    )
    if dtype != "bool":
        p["arange"] = ("arange", lambda t: vkml.arange(1, 20, 3, dtype=dtype, device=t["a"].device))
    if flt:
        p["linspace"] = (
            "arange",
            lambda t: vkml.linspace(-1.0, 2.0, 7, dtype=dtype, device=t["a"].device),
        )
    for target in ALL:
        p[f"astype_{target}"] = ("astype", lambda t, d=target: t["pos"].astype(d))
        if target in FLOATS or target == "bool":
            # specials too (NaN, inf, -0.0, negatives): float -> int of those is unspecified
            p[f"astype_all_{target}"] = ("astype", lambda t, d=target: t["a"].astype(d))
    covered = {op for op, _ in p.values()}
    for name in OPS:
        if name not in covered:
            p.update(spelled_programs(name, dtype))
    return p


def spelled_programs(name: str, dtype: str) -> dict[str, tuple[str, Program]]:
    """The programs of an op with a public spelling that ``programs`` has no line for: its
    function on the operands its rule takes, for every dtype its inputs allow (so that a new
    op of a rule that infers is run against the reference with its definition)."""
    d = OPS[name]
    flt, number, integer = dtype in FLOATS, dtype != "bool", dtype in INTS
    allowed = {"any": True, "number": number, "float": flt, "integer": integer}[d.inputs]
    if (
        d.spelling is None
        or not allowed
        or not vkml.cpu.supports(name, vkml.dtypes.to_dtype(dtype))
    ):
        return {}
    f = getattr(vkml, d.spelling.function)
    if d.rule.operands == "promoted":
        return {name: (name, lambda t: f(t["a"], t["b"]))}
    if d.rule.name == "reduction":
        return {
            name: (name, lambda t: f(t["a"], axis=1)),
            f"{name}_all": (name, lambda t: f(t["pos"])),
        }
    return {name: (name, lambda t: f(t["a"])), f"{name}_pos": (name, lambda t: f(t["pos"]))}


def check_result(name: str, opname: str, got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    op = OPS[opname]
    what = f"{name} on {dtype}"
    if op.bit_exact or got.dtype.kind not in "fV":
        assert_bit_exact(got, want, what)
    elif op.name in ("matmul", "conv"):
        # positive operands: no cancellation, so the relative error is at most k * eps
        k = 8
        eps = float(np.finfo(np.float32 if got.dtype.itemsize <= 4 else np.float64).eps)
        rounding = float(ml_dtypes.finfo(got.dtype).eps) if got.dtype.itemsize == 2 else 0.0
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=k * eps + rounding, err_msg=what
        )
    elif op.name in ("sin", "cos", "tan"):
        # near a zero of sin/cos a ULP bound is meaningless: bound the absolute error instead
        # (tan, sin / cos: within the ULP bound where it is large, near its poles)
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        err = np.where(np.isnan(want.astype(np.float64)), 0, err)
        if op.name == "tan":
            err = np.where(ulp_distance(got, want) <= op.ulp, 0, err)
        bound = op.ulp * float(ml_dtypes.finfo(got.dtype).eps)
        assert np.array_equal(
            np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
        ), what
        assert err.max() <= bound, f"{what}: absolute error {err.max():.3g} > {bound:.3g}"
    else:
        assert_within_ulp(got, want, op.ulp, what)


def programs_on(device: vkml.Device, dtype: str) -> dict[str, tuple[str, Program]]:
    """``programs(dtype)`` less those ``device`` refuses (the op, or a cast's target dtype)."""
    dt = vkml.dtypes.to_dtype(dtype)

    def runs_here(name: str, op: str) -> bool:
        cast_to = vkml.dtypes.to_dtype(name.split("_")[-1]) if name.startswith("astype_") else dt
        return device.supports(op, dt) and device.supports("astype", cast_to)

    return {n: p for n, p in programs(dtype).items() if runs_here(n, p[0])}


def run_on_both(
    device: vkml.Device, dtype: str, progs: dict[str, tuple[str, Program]]
) -> dict[str, dict[str, np.ndarray]]:
    """Each program's result on the reference and on ``device`` (one realize each), by
    device name then program name."""
    data = inputs(dtype)
    results = {}
    for where in (vkml.reference, device):
        t = {k: vkml.tensor(v, device=where) for k, v in data.items()}
        outs = {name: fn(t) for name, (_, fn) in progs.items()}
        vkml.realize(*outs.values())
        results[where.name] = {k: v.numpy() for k, v in outs.items()}
    return results


def check_against_reference(
    device: vkml.Device, dtype: str, progs: dict[str, tuple[str, Program]]
) -> None:
    """Run ``progs`` on ``device`` and on the reference (one realize each) and compare."""
    results = run_on_both(device, dtype, progs)
    failures = []
    for name, (op, _) in progs.items():
        try:
            check_result(name, op, results[device.name][name], results["reference"][name], dtype)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n\n".join(failures)
