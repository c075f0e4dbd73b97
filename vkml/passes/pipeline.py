"""MLIR text -> vkml passes -> IREE compiler -> ``.vmfb`` bytes."""

from __future__ import annotations

import functools
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vkml.dialect.ir import CompilerToolError, compile_str, ir, parse_module, passmanager
from vkml.errors import CompileError
from vkml.passes import loop_budget, split_contractions
from vkml.passes.registry import PASSES, PIPELINE, pipeline_for
from vkml.passes.target import Target

# Pass options by pass name, as keyword arguments of its ``run``.
PassOptions = Mapping[str, Mapping[str, Any]]


def run_passes(text: str, names: Sequence[str] = PIPELINE, options: PassOptions | None = None) -> str:
    """Run the named vkml passes over MLIR ``text`` and return the rewritten text.

    ``options`` gives a pass keyword arguments for its ``run`` (MLIR's ``name{key=value}``).

    Raises:
        CompileError: the text does not parse or a pass fails; the message carries MLIR's
            diagnostics.
    """
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise CompileError(f"unknown pass {unknown[0]!r}; known passes: {', '.join(PASSES)}")
    options = options or {}
    with ir.Context() as context:
        try:
            module = parse_module(text, context)
        except ir.MLIRError as exc:
            raise CompileError(f"the MLIR does not parse: {exc}") from exc
        if names:
            manager = passmanager.PassManager("builtin.module")
            for name in names:
                run = functools.partial(PASSES[name].run, **options.get(name, {}))
                manager.add(_as_pass(run), name, argument=name)
            try:
                manager.run(module.operation)
            except ir.MLIRError as exc:
                raise CompileError(f"pass pipeline {', '.join(names)} failed: {exc}") from exc
        return str(module)


def _as_pass(run: Callable[[ir.Operation], None]) -> Callable[[ir.Operation, object], None]:
    """Adapt a vkml pass's ``run(module_op)`` to the PassManager callback signature."""

    def apply(op: ir.Operation, pass_: object) -> None:
        run(op)

    return apply


def compile_module(text: str, target: Target) -> bytes:
    """Run the vkml pipeline for the target, then IREE, over ``text``; return the ``.vmfb``
    bytes.

    For a target whose driver caps shader loops, every dispatch's loop budget is checked
    against the cap (``loop_budget``). Long contractions are cut into chunks first
    (``vkml-split-contractions``); how many iterations IREE gives one chunk depends on its
    tiling for the shapes, so when a dispatch is still over the cap and smaller chunks can
    help, the module is compiled again with chunks as many times smaller as needed.

    Raises:
        CompileError: IREE failed, or a dispatch could run past the target's loop cap.
    """
    names = pipeline_for(target.backend, target.loop_cap)
    if target.loop_cap is None:
        return _iree(run_passes(text, names), target, [])
    chunk = split_contractions.CHUNK
    while True:
        options = {split_contractions.ARGUMENT: {"chunk": chunk}}
        rewritten = run_passes(text, names, options)
        with tempfile.TemporaryDirectory(prefix="vkml-loops-") as dump:
            vmfb = _iree(rewritten, target, loop_budget.dump_flags(Path(dump)))
            over = loop_budget.over_budget(Path(dump), target.loop_cap)
        if not over:
            return vmfb
        smaller = _smaller_chunk(chunk, over, target.loop_cap)
        if smaller is None or not split_contractions.splits(text, smaller):
            raise _over_cap_error(over, target)
        chunk = smaller


def _iree(text: str, target: Target, extra_flags: list[str]) -> bytes:
    try:
        return bytes(
            compile_str(text, target_backends=[target.backend], input_type="stablehlo",
                        extra_args=[*target.flags, *extra_flags])
        )  # fmt: skip
    except CompilerToolError as exc:
        raise CompileError(f"IREE could not compile for {target.name}: {exc}") from exc


def _smaller_chunk(chunk: int, over: Sequence[loop_budget.Budget], cap: int) -> int | None:
    """The chunk that brings the worst budget under ``cap`` if the budget scales with it, or
    ``None`` when no chunk would (an unbounded loop, or the chunk is as small as it goes)."""
    if any(b.iterations is None for b in over):
        return None
    worst = max(b.iterations for b in over if b.iterations is not None)
    smaller = chunk >> math.ceil(math.log2(worst / cap))
    return smaller if smaller >= split_contractions.MIN_CHUNK else None


def _over_cap_error(over: Sequence[loop_budget.Budget], target: Target) -> CompileError:
    worst = over[0]
    runs = "an unbounded number of" if worst.iterations is None else f"{worst.iterations:,}"
    more = f" ({len(over) - 1} more dispatches over the cap)" if len(over) > 1 else ""
    return CompileError(
        f"dispatch {worst.function} could run {runs} loop iterations per shader invocation "
        f"on {target.name}, whose driver silently stops a shader after {target.loop_cap:,} "
        f"(loop trip counts {list(worst.loops)}){more}; vkml refuses to run it rather than "
        f"return a wrong answer. Realize this graph on another device, e.g. "
        f"vkml.tensor(t.numpy(), device=vkml.cpu), and report the graph to vkml: its "
        f"lowering should have kept the loop short"
    )
