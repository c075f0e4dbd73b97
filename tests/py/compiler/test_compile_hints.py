"""The wide-fusion hint: a module with vkml's float64 argument reduction is compiled for cpu
with IREE's aggressive fusion (one dispatch instead of about ten), and again without it when
IREE fails with the flag."""

from __future__ import annotations

import numpy as np
import pytest

import vkml
from vkml.compiler import compile as compile_module
from vkml.compiler.lower import emitted_mlir
from vkml.compiler.target import CPU_TARGET
from vkml.dialect.compile_hints import WIDE_FUSION
from vkml.errors import CompileError

X = np.linspace(-4.0, 4.0, 7)


def test_only_the_trigonometric_reduction_leaves_the_hint() -> None:
    x = vkml.tensor(X)
    assert WIDE_FUSION in emitted_mlir([vkml.sin(x).node])
    assert WIDE_FUSION in emitted_mlir([vkml.cos(x.astype(vkml.float32)).node])
    assert WIDE_FUSION not in emitted_mlir([vkml.exp(x).node, (x * 2.0).node])


def _calls(monkeypatch: pytest.MonkeyPatch, fail_with_flag: bool) -> list[list[str]]:
    seen: list[list[str]] = []
    real = compile_module._iree

    def spy(text: str, target: object, extra: list[str]) -> bytes:
        seen.append(list(extra))
        if fail_with_flag and compile_module.AGGRESSIVE_FUSION in extra:
            raise CompileError("IREE failed (as it did with the flag on a StandardScaler module)")
        return real(text, target, extra)  # type: ignore[arg-type]

    monkeypatch.setattr(compile_module, "_iree", spy)
    return seen


@pytest.mark.parametrize("fails", [False, True])
def test_the_flag_is_asked_for_and_dropped_if_iree_fails(
    monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    text = emitted_mlir([vkml.sin(vkml.tensor(X)).node])
    seen = _calls(monkeypatch, fails)
    assert compile_module.run_pipeline(text, CPU_TARGET)
    flag = [compile_module.AGGRESSIVE_FUSION]
    assert seen == ([flag, []] if fails else [flag])
    plain = emitted_mlir([vkml.exp(vkml.tensor(X)).node])
    seen.clear()
    compile_module.run_pipeline(plain, CPU_TARGET)
    assert seen == [[]]
