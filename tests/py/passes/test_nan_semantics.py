"""vkml's NaN contract: every op with a NaN rule, on cpu and reference, against PyTorch.

Each row of TABLE applies one op to float32 inputs holding NaN, ±inf, ±0.0, ±3.4e38 (near
the float32 maximum) and 1e-45 (the smallest subnormal), and three tests check it:
- NaN sits in the same places on cpu, on reference and in torch (2.13, CPU, float32);
- elsewhere cpu equals reference bit for bit (bit-exact ops) or within the op table's ULPs;
- elsewhere cpu equals torch: exactly, signs of zero included, for selecting and exact ops;
  within TORCH_ULP for transcendentals; within the summation error bound for sums.
Where vkml deliberately differs from torch, the row's torch side is the torch expression
that matches vkml's definition, and a divergence test below pins the difference. Values
computed from subnormal inputs are left out of the value checks (IREE's llvm-cpu flushes
subnormals to zero: ``test_cpu_keeps_subnormal_inputs``); their NaN positions are not.
The verifier pass ``vkml-verify-nan-semantics`` runs in every compile: the last tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from support.numerics import ulp_distance

import vkml
from vkml.compiler.compile import run_pipeline
from vkml.compiler.target import CPU_TARGET
from vkml.ops.registry import OPS
from vkml.passes import pairwise_extremes, verify_nan_semantics
from vkml.passes.registry import PIPELINE
from vkml.passes.run import run_passes

torch = pytest.importorskip("torch")

NAN, INF, BIG, TINY = math.nan, math.inf, 3.4e38, 1e-45
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, BIG, -BIG, TINY, 1.0, -1.0, 2.5, -7.0, 88.0, -104.0]
ROWS = [  # reductions and softmax run along each row
    [1.5, -2.0, 0.5, 3.0, -0.25, 7.0, -7.0, 2.0],  # finite
    [1.0, 2.0, NAN, 3.0, -1.0, 0.5, 4.0, -2.0],  # one NaN
    [INF, NAN, -INF, 1.0, 2.0, 3.0, NAN, 0.0],  # NaN among infinities: the first NaN wins argmax
    [1.0, INF, 3.0, -1.0, 0.0, 2.0, INF, 5.0],  # +inf twice
    [1.0, -INF, 3.0, -1.0, 0.0, 2.0, -INF, 5.0],  # -inf twice
    [INF, -INF, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0],  # inf - inf in sums and softmax
    [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0, -0.0],  # signed zeros
    [BIG, -BIG, TINY, 0.0, 1.0, -1.0, 0.5, -0.5],  # huge, no partial sum overflows in any order
    [BIG] * 8,  # finite, sum overflows to +inf
    [-BIG] * 8,
    [BIG, TINY, 1e-30, -BIG, 3.0, 88.0, -104.0, 0.0],  # mixed huge and small
    [-INF] * 8,
    [NAN] * 8,
]
# matmul: NaN, inf * 0 and inf - inf, each giving the same answer in every summation order
A = [[1.0, 2.0, 3.0], [NAN, 1.0, 1.0], [INF, 1.0, 1.0], [INF, -INF, 0.0], [0.0, 0.0, 0.0],
     [BIG, BIG, 0.0]]  # fmt: skip
B = [[1.0, 0.0, INF], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
TORCH_ULP = 16  # torch vectorises its own transcendentals; measured: at most 7 (log_softmax)


def inputs() -> dict[str, np.ndarray]:
    x = np.array(SPECIALS, np.float32)
    return {
        "x": x, "xx": x[:, None], "yy": x[None, :], "rows": np.array(ROWS, np.float32),
        "a": np.array(A, np.float32), "b": np.array(B, np.float32),
    }  # fmt: skip


@dataclass(frozen=True)
class Row:
    name: str
    op: str  # the op table entry whose cross-device contract applies
    vkml: Callable[[dict[str, Any]], Any]
    torch: Callable[[dict[str, Any]], Any]
    kind: str = "exact"  # how cpu is compared with torch: exact, ulp or sum
    torch_where: Callable[[dict[str, np.ndarray]], np.ndarray] | None = None  # default: all


def _after_no_subnormal(n: dict[str, np.ndarray]) -> np.ndarray:
    """The running sums whose prefix holds no subnormal: cpu flushes a subnormal input, and
    BIG + -BIG + TINY is TINY itself (docs/contracts.md)."""
    rows = n["rows"]
    subnormal = (rows != 0) & (np.abs(rows) < np.finfo(np.float32).tiny)
    return np.cumsum(subnormal, axis=1) == 0


def _gelu64(t: dict[str, Any]) -> Any:
    # torch's float32 gelu loses its negative tail to 1 + erf cancellation (divergence test);
    # in float64 it is accurate for x >= -3
    return torch.nn.functional.gelu(t["x"].double()).float()


def _tree_prod(t: dict[str, Any]) -> Any:
    """torch's multiply in vkml's pairwise order (halves of a power-of-two row): a product's
    overflow and underflow depend on the order, so torch's own prod is not the oracle
    (divergence test)."""
    y = t["rows"]
    while y.shape[1] > 1:
        h = y.shape[1] // 2
        y = y[:, :h] * y[:, h:]
    return y[:, 0]


F = torch.nn.functional
# fmt: off
TABLE = [
    # relu(-0.0): vkml's threshold form gives +0.0, torch.relu -0.0 (divergence test)
    Row("relu", "relu", lambda t: t["x"].relu(), lambda t: F.threshold(t["x"], 0.0, 0.0)),
    Row("abs", "abs", lambda t: abs(t["x"]), lambda t: t["x"].abs()),
    Row("neg", "neg", lambda t: -t["x"], lambda t: -t["x"]),
    Row("floor", "floor", lambda t: t["x"].floor(), lambda t: t["x"].floor()),
    Row("ceil", "ceil", lambda t: t["x"].ceil(), lambda t: t["x"].ceil()),
    Row("trunc", "trunc", lambda t: t["x"].trunc(), lambda t: t["x"].trunc()),
    Row("round", "round", lambda t: t["x"].round(), lambda t: t["x"].round()),
    # sign(NaN): vkml keeps the NaN, torch.sign gives 0 (divergence test); elsewhere the same
    Row("sign", "sign", lambda t: t["x"].sign(), lambda t: torch.where(t["x"].isnan(), t["x"], t["x"].sign())),
    Row("exp", "exp", lambda t: t["x"].exp(), lambda t: t["x"].exp(), "ulp"),
    Row("log", "log", lambda t: t["x"].log(), lambda t: t["x"].log(), "ulp"),
    Row("sqrt", "sqrt", lambda t: t["x"].sqrt(), lambda t: t["x"].sqrt(), "ulp"),
    Row("sigmoid", "sigmoid", lambda t: t["x"].sigmoid(), lambda t: t["x"].sigmoid(), "ulp"),
    Row("tanh", "tanh", lambda t: t["x"].tanh(), lambda t: t["x"].tanh(), "ulp"),
    Row("gelu", "gelu", lambda t: t["x"].gelu(), _gelu64, "ulp", lambda n: n["x"] >= -3),
    Row("clip_both", "maximum", lambda t: vkml.clip(t["x"], -1.0, 1.0),
        lambda t: t["x"].clamp(-1.0, 1.0)),
    Row("clip_min", "maximum", lambda t: vkml.clip(t["x"], 0.0), lambda t: t["x"].clamp(min=0.0)),
    Row("clip_max", "minimum", lambda t: vkml.clip(t["x"], None, -0.0),
        lambda t: t["x"].clamp(max=-0.0)),
    Row("maximum", "maximum", lambda t: vkml.maximum(t["xx"], t["yy"]),
        lambda t: torch.maximum(t["xx"], t["yy"])),
    Row("minimum", "minimum", lambda t: vkml.minimum(t["xx"], t["yy"]),
        lambda t: torch.minimum(t["xx"], t["yy"])),
    # a user's where(x > y, x, y) is a select, not a maximum: it drops a NaN x, as torch.where does
    Row("where_max", "where", lambda t: vkml.where(t["xx"] > t["yy"], t["xx"], t["yy"]),
        lambda t: torch.where(t["xx"] > t["yy"], t["xx"], t["yy"])),
    Row("where_nan_cond", "where", lambda t: vkml.where(t["x"] != t["x"], 0.0, t["x"]),
        lambda t: torch.where(t["x"].isnan(), 0.0, t["x"])),
    Row("sum", "sum", lambda t: t["rows"].sum(axis=1), lambda t: t["rows"].sum(1), "sum"),
    Row("cumsum", "cumsum", lambda t: t["rows"].cumsum(axis=1), lambda t: t["rows"].cumsum(1),
        "sum", _after_no_subnormal),
    Row("prod", "prod", lambda t: t["rows"].prod(axis=1), _tree_prod),
    Row("sort", "argsort", lambda t: vkml.sort(t["rows"]), lambda t: t["rows"].sort(stable=True, dim=1)[0]),
    Row("sort_desc", "argsort", lambda t: vkml.sort(t["rows"], descending=True),
        lambda t: t["rows"].sort(stable=True, dim=1, descending=True)[0]),
    Row("argsort", "argsort", lambda t: vkml.argsort(t["rows"]),
        lambda t: t["rows"].argsort(stable=True, dim=1)),
    Row("mean", "sum", lambda t: t["rows"].mean(axis=1), lambda t: t["rows"].mean(1), "sum"),
    Row("amax", "amax", lambda t: t["rows"].amax(axis=1), lambda t: t["rows"].amax(1)),
    Row("amin", "amin", lambda t: t["rows"].amin(axis=1), lambda t: t["rows"].amin(1)),
    Row("amax_all", "amax", lambda t: t["rows"][:6].amax(), lambda t: t["rows"][:6].amax()),
    Row("argmax", "argmax", lambda t: t["rows"].argmax(axis=1), lambda t: t["rows"].argmax(1)),
    Row("argmin", "argmin", lambda t: t["rows"].argmin(axis=1), lambda t: t["rows"].argmin(1)),
    Row("argmax_all", "argmax", lambda t: t["rows"][:3].argmax(),
        lambda t: t["rows"][:3].argmax()),
    Row("softmax", "exp", lambda t: vkml.softmax(t["rows"]), lambda t: t["rows"].softmax(-1),
        "ulp"),
    Row("log_softmax", "exp", lambda t: vkml.log_softmax(t["rows"]),
        lambda t: t["rows"].log_softmax(-1), "ulp"),
    Row("matmul", "matmul", lambda t: t["a"] @ t["b"], lambda t: t["a"] @ t["b"]),
]
# fmt: on


def _realize_all(device: vkml.Device) -> dict[str, np.ndarray]:
    """Every row's vkml result on ``device``, realized together (one compile on cpu)."""
    tensors = {k: vkml.tensor(v, device=device) for k, v in inputs().items()}
    results = {row.name: row.vkml(tensors) for row in TABLE}
    vkml.realize(*results.values())
    return {name: t.numpy() for name, t in results.items()}


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, np.ndarray]]:
    tensors = {k: torch.from_numpy(v.copy()) for k, v in inputs().items()}
    return {
        "cpu": _realize_all(vkml.cpu),
        "reference": _realize_all(vkml.reference),
        "torch": {row.name: np.asarray(row.torch(tensors).numpy()) for row in TABLE},
    }


