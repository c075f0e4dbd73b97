"""Benchmarks 1-5: graph build, cache-hit realize, elementwise chain, sum, matmul.

Every case returns ``Bench`` records whose first row is vkml on the cpu device; benchmarks 2 and
3 add vkml on ``vulkan:0`` after it (``benchmarks.vulkan``). Each implementation's result is
checked once against NumPy before it is timed; a wrong answer makes its row "n/a".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import vkml
from benchmarks.chain import build_chain
from benchmarks.harness import Bench, Budget, Row, Timing, attempt, failed, time_calls
from benchmarks.peers import (
    RawIreeModule,
    jax_jit,
    jax_modules,
    jax_put,
    raw_chain_text,
    raw_matmul_text,
    raw_sum_text,
    torch_compiled,
    torch_module,
)
from benchmarks.vulkan import VULKAN, vulkan_rows

RNG_SEED = 20240601


def _inputs(*shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(RNG_SEED)
    return [rng.random(shape, dtype=np.float32) for shape in shapes]


def _checked(
    fn: Callable[[], Any], to_host: Callable[[Any], Any], expected: Any, rtol: float
) -> Callable[[], Any]:
    """``fn`` after one call whose result matches ``expected``; raises on a wrong answer."""
    got = np.asarray(to_host(fn()), dtype=np.float64)
    want = np.asarray(expected, dtype=np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=rtol):
        worst = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("nan")
        raise AssertionError(f"wrong result (max abs error {worst:.3g}, rtol {rtol})")
    return fn


def _timed(
    fn: Callable[[], Any],
    to_host: Callable[[Any], Any],
    expected: Any,
    rtol: float,
    budget: Budget,
    warmup: int = 2,
) -> Callable[[], Timing]:
    return lambda: time_calls(_checked(fn, to_host, expected, rtol), budget, warmup)


def _identity(value: Any) -> Any:
    return value


def _vk_numpy(value: Any) -> np.ndarray:
    return value.numpy()


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


# --- 1. graph build ---------------------------------------------------------------------------

BUILD_NODES = 10_000


def bench_build(budget: Budget) -> list[Bench]:
    bench = Bench(
        "build",
        f"1. graph build, {BUILD_NODES:,}-op elementwise chain, per node",
        "us",
        target="vkml <= 2 us per node",
    )
    per_node = 1.0 / BUILD_NODES
    x = vkml.tensor(np.ones(1024, np.float32)).realize()
    vk = attempt(
        "vkml (build only, no realize)",
        lambda: time_calls(lambda: build_chain(x, BUILD_NODES), budget).scaled(per_node),
    )
    bench.rows.append(vk)

    def torch_tiny() -> Timing:
        t = torch_module().ones(4)
        return time_calls(lambda: build_chain(t, BUILD_NODES), budget).scaled(per_node)

    tiny = np.ones(4, np.float32)
    bench.rows.append(
        attempt(
            "torch eager, per op on a 4-element tensor",
            torch_tiny,
            note="context: executes each op",
        )
    )
    bench.rows.append(
        attempt(
            "numpy, per op on a 4-element array",
            lambda: time_calls(lambda: build_chain(tiny, BUILD_NODES), budget).scaled(per_node),
            note="context: executes each op",
        )
    )
    bench.notes.append("No lazy-graph peer (MLX) is available here; the eager rows run each op.")
    if vk.timing is not None:
        bench.measured = f"{vk.timing.median * 1e6:.2f} us/node"
        bench.verdict = _verdict(vk.timing.median <= 2e-6)
    return [bench]


# --- 2. cache-hit realize of a small graph ----------------------------------------------------

SMALL_N = 1024


def bench_small_realize(budget: Budget) -> list[Bench]:
    bench = Bench(
        "small",
        f"2. cache-hit realize of (a*b + a) on {SMALL_N} float32, per call "
        "(upload + run + readback)",
        "us",
        target="vkml cpu <= 60 us per call",
    )
    a, b = _inputs((SMALL_N,), (SMALL_N,))
    want = a * b + a

    def round_trip(device: vkml.Device) -> Timing:
        def call() -> np.ndarray:
            ta, tb = vkml.tensor(a, device=device), vkml.tensor(b, device=device)
            return (ta * tb + ta).numpy()

        return _timed(call, _identity, want, 1e-6, budget, warmup=3)()

    def invocation(device: vkml.Device) -> Timing:
        ta, tb = vkml.tensor(a, device=device).realize(), vkml.tensor(b, device=device).realize()
        return _timed(lambda: (ta * tb + ta).realize(), _vk_numpy, want, 1e-6, budget, warmup=3)()

    vulkan = vulkan_rows()
    bench.rows += [
        attempt(
            "vkml cpu",
            lambda: round_trip(vkml.cpu),
            note="fresh vkml.tensor() each call; first call compiles",
        ),
        vulkan.row("", round_trip),
        attempt(
            "vkml cpu, invocation only",
            lambda: invocation(vkml.cpu),
            note="resident inputs, .realize(), no readback",
        ),
        vulkan.row(", invocation only", invocation),
    ]
    bench.rows.append(attempt("numpy", _timed(lambda: a * b + a, _identity, want, 1e-6, budget)))

    def torch_eager() -> Timing:
        torch = torch_module()

        def call() -> np.ndarray:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            return (ta * tb + ta).numpy()

        return _timed(call, _identity, want, 1e-6, budget)()

    bench.rows.append(attempt("torch eager", torch_eager, note="from_numpy (zero-copy) each call"))

    def torch_compile() -> Timing:
        torch = torch_module()
        fn = torch_compiled(lambda x, y: x * y + x)

        def call() -> np.ndarray:
            return fn(torch.from_numpy(a), torch.from_numpy(b)).numpy()

        return _timed(call, _identity, want, 1e-6, budget, warmup=3)()

    bench.rows.append(attempt("torch.compile", torch_compile))

    def jax_call() -> Timing:
        fn = jax_jit(lambda x, y: x * y + x)
        return _timed(
            lambda: np.asarray(fn(a, b).block_until_ready()),
            _identity,
            want,
            1e-6,
            budget,
            warmup=3,
        )()

    bench.rows.append(attempt("jax.jit", jax_call, note="numpy in, np.asarray out"))
    invocation_note = (
        "*invocation only*: inputs uploaded once; each call builds the graph and realizes it "
        "(structural-key lookup, one invocation), leaving the result on the device."
    )
    bench.notes += [invocation_note, vulkan.about]
    vk = bench.rows[0]
    if vk.timing is not None:
        bench.measured = f"{vk.timing.median * 1e6:.1f} us"
        bench.verdict = _verdict(vk.timing.median <= 60e-6)
    return [bench]


# --- 3. 8-op elementwise chain ----------------------------------------------------------------

CHAIN_N = 1 << 24


def chain_numpy(x: np.ndarray) -> np.ndarray:
    return np.maximum(np.log(np.sqrt(np.exp(np.tanh(x * 1.5 + 0.5)))), np.float32(0.25)) * 2.0


def chain_vkml(x: Any) -> Any:
    return ((x * 1.5 + 0.5).tanh().exp().sqrt().log().maximum(0.25)) * 2.0


def chain_torch(x: Any) -> Any:
    return ((x * 1.5 + 0.5).tanh().exp().sqrt().log().clamp_min(0.25)) * 2.0


def chain_jax(x: Any) -> Any:
    _, jnp = jax_modules()
    return jnp.maximum(jnp.log(jnp.sqrt(jnp.exp(jnp.tanh(x * 1.5 + 0.5)))), 0.25) * 2.0


def _jax_chain_rows(x: np.ndarray, want: np.ndarray, rtol: float, budget: Budget) -> list[Row]:
    """jax.jit rows for 3a (result left on the device) and 3b (``np.asarray`` of it)."""
    names = ("jax.jit", "jax.jit (np.asarray)")
    try:
        fn, xj = jax_jit(chain_jax), jax_put(x)
    except Exception as exc:  # noqa: BLE001
        return [failed(name, exc) for name in names]
    return [
        attempt(
            names[0], _timed(lambda: fn(xj).block_until_ready(), np.asarray, want, rtol, budget)
        ),
        attempt(names[1], _timed(lambda: np.asarray(fn(xj)), _identity, want, rtol, budget)),
    ]


def _raw_chain_rows(x: np.ndarray, want: np.ndarray, rtol: float, budget: Budget) -> list[Row]:
    """Raw IREE rows for 3a (result not read) and 3b (``.to_host()``)."""
    names = ("raw IREE (hand-written StableHLO)", "raw IREE (.to_host())")
    try:
        module = RawIreeModule(raw_chain_text(CHAIN_N))
        xd = module.put(x)
    except Exception as exc:  # noqa: BLE001
        return [failed(name, exc) for name in names]
    return [
        attempt(names[0], _timed(lambda: module(xd), lambda r: r.to_host(), want, rtol, budget)),
        attempt(names[1], _timed(lambda: module(xd).to_host(), _identity, want, rtol, budget)),
    ]


def bench_chain(budget: Budget) -> list[Bench]:
    title = "3{}. 8-op elementwise chain on 16M float32 ({}), resident input"
    ops = "mul, add, tanh, exp, sqrt, log, maximum, mul"
    resident = Bench(
        "chain",
        title.format("a", "result left on the device"),
        "ms",
        target=">= 2.0x jax.jit speed and >= 0.9x raw IREE speed",
    )
    readback = Bench(
        "chain_readback",
        title.format("b", "result read back to NumPy"),
        "ms",
        throughput_unit="GB/s",
    )
    resident.throughput_unit = "GB/s"
    resident.notes.append(f"ops: {ops}; speed ratio = peer time / vkml cpu time.")
    (x,) = _inputs((CHAIN_N,))
    want = chain_numpy(x)
    rtol = 1e-5
    moved = 2.0 * x.nbytes  # the input read once and the result written once

    def realized(device: vkml.Device) -> Timing:
        xt = vkml.tensor(x, device=device).realize()
        return _timed(lambda: chain_vkml(xt).realize(), _vk_numpy, want, rtol, budget)()

    def read_back(device: vkml.Device) -> Timing:
        xt = vkml.tensor(x, device=device).realize()
        return _timed(lambda: chain_vkml(xt).numpy(), _identity, want, rtol, budget)()

    vulkan = vulkan_rows()
    resident.rows += [
        attempt("vkml cpu, .realize()", lambda: realized(vkml.cpu), work=moved),
        vulkan.row(", .realize()", realized, work=moved),
    ]
    readback.rows += [
        attempt("vkml cpu, .numpy()", lambda: read_back(vkml.cpu), work=moved),
        vulkan.row(", .numpy()", read_back, work=moved),
    ]
    mib = x.nbytes >> 20
    bandwidth_note = (
        f"GB/s (vkml rows) = the chain's {mib} MiB input read plus its {mib} MiB result "
        "written, / median (1 GB = 1e9 bytes; intermediates not counted): an effective rate "
        "over the bytes the chain must move, not a measure of the memory's limit."
    )
    resident.notes += [bandwidth_note, vulkan.about]
    readback.notes.append(f"GB/s and the {VULKAN} row: as in 3a.")

    host_rows = [attempt("numpy", _timed(lambda: chain_numpy(x), _identity, want, rtol, budget))]

    def torch_eager() -> Timing:
        t = torch_module().from_numpy(x)
        return _timed(lambda: chain_torch(t), lambda r: r.numpy(), want, rtol, budget)()

    def torch_compile() -> Timing:
        t = torch_module().from_numpy(x)
        fn = torch_compiled(chain_torch)
        return _timed(lambda: fn(t), lambda r: r.numpy(), want, rtol, budget)()

    host_rows.append(attempt("torch eager", torch_eager))
    host_rows.append(attempt("torch.compile", torch_compile))
    for row in host_rows:
        resident.rows.append(row)
        readback.rows.append(
            Row(
                row.name,
                row.timing,
                row.unavailable,
                "same run as 3a: the result is already a host array",
            )
        )

    for pair in (_jax_chain_rows(x, want, rtol, budget), _raw_chain_rows(x, want, rtol, budget)):
        resident.rows.append(pair[0])
        readback.rows.append(pair[1])
    vk = resident.rows[0].timing
    jax_row, raw_row = resident.rows[-2].timing, resident.rows[-1].timing
    if vk is None or jax_row is None or raw_row is None:
        resident.verdict = "n/a (vkml or a peer failed)"
    else:
        vs_jax, vs_raw = jax_row.median / vk.median, raw_row.median / vk.median
        resident.measured = f"{vs_jax:.2f}x jax.jit, {vs_raw:.2f}x raw IREE"
        resident.verdict = _verdict(vs_jax >= 2.0 and vs_raw >= 0.9)
    return [resident, readback]


# --- 4. sum -----------------------------------------------------------------------------------

SUM_N = 1 << 24


def bench_sum(budget: Budget) -> list[Bench]:
    bench = Bench(
        "sum",
        "4. sum of 16M float32 to a Python float, resident input",
        "ms",
        target="none (context)",
        verdict="no target",
    )
    bench.notes.append(
        "The note gives each result's relative error against a float64 sum: "
        "summation order differs between implementations."
    )
    (x,) = _inputs((SUM_N,))
    want = float(np.sum(x, dtype=np.float64))

    def row(name: str, make: Callable[[], Callable[[], float]]) -> Row:
        error: list[float] = []

        def measure() -> Timing:
            fn = make()
            error.append(abs(fn() - want) / abs(want))
            return time_calls(fn, budget, warmup=2)

        result = attempt(name, measure)
        if error:
            wrong = " (WRONG: over 1e-3)" if error[0] > 1e-3 else ""
            result.note = f"relative error {error[0]:.1e}{wrong}"
        return result

    def vk() -> Callable[[], float]:
        xt = vkml.tensor(x).realize()
        return lambda: xt.sum().item()

    def torch_eager() -> Callable[[], float]:
        t = torch_module().from_numpy(x)
        return lambda: float(t.sum())

    def torch_compile() -> Callable[[], float]:
        torch = torch_module()
        t, fn = torch.from_numpy(x), torch_compiled(lambda v: torch.sum(v))
        return lambda: float(fn(t))

    def jax_sum() -> Callable[[], float]:
        _, jnp = jax_modules()
        fn, xj = jax_jit(jnp.sum), jax_put(x)
        return lambda: float(fn(xj))

    def raw_sum() -> Callable[[], float]:
        module = RawIreeModule(raw_sum_text(SUM_N))
        xd = module.put(x)
        return lambda: float(module(xd).to_host())

    bench.rows = [
        row("vkml (pairwise tree)", vk),
        row("numpy.sum", lambda: lambda: float(x.sum())),
        row("torch.sum", torch_eager),
        row("torch.compile(torch.sum)", torch_compile),
        row("jax.jit(jnp.sum)", jax_sum),
        row("raw IREE (stablehlo.reduce)", raw_sum),
    ]
    return [bench]


# --- 5. matmul --------------------------------------------------------------------------------

MATMUL_N = 1024


def bench_matmul(budget: Budget) -> list[Bench]:
    n = MATMUL_N
    flops = 2.0 * n**3
    bench = Bench(
        "matmul",
        f"5. {n}x{n} @ {n}x{n} float32 matmul, resident inputs",
        "ms",
        target="vkml >= 0.8x NumPy GFLOP/s",
        throughput_unit="GFLOP/s",
    )
    a, b = _inputs((n, n), (n, n))
    want = a.astype(np.float64) @ b.astype(np.float64)
    rtol = 1e-4
    at, bt = vkml.tensor(a).realize(), vkml.tensor(b).realize()
    bench.rows.append(
        attempt(
            "vkml",
            _timed(lambda: (at @ bt).realize(), lambda r: r.numpy(), want, rtol, budget),
            work=flops,
        )
    )
    bench.rows.append(
        attempt("numpy", _timed(lambda: a @ b, _identity, want, rtol, budget), work=flops)
    )

    def torch_mm() -> Timing:
        torch = torch_module()
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return _timed(lambda: ta @ tb, lambda r: r.numpy(), want, rtol, budget)()

    def jax_mm() -> Timing:
        _, jnp = jax_modules()
        fn, aj, bj = jax_jit(jnp.matmul), jax_put(a), jax_put(b)
        return _timed(lambda: fn(aj, bj).block_until_ready(), np.asarray, want, rtol, budget)()

    def raw_mm() -> Timing:
        module = RawIreeModule(raw_matmul_text(n, n, n))
        ad, bd = module.put(a), module.put(b)
        return _timed(lambda: module(ad, bd), lambda r: r.to_host(), want, rtol, budget)()

    bench.rows.append(attempt("torch eager", torch_mm, work=flops))
    bench.rows.append(attempt("jax.jit", jax_mm, work=flops))
    bench.rows.append(attempt("raw IREE (stablehlo.dot_general)", raw_mm, work=flops))
    bench.notes.append("torch.compile is left out: it calls the same extern mm as eager.")
    vk, ref = bench.rows[0], bench.row("numpy")
    if vk.timing is not None and ref is not None and ref.timing is not None:
        speed = ref.timing.median / vk.timing.median
        bench.measured = f"{flops / vk.timing.median / 1e9:.1f} GFLOP/s = {speed:.2f}x NumPy"
        bench.verdict = _verdict(speed >= 0.8)
    return [bench]


CASES: dict[str, Callable[[Budget], list[Bench]]] = {
    "build": bench_build,
    "small": bench_small_realize,
    "chain": bench_chain,
    "sum": bench_sum,
    "matmul": bench_matmul,
}
