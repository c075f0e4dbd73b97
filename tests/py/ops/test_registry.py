"""The op registry (``vkml.ops.registry.OPS``) is complete: every op is defined whole, every
table derived from it is current, and every op a Vulkan module can hold has a NaN decision.

A half-added op fails here, in ``make test``, not at its first realize. What else each op
needs is checked where the op's behaviour is: ``programs()`` of test_ops_vs_reference exercises
every op against the reference device, and test_autograd gives every op with a gradient rule
a finite-difference case."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vkml
from vkml.ops.registry import FAMILIES, OPS
from vkml.ops.spec import INPUTS, OpDef, ShapeRule
from vkml.passes import vulkan_nan
from vkml.passes.registry import pipeline_for
from vkml.passes.run import run_passes

ROOT = Path(__file__).resolve().parents[3]
from support import op_programs as ops_test


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_is_defined_whole(name: str) -> None:
    d = OPS[name]
    assert d.name == name
    assert callable(d.emit), f"{name}: no emitter"
    assert callable(d.reference), f"{name}: no reference implementation"
    assert isinstance(d.rule, ShapeRule) and d.inputs in INPUTS
    assert d.bit_exact or d.ulp > 0 or d.bound, f"{name}: neither bit-exact nor a bound"
    assert d.gradient is None or callable(d.gradient)


def test_every_family_defines_its_ops_once() -> None:
    names = [n for defs in FAMILIES.values() for n in defs]
    assert len(names) == len(set(names)) == len(OPS)


def _operands(d: OpDef) -> tuple[vkml.Tensor, ...]:
    x = vkml.tensor(np.array([[0.25, -1.5, 2.0], [3.0, 0.5, -0.0]], np.float32))
    if d.inputs == "integer":
        x = vkml.tensor(np.array([[5, 3, 12], [1, 0, 7]], np.int32))
    return (x, x[::-1]) if d.rule.operands == "promoted" else (x,)


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.spelling))
def test_a_spelled_op_is_its_function_and_methods_with_its_doc(name: str) -> None:
    d = OPS[name]
    assert d.spelling is not None
    function = getattr(vkml, d.spelling.function)
    assert function.__doc__ == d.spelling.doc
    assert d.spelling.function in vkml.__all__
    operands = _operands(d)
    want = function(*operands).numpy()
    for m in d.spelling.methods:
        method = getattr(vkml.Tensor, m)
        assert method.__doc__ == d.spelling.doc
        np.testing.assert_array_equal(method(*operands).numpy(), want)
    assert function(*operands).node.op == name


def test_the_generated_files_are_current() -> None:
    """Methods, functions, ``vkml/__init__`` and the contract table in docs/contracts.md are
    written from the registry by scripts/generate_ops.py; its check fails if one is stale."""
    run = subprocess.run(
        [sys.executable, "scripts/generate_ops.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_contract_table_names_every_op_with_its_bound() -> None:
    text = (ROOT / "docs/contracts.md").read_text()
    for name, d in OPS.items():
        row = re.search(rf"^\| `{re.escape(name)}` \|.*$", text, re.MULTILINE)
        assert row, f"docs/contracts.md has no row for {name}"
        assert ("bit-exact" in row[0]) == d.bit_exact, row[0]
        if not d.bit_exact:
            assert (f"{d.ulp} ULP" if d.ulp else d.bound) in row[0], row[0]


def _vulkan_ops(dtype: str) -> dict[str, set[str]]:
    """stablehlo/chlo op name -> the vkml ops whose Vulkan module holds it, on ``dtype``."""
    seen: dict[str, set[str]] = {}
    vulkan = pipeline_for("vulkan-spirv")
    for op, program in ops_test.programs(dtype).values():
        tensors = {k: vkml.tensor(v) for k, v in ops_test.inputs(dtype).items()}
        text = run_passes(vkml.emit_mlir(program(tensors)), vulkan)
        for found in re.findall(r'"?((?:stablehlo|chlo)\.\w+)"?', text):
            seen.setdefault(found, set()).add(op)
    return seen


@pytest.mark.parametrize("dtype", ops_test.FLOATS)
def test_every_op_in_a_vulkan_module_has_a_nan_decision(dtype: str) -> None:
    """Each MLIR op vkml's emitters write is rewritten by vkml-vulkan-nan (``_RULES``, float
    compares) or declared NaN-transparent by it, so a driver that assumes no NaN cannot turn a
    NaN into a number (ADR 0010). Adding ``floor`` without its rule fails here."""
    known = set(vulkan_nan._RULES) | vulkan_nan.NAN_TRANSPARENT | {"stablehlo.compare"}
    undecided = {name: sorted(ops) for name, ops in _vulkan_ops(dtype).items() if name not in known}
    assert undecided == {}, f"no NaN decision in vkml/passes/vulkan_nan.py for {undecided}"


def test_the_nan_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(vulkan_nan._RULES, "stablehlo.floor")
    known = set(vulkan_nan._RULES) | vulkan_nan.NAN_TRANSPARENT | {"stablehlo.compare"}
    assert "stablehlo.floor" not in known and "stablehlo.floor" in _vulkan_ops("float32")