def _value_mask(row: Row, shape: tuple[int, ...]) -> np.ndarray:
    """Where values are compared: not computed from a subnormal input (cpu flushes those)."""
    n = inputs()
    subnormal = (n["x"] != 0) & (np.abs(n["x"]) < np.finfo(np.float32).tiny)
    size = len(SPECIALS)
    if shape == (size,):  # an elementwise op of x
        keep = ~subnormal
    elif shape == (size, size):  # an elementwise op of the pairs (x, y)
        keep = ~subnormal[:, None] & ~subnormal[None, :]
    else:
        keep = np.ones(shape, bool)
    if row.torch_where is not None:
        keep = keep & row.torch_where(n)
    return np.broadcast_to(keep, shape)


@pytest.mark.parametrize("row", TABLE, ids=lambda r: r.name)
def test_nan_positions_match_torch(row: Row, results: dict[str, dict[str, np.ndarray]]) -> None:
    want = np.isnan(results["torch"][row.name].astype(np.float64))
    for device in ("cpu", "reference"):
        got = np.isnan(results[device][row.name].astype(np.float64))
        assert got.shape == want.shape, f"{row.name} on {device}: shape {got.shape} != {want.shape}"
        diff = np.argwhere(got != want)
        assert diff.size == 0, (
            f"{row.name} on {device}: NaN positions differ from torch at {diff.tolist()}\n"
            f"vkml:  {results[device][row.name]}\ntorch: {results['torch'][row.name]}"
        )


