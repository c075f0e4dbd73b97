"""vkml/dialect/ir.py: the one door to ``iree.compiler``."""

from __future__ import annotations

import importlib.machinery
from typing import Any

import pytest

from vkml.dialect.ir import ir, parse_module


def test_walking_stablehlo_ops_does_not_search_the_import_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MLIR's bindings ask for a Python module of an op's dialect each time they wrap an op;
    IREE has none for stablehlo, and each miss searched sys.path again (7,839 searches,
    ~0.65 s, in the passes of a 100-step bounded builder loop)."""
    adds = "\n".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : tensor<f32>" for i in range(200))
    text = f"func.func @main(%0: tensor<f32>) -> tensor<f32> {{\n{adds}\n  return %200 : tensor<f32>\n}}"
    searches: list[str] = []
    real = importlib.machinery.PathFinder.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        searches.append(name)
        return real(name, *args, **kwargs)

    with ir.Context() as context:
        module = parse_module(text, context)
        (func,) = module.body.operations
        block = func.regions[0].blocks[0]
        [op.operation.name for op in block.operations]  # the first walk imports what exists
        monkeypatch.setattr(importlib.machinery.PathFinder, "find_spec", find_spec)
        names = [op.operation.name for op in block.operations]
    assert names.count("stablehlo.add") == 200
    assert searches == []
