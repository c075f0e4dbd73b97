"""MLIR text -> vkml passes -> IREE compiler -> ``.vmfb`` bytes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vkml.dialect.ir import CompilerToolError, compile_str, ir, parse_module, passmanager
from vkml.errors import CompileError
from vkml.passes.registry import PASSES, PIPELINE, pipeline_for
from vkml.passes.target import Target


def run_passes(text: str, names: Sequence[str] = PIPELINE) -> str:
    """Run the named vkml passes over MLIR ``text`` and return the rewritten text.

    Raises:
        CompileError: the text does not parse or a pass fails; the message carries MLIR's
            diagnostics.
    """
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise CompileError(f"unknown pass {unknown[0]!r}; known passes: {', '.join(PASSES)}")
    with ir.Context() as context:
        try:
            module = parse_module(text, context)
        except ir.MLIRError as exc:
            raise CompileError(f"the MLIR does not parse: {exc}") from exc
        if names:
            manager = passmanager.PassManager("builtin.module")
            for name in names:
                manager.add(_as_pass(PASSES[name].run), name, argument=name)
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
    """Run the vkml pipeline for the target's backend, then IREE, over ``text``; return the
    ``.vmfb`` bytes."""
    rewritten = run_passes(text, pipeline_for(target.backend))
    try:
        return bytes(
            compile_str(
                rewritten,
                target_backends=[target.backend],
                input_type="stablehlo",
                extra_args=list(target.flags),
            )
        )
    except CompilerToolError as exc:
        raise CompileError(f"IREE could not compile for {target.name}: {exc}") from exc