@pytest.mark.parametrize("row", TABLE, ids=lambda r: r.name)
def test_cpu_matches_reference_off_nan(row: Row, results: dict[str, dict[str, np.ndarray]]) -> None:
    got, want = results["cpu"][row.name], results["reference"][row.name]
    keep = _value_mask(row, got.shape) & ~np.isnan(want.astype(np.float64))
    if got.dtype.kind != "f":
        assert np.array_equal(got[keep], want[keep]), f"{row.name}: {got} != {want}"
        return
    ulp = 0 if OPS[row.op].bit_exact else max(OPS[row.op].ulp, 4)
    if row.op == "matmul":
        ulp = 0  # small integers and infinities: every order gives the exact value
    worst = ulp_distance(got[keep], want[keep])
    assert worst.size == 0 or worst.max() <= ulp, (
        f"{row.name}: cpu {got} vs reference {want}: {worst.max()} ULP (bound {ulp})"
    )
    if ulp == 0:  # bit-exact includes the sign of zero
        assert np.array_equal(np.signbit(got[keep]), np.signbit(want[keep])), (
            f"{row.name}: zero signs"
        )


@pytest.mark.parametrize("row", TABLE, ids=lambda r: r.name)
def test_cpu_matches_torch_off_nan(row: Row, results: dict[str, dict[str, np.ndarray]]) -> None:
    got, want = results["cpu"][row.name], results["torch"][row.name]
    keep = _value_mask(row, got.shape) & ~np.isnan(want.astype(np.float64))
    g, w = got[keep], want[keep]
    if row.kind == "exact":
        assert np.array_equal(g, w), f"{row.name}: cpu {got} != torch {want}"
        if g.dtype.kind == "f":
            assert np.array_equal(np.signbit(g), np.signbit(w)), (
                f"{row.name}: zero signs {got} {want}"
            )
    elif row.kind == "ulp":
        worst = ulp_distance(g, w)
        assert worst.max() <= TORCH_ULP, f"{row.name}: {worst.max()} ULP from torch\n{got}\n{want}"
    else:  # sums: the orders differ; |error| <= n * eps * sum |x| covers both
        rows = np.array(ROWS, np.float64)
        n = rows.shape[1]
        bound = n * np.finfo(np.float32).eps * np.abs(rows).sum(axis=1)
        if row.name == "mean":
            bound /= n
        bound = np.broadcast_to(bound.reshape(bound.shape + (1,) * (got.ndim - 1)), got.shape)
        bound = np.where(np.isfinite(bound), bound, 0)[keep]
        infinite = np.isinf(g) | np.isinf(w)
        assert np.array_equal(g[infinite], w[infinite]), (
            f"{row.name}: infinities differ {got} {want}"
        )
        assert np.all(np.abs(g - w)[~infinite] <= bound[~infinite]), f"{row.name}: {got} vs {want}"


