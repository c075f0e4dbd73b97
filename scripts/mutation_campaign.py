#!/usr/bin/env python3
"""Mutation campaign: break vkml's passes and emitters on purpose, one mutant at a time, and
check that the tests notice.

Each mutant is a text substitution in one source file plus the tests that should kill it.
The campaign copies the package and the tests into a scratch directory, applies one mutant,
runs those tests there (the copy shadows the installed package through PYTHONPATH, and the
compile cache key hashes the mutated pass and emitter sources, so nothing stale is reused),
and prints a table: mutant, killed or survived. A survivor means a missing test.

    python scripts/mutation_campaign.py            # every mutant
    python scripts/mutation_campaign.py --only pad  # mutants whose name contains "pad"
    python scripts/mutation_campaign.py --list

Exit status 1 when any mutant survives (or cannot be applied: the source moved on and the
mutant must be updated).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository root
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]  # pytest node ids or paths, relative to the root
    lit: bool = False  # also run the lit suite


OPS = "tests/py/frontend/test_ops_vs_reference.py"
PAIRWISE = "tests/py/passes/test_pairwise_reductions.py"
RANDOM = "tests/py/frontend/test_random_graphs.py"
GEMM = "tests/py/frontend/test_gemm_contract.py"
VIEWS = "tests/py/frontend/test_views.py"
SOFT = "tests/py/passes/test_soft_f16.py"
NAN = "tests/py/passes/test_nan_semantics.py"
RNG = "tests/py/frontend/test_random.py"
# skips where no Vulkan device exists; lit's emit/vulkan.py still sees the missing fences there
VULKAN = "tests/py/frontend/test_vulkan_contracts.py"

MUTANTS: tuple[Mutant, ...] = (
    # -- vkml-pairwise-reductions and the tree it emits ----------------------------------
    Mutant(
        "pairwise: pair neighbouring blocks instead of block r with r + half",
        "vkml/dialect/pairwise.py",
        "parts = [combine(b, parts[i], parts[i + h]) for i in range(h)]",
        "parts = [combine(b, parts[2 * i], parts[2 * i + 1]) for i in range(h)]",
        (PAIRWISE,),
        lit=True,
    ),
    Mutant(
        "pairwise: pad with +0.0 instead of -0.0",
        "vkml/dialect/pairwise.py",
        "total = pairwise_reduce(b, x, dims, add, -0.0 if x.dtype.is_float else 0)",
        "total = pairwise_reduce(b, x, dims, add, 0.0 if x.dtype.is_float else 0)",
        (PAIRWISE, OPS),
    ),
    Mutant(
        "pairwise: drop the init value",
        "vkml/dialect/pairwise.py",
        'return b.binary("add", total, b.broadcast(init, kept_shape))',
        "return total",
        (PAIRWISE, "tests/py/frontend/test_bad_input.py"),
        lit=True,
    ),
    Mutant(
        "pairwise: flatten the reduced axes in the wrong order",
        "vkml/dialect/pairwise.py",
        "y = b.reshape(b.transpose(x, dims + kept), (n, *kept_shape))",
        "y = b.reshape(b.transpose(x, dims[::-1] + kept), (n, *kept_shape))",
        (PAIRWISE,),
    ),
    Mutant(
        "pass: leave sums to IREE (pass matches nothing)",
        "vkml/passes/pairwise_reductions.py",
        '    return reduce_combiner(op) == "add" and '
        "tensor_type_of(op.operands[0].type).dtype.is_float",
        "    return False",
        (PAIRWISE,),
        lit=True,
    ),
    Mutant(
        "emitter: sum starts from +0.0 (a sum of -0.0 becomes +0.0)",
        "vkml/ops/emitters/reduce.py",
        "init = b.constant(-0.0 if acc.is_float and not empty else 0, acc)",
        "init = b.constant(0, acc)",
        (OPS, PAIRWISE, "tests/py/frontend/test_bad_input.py"),
        lit=True,
    ),
    Mutant(
        "emitter: mean divides by n - 1",
        "vkml/ops/emitters/reduce.py",
        'b.constant(attrs["divisor"], acc)',
        'b.constant(attrs["divisor"] - 1, acc)',
        (OPS, PAIRWISE),
    ),
    # -- NaN and signed-zero semantics -----------------------------------------------------
    Mutant(
        "max: swallow NaN (drop the x != x check), like maxnumf",
        "vkml/dialect/numerics.py",
        '    keep = b.compare("GE", x, y)\n    if x.dtype.is_float:\n'
        '        keep = b.binary("or", keep, b.compare("NE", x, x))',
        '    keep = b.compare("GE", x, y)',
        (OPS, NAN),
    ),
    Mutant(
        "max: native stablehlo.maximum instead of compare/select",
        "vkml/ops/elementwise.py",
        'OpDef("maximum", rules.binary, emit.select_binary(select_max),',
        'OpDef("maximum", rules.binary, emit.arith("maximum"),',
        (OPS, RANDOM, NAN),
        lit=True,
    ),
    Mutant(
        "relu: strict < 0 (relu(-0.0) keeps the sign)",
        "vkml/ops/emitters/common.py",
        'return b.select(b.compare("LE", x, zero), zero, x)',
        'return b.select(b.compare("LT", x, zero), zero, x)',
        (OPS, NAN),
    ),
    Mutant(
        "relu: select(x > 0, x, 0) swallows NaN",
        "vkml/ops/emitters/common.py",
        'return b.select(b.compare("LE", x, zero), zero, x)',
        'return b.select(b.compare("GT", x, zero), x, zero)',
        (OPS, NAN),
        lit=True,
    ),
    Mutant(
        "argmax: NaN is not the maximum",
        "vkml/ops/emitters/reduce.py",
        '            hit = b.binary("or", hit, both_nan)',
        "            pass",
        (OPS, NAN),
    ),
    Mutant(
        "argmax: last index of the maximum instead of the first",
        "vkml/ops/emitters/reduce.py",
        'first = b.reduce(candidates, (axis,), "minimum", b.constant(x.shape[axis], int64))',
        "first = b.reduce(b.select(hit, index, b.broadcast(b.constant(-1, int64), x.shape)), "
        '(axis,), "maximum", b.constant(-1, int64))',
        (OPS,),
    ),
    # -- contraction -------------------------------------------------------------------------
    Mutant(
        "matmul: accumulate 16-bit inputs in their own type",
        "vkml/ops/emitters/common.py",
        "    acc = compute_dtype(out.dtype)\n    # a product over one element",
        "    acc = out.dtype\n    # a product over one element",
        (GEMM,),
        lit=True,
    ),
    Mutant(
        "matmul: drop HIGHEST precision",
        "vkml/dialect/structural.py",
        ', precision = [HIGHEST, HIGHEST] : "',
        ' : "',
        (GEMM,),
        lit=True,
    ),
    # -- views and data movement ---------------------------------------------------------
    Mutant(
        "slice: off by one at the end",
        "vkml/frontend/views.py",
        "hi = lo + (count - 1) * st + 1 if count else lo",
        "hi = lo + (count - 1) * st if count else lo",
        (VIEWS, OPS),
    ),
    Mutant(
        "slice: negative steps forget to reverse",
        "vkml/ops/emitters/common.py",
        'x = b.reverse(xs[0], attrs["reverse"])',
        "x = xs[0]",
        (VIEWS, OPS),
    ),
    Mutant(
        "broadcast: align leading instead of trailing dimensions",
        "vkml/dialect/function_body.py",
        'dims = ", ".join(str(offset + i) for i in range(len(v.shape)))',
        'dims = ", ".join(str(i) for i in range(len(v.shape)))',
        (OPS, RANDOM),
        lit=True,
    ),
    Mutant(
        # (Replacing the compare by stablehlo.convert is an equivalent mutant on llvm-cpu,
        # whose f32 -> i1 convert is already x != 0, NaN included; it matters on other targets.)
        "cast: to bool means x > 0 instead of x != 0",
        "vkml/dialect/run_time_fence.py",
        '            return self.compare("NE", v, zero)',
        '            return self.compare("GT", v, zero)',
        (OPS,),
    ),
    # -- vkml-soft-f16 -------------------------------------------------------------------
    Mutant(
        "soft-f16: round half up instead of half to even",
        "vkml/passes/soft_f16.py",
        'biased = b.binary("add", b.binary("add", v, below_half), odd)',
        'biased = b.binary("add", b.binary("add", v, below_half), _const(b, v, 1))',
        (SOFT,),
    ),
    Mutant(
        "soft-f16: flush float16 subnormals to zero",
        "vkml/passes/soft_f16.py",
        "_F16_MIN_NORMAL)), subnormal, normal)",
        "_F16_MIN_NORMAL)), const_like(b, a, 0), normal)",
        (SOFT,),
    ),
    Mutant(
        "soft-f16: NaN payload may become zero (NaN turns into infinity)",
        "vkml/passes/soft_f16.py",
        'payload = b.binary("maximum", and_mask(b, kept, 0x3FF), const_like(b, kept, 1))',
        "payload = and_mask(b, kept, 0x3FF)",
        (SOFT,),
    ),
    Mutant(
        "soft-f16: no clamp at infinity (overflow wraps into NaN patterns)",
        "vkml/passes/soft_f16.py",
        'normal = b.binary("minimum", _round_shift(b, rebiased, lsb, 13), '
        "const_like(b, a, _F16_INF))",
        "normal = _round_shift(b, rebiased, lsb, 13)",
        (SOFT,),
    ),
    Mutant(
        "soft-f16: float64 sources rounded twice (no round-to-odd)",
        "vkml/passes/soft_f16.py",
        'bits = b.select(inexact, b.binary("or", bits, const_like(b, bits, 1)), bits)',
        "bits = bits",
        (SOFT,),
    ),
    Mutant(
        "soft-f16: pass left out of the pipeline",
        "vkml/passes/pipelines.py",
        '    "vkml-soft-f16",\n',
        "",
        (SOFT,),
        lit=True,
    ),
    Mutant(
        # (bool to int keeps its select: a Vulkan matmul read a converted bool as -1)
        "cast: bool to float by convert (IREE's llvm-cpu folds float(b) * inf to 0)",
        "vkml/dialect/run_time_fence.py",
        '        if v.dtype.kind == "bool":',
        '        if v.dtype.kind == "bool" and not dtype.is_float:',
        ("tests/py/frontend/test_regressions.py",),
    ),
    # -- Threefry-2x32 (vkml.random) -------------------------------------------------------
    Mutant(
        "threefry: last rotation constant 23 instead of 24",
        "vkml/frontend/random.py",
        "ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)",
        "ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 23)",
        (RNG,),
    ),
    Mutant(
        "threefry: key injection skips the first word",
        "vkml/frontend/random.py",
        "            x0 = x0 + schedule[i % 3]",
        "            x0 = x0",
        (RNG,),
    ),
    Mutant(
        "threefry: counters start at 1 instead of 0",
        "vkml/frontend/random.py",
        "c1 = arange(n, dtype=uint32, device=key.device)",
        "c1 = arange(1, n + 1, dtype=uint32, device=key.device)",
        (RNG,),
    ),
    Mutant(
        "multiply: no fence, so LLVM fuses multiply-add into an FMA",
        "vkml/dialect/run_time_fence.py",
        '        if name == "multiply" and a.dtype.is_float and a.dtype.bits >= 32:',
        "        if False:",
        ("tests/py/frontend/test_fma_contraction.py",),
        lit=True,
    ),
    # -- Vulkan: no float op folded with the next (ADR 0009) --------------------------------
    Mutant(
        "vulkan: no float fences, so the driver reassociates (x + 0.5) - 0.25",
        "vkml/dialect/run_time_fence.py",
        "        self.fence_float_ops = fence_float_ops",
        "        self.fence_float_ops = False",
        (VULKAN,),
        lit=True,
    ),
    Mutant(
        "vulkan: literals left visible, so the driver folds x * 0.0 to 0",
        "vkml/dialect/run_time_fence.py",
        "        if not self.is_static(v) or not fenceable(v.dtype):",
        "        if True:",
        (VULKAN,),
        lit=True,
    ),
    Mutant(
        "vulkan: subtrahend not made distinct, so the driver folds x - x to 0",
        "vkml/dialect/run_time_fence.py",
        '            b = self._opaque(b) if name == "subtract" else self._hide(b)',
        "            b = self._hide(b)",
        (VULKAN,),
        lit=True,
    ),
    Mutant(
        "vulkan: a view of a constant left visible, so the driver folds x * zeros.T to 0",
        "vkml/dialect/run_time_fence.py",
        "        if not self.is_static(v) or not fenceable(v.dtype):",
        "        if v.name not in self._literal_of or not fenceable(v.dtype):",
        (VULKAN,),
    ),
    # -- operands of expanded math ops (ADR 0016) -----------------------------------------
    Mutant(
        "exp and kin see a NaN LLVM knows, and fold to 0",
        "vkml/dialect/run_time_fence.py",
        "        if v.dtype.is_float and name not in _ONE_INSTRUCTION:",
        "        if False:",
        ("tests/py/frontend/test_folded_operands.py",),
        lit=True,
    ),
    Mutant(
        "the opaque form as bits or fence, through which LLVM still knows a NaN",
        "vkml/dialect/run_time_fence.py",
        '            mixed = self.emit(f"stablehlo.xor {bits.name}, {fence.name} : {bits.type}", '
        "bits.type)\n            found = self._opaques",
        '            mixed = self.emit(f"stablehlo.or {bits.name}, {fence.name} : {bits.type}", '
        "bits.type)\n            found = self._opaques",
        ("tests/py/frontend/test_folded_operands.py",),
    ),
    # -- float16/bfloat16 arithmetic -------------------------------------------------------
    Mutant(
        "f16: transcendental computed in float16 (no float32 compute)",
        "vkml/dialect/numerics.py",
        "    return float32 if dtype.bits == 16 and dtype.is_float else dtype",
        "    return dtype",
        (OPS, PAIRWISE),
    ),
)


def applicable(m: Mutant) -> str | None:
    """Why the mutant cannot be applied to the current source, or None."""
    text = (ROOT / m.path).read_text(encoding="utf-8")
    count = text.count(m.old)
    if count != 1:
        return f"pattern occurs {count} times in {m.path}"
    missing = [t for t in m.tests if not (ROOT / t.split("::")[0]).exists()]
    if len(missing) == len(m.tests):
        return f"none of its tests exist: {', '.join(missing)}"
    return None


def run_mutant(m: Mutant, scratch: Path, env: dict[str, str], timeout: int) -> tuple[str, float]:
    """Apply ``m`` in a fresh copy under ``scratch``, run its tests; 'killed' or 'survived'."""
    work = scratch / "tree"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(ROOT / "vkml", work / "vkml", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
    target = work / m.path
    target.write_text(target.read_text(encoding="utf-8").replace(m.old, m.new), encoding="utf-8")
    tests = [t for t in m.tests if (work / t.split("::")[0]).exists()]
    env = {**env, "PYTHONPATH": str(work)}
    start = time.perf_counter()
    commands = [[sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]]
    if m.lit:
        commands.append(
            [str(Path(sys.executable).parent / "lit"), "-q", str(work / "tests" / "lit")]
        )
    for cmd in commands:
        try:
            result = subprocess.run(cmd, cwd=work, env=env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "killed (timeout)", time.perf_counter() - start
        if result.returncode != 0:
            return "killed", time.perf_counter() - start
    return "survived", time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the mutants whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per test command")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only in m.name]
    if args.list:
        for m in chosen:
            print(f"{m.name}  [{m.path}]")
        return 0
    env = dict(os.environ)
    env.setdefault("VKML_CACHE_DIR", str(ROOT / ".cache" / "vkml-mutation"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    rows = []
    with tempfile.TemporaryDirectory(prefix="vkml-mutation-") as tmp:
        for i, m in enumerate(chosen, 1):
            problem = applicable(m)
            if problem:
                rows.append((m, f"not applied: {problem}", 0.0))
            else:
                print(f"[{i}/{len(chosen)}] {m.name} ...", file=sys.stderr, flush=True)
                outcome, seconds = run_mutant(m, Path(tmp), env, args.timeout)
                rows.append((m, outcome, seconds))
    killed = sum(r[1].startswith("killed") for r in rows)
    print("| mutant | file | result | seconds |")
    print("|---|---|---|---:|")
    for m, outcome, seconds in rows:
        print(f"| {m.name} | `{m.path}` | {outcome} | {seconds:.0f} |")
    print(f"\nmutation score: {killed}/{len(rows)} killed")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
