"""A tensor keeps its node: the only assignment to ``_node`` outside ``TensorBase.__init__``
is ``TensorBase._rebind``, which nn uses for the handles it updates in place."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import vkml

PACKAGE = Path(vkml.__file__).parent


def test_only_the_base_class_assigns_a_node() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else ([node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            )
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr == "_node":
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert len(found) == 2 and all(f.startswith("frontend/base.py:") for f in found), found


def test_an_optimiser_step_rebinds_parameters_it_does_not_copy_them() -> None:
    layer = vkml.nn.Linear(2, 1, key=vkml.random.key(0))
    opt = vkml.nn.SGD(layer.parameters(), lr=0.1)
    weight, before = layer.weight, layer.weight.numpy()
    x = vkml.tensor(np.ones((4, 2), np.float32))
    opt.step(lambda: (layer(x) ** 2.0).mean())
    assert layer.weight is weight and not np.array_equal(weight.numpy(), before)