# -- a finite input never gives NaN --------------------------------------------------------
def _finite_sweep() -> np.ndarray:
    """±2**k for every float32 binade, the largest float32, and 1e-45, shuffled into rows."""
    mags = [2.0**k for k in range(-149, 128)] + [float(np.finfo(np.float32).max), 0.0]
    values = np.array(mags + [-m for m in mags], np.float32)
    rows = np.random.default_rng(3).permutation(values)[: (values.size // 8) * 8].reshape(-1, 8)
    huge = np.array([[BIG, -BIG, TINY, -TINY, 1.0, BIG, -BIG, 0.0]], np.float32)
    return np.concatenate([rows, huge, np.sort(rows, axis=1)])


FINITE_OPS = {
    "softmax": (lambda v: vkml.softmax(v), lambda t: t.softmax(-1)),
    "log_softmax": (lambda v: vkml.log_softmax(v), lambda t: t.log_softmax(-1)),
    "sigmoid": (lambda v: v.sigmoid(), lambda t: t.sigmoid()),
    "tanh": (lambda v: v.tanh(), lambda t: t.tanh()),
    "gelu": (lambda v: v.gelu(), lambda t: F.gelu(t)),
}


@pytest.mark.parametrize("device", ["cpu", "reference"])
@pytest.mark.parametrize("name", FINITE_OPS)
def test_finite_input_never_gives_nan(name: str, device: str) -> None:
    x = _finite_sweep()
    vkml_op, torch_op = FINITE_OPS[name]
    got = vkml_op(vkml.tensor(x, device=vkml.device(device))).numpy()
    assert not np.isnan(got).any(), (
        f"{name} on {device}: NaN for finite rows {x[np.isnan(got).any(1)]}"
    )
    assert not torch_op(torch.from_numpy(x)).isnan().any()  # torch agrees: the rule is its rule


# -- deliberate divergences from torch -----------------------------------------------------
def test_relu_of_negative_zero_is_positive_zero_unlike_torch_relu() -> None:
    """vkml's relu is ``0 if x <= 0 else x`` (torch's threshold); torch.relu keeps -0.0."""
    got = vkml.tensor([-0.0]).relu().numpy()
    assert not np.signbit(got[0])
    assert torch.signbit(torch.relu(torch.tensor([-0.0])))[0]


def test_sign_of_nan_is_nan_unlike_torch_sign() -> None:
    """NumPy's and the Array API's rule: sign(NaN) is NaN; torch.sign gives 0."""
    assert math.isnan(vkml.tensor([NAN]).sign().item())
    assert torch.sign(torch.tensor([NAN])).item() == 0


def test_gelu_keeps_the_tail_torch_float32_loses() -> None:
    """erfc instead of 1 + erf: gelu(-7) is -8.9587e-12, not -0.0; gelu(3.4e38) stays finite."""
    got = vkml.tensor([-7.0, BIG]).gelu().numpy()
    exact = -7.0 * 0.5 * math.erfc(7.0 / math.sqrt(2.0))
    assert abs(got[0] - exact) <= 8 * abs(np.spacing(np.float32(exact)))
    assert got[1] == np.float32(BIG)
    theirs = F.gelu(torch.tensor([-7.0, BIG]))
    # torch's gelu(3.4e38) is inf or finite depending on which vector path the host CPU takes
    assert theirs[0] == 0


def test_sum_of_negative_zeros_is_negative_zero_unlike_torch() -> None:
    """-0.0 pads the pairwise tree and starts it; torch starts from +0.0."""
    assert np.signbit(vkml.tensor([-0.0] * 8).sum().numpy())
    assert not torch.signbit(torch.tensor([-0.0] * 8).sum())


def test_sum_of_finite_values_can_overflow_to_nan_in_the_pairwise_order() -> None:
    """[M, -M, M, -M] pairs as (M + M) + (-M + -M) = inf - inf: NaN where torch gets 0."""
    x = [BIG, -BIG, BIG, -BIG]
    for device in (vkml.cpu, vkml.reference):
        assert math.isnan(vkml.tensor(x, device=device).sum().item())
    assert torch.tensor(x).sum().item() == 0.0


def test_prod_of_finite_values_can_overflow_to_nan_in_the_pairwise_order() -> None:
    """[M, 0, M, 1] pairs as (M * M) * (0 * 1) = inf * 0: NaN where torch's running product
    stays 0."""
    x = [BIG, 0.0, BIG, 1.0]
    for device in (vkml.cpu, vkml.reference):
        assert math.isnan(vkml.tensor(x, device=device).prod().item())
    assert torch.tensor(x).prod().item() == 0.0


# -- bugs: subnormals on cpu ---------------------------------------------------------------
def test_cpu_flushes_subnormals_as_documented() -> None:
    """IREE runs every cpu dispatch with flush-to-zero and denormals-are-zero (its task and
    inline executors push that FPU state; no flag turns it off), so on cpu a float32
    subnormal reads as zero. docs/contracts.md states it as the exception to cross-device
    bit-exactness; this test fails, and the docs must change, the day IREE stops flushing."""
    x = np.array([1e-45, 1e-40], np.float32)
    ref = vkml.tensor(x, device=vkml.reference)
    assert np.array_equal((ref + 0.0).numpy(), x) and (ref > 0.0).numpy().all()
    assert np.array_equal(ref.relu().numpy(), x)
    cpu = vkml.tensor(x)
    assert np.array_equal((cpu + 0.0).numpy(), np.zeros(2, np.float32))
    assert not (cpu > 0.0).numpy().any()
    assert np.array_equal(cpu.relu().numpy(), np.zeros(2, np.float32))
    # float16 subnormals are normal float32 numbers, so 16-bit arithmetic keeps them
    h = np.array([6e-8, -3e-5], np.float16)
    assert np.array_equal((vkml.tensor(h) + 0.0).numpy().view(np.uint16), h.view(np.uint16))


def test_sqrt_and_log_of_a_negative_subnormal() -> None:
    """NaN in torch and on reference; on cpu the input reads as -0.0 (see above), so sqrt
    gives -0.0 and log -inf: the documented exception to "NaN follows PyTorch"."""
    assert (
        torch.tensor([-1e-45]).sqrt().isnan().all() and torch.tensor([-1e-45]).log().isnan().all()
    )
    ref = vkml.tensor([-1e-45], device=vkml.reference)
    assert math.isnan(ref.sqrt().item()) and math.isnan(ref.log().item())
    cpu = vkml.tensor([-1e-45])
    assert cpu.sqrt().item() == 0.0 and math.copysign(1.0, cpu.sqrt().item()) == -1.0
    assert cpu.log().item() == -math.inf


# -- the verifier runs in every compile ----------------------------------------------------
MAXNUMF = """func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %m = arith.maxnumf %x, %y : tensor<4xf32>
  return %m : tensor<4xf32>
}"""


def test_pipeline_ends_with_the_nan_verifier() -> None:
    assert PIPELINE[-1] == verify_nan_semantics.ARGUMENT == "vkml-verify-nan-semantics"


def test_every_compile_rejects_a_nan_swallowing_maxnumf() -> None:
    with pytest.raises(vkml.CompileError, match=r"'arith.maxnumf' at loc\(.*\) is a maximum"):
        run_passes(MAXNUMF)
    with pytest.raises(vkml.CompileError, match="arith.maxnumf"):
        run_pipeline(MAXNUMF, CPU_TARGET)  # refused before IREE sees it


def test_verifier_catches_an_emitter_whose_nan_check_tests_the_wrong_operand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken_select_max(b: Any, x: Any, y: Any) -> Any:
        keep = b.binary("or", b.compare("GE", x, y), b.compare("NE", y, y))
        return b.select(keep, x, y)

    monkeypatch.setattr(pairwise_extremes, "select_max", broken_select_max)
    x = vkml.tensor([1.0, NAN, 3.0])
    with pytest.raises(
        vkml.CompileError, match=r"'stablehlo.select' at .* is a maximum that swallows NaN"
    ):
        vkml.emit_mlir(x.amax(), passes=True)


def test_vkml_emission_of_every_table_row_passes_the_verifier() -> None:
    tensors = {k: vkml.tensor(v) for k, v in inputs().items()}
    text = vkml.emit_mlir(*(row.vkml(tensors) for row in TABLE), passes=True)
    assert "stablehlo.select" in text and "arith.maxnumf" not in text
