"""A tensor keeps its node: the only assignments to ``_node`` are the constructors
(``TensorBase``'s and ``Tensor``'s, which spells it out for speed) and ``TensorBase._rebind``,
which nn uses for the handles it updates in place."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import vkml

PACKAGE = Path(vkml.__file__).parent


def test_only_the_constructors_and_rebind_assign_a_node() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else ([node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
                )
                for t in targets:
                    if isinstance(t, ast.Attribute) and t.attr == "_node":
                        found.append((str(path.relative_to(PACKAGE)), function.name))
    assert sorted(found) == [
        ("frontend/base.py", "__init__"),
        ("frontend/base.py", "_rebind"),
        ("frontend/tensor.py", "__init__"),
    ]


def test_an_optimiser_step_rebinds_parameters_it_does_not_copy_them() -> None:
    layer = vkml.nn.Linear(2, 1, key=vkml.random.key(0))
    opt = vkml.nn.SGD(layer.parameters(), lr=0.1)
    weight, before = layer.weight, layer.weight.numpy()
    x = vkml.tensor(np.ones((4, 2), np.float32))
    opt.step(lambda: (layer(x) ** 2.0).mean())
    assert layer.weight is weight and not np.array_equal(weight.numpy(), before)
