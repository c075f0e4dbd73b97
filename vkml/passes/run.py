"""Running vkml's passes over MLIR text, in order, as one MLIR pass manager."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vkml.dialect.ir import ir, parse_module, passmanager
from vkml.errors import CompileError
from vkml.passes.registry import PASSES, PIPELINE

# Pass options by pass name, as keyword arguments of its ``run``.
PassOptions = Mapping[str, Mapping[str, Any]]


def run_passes(
    text: str, names: Sequence[str] = PIPELINE, options: PassOptions | None = None
) -> str:
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
