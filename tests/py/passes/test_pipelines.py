"""``vkml/passes/pipelines.py``: the pass orders are data, and every name in them is a pass
of the registry, in the order each target runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vkml.passes import pipelines
from vkml.passes.registry import PASSES


def test_every_pass_a_pipeline_names_is_registered() -> None:
    named = {*pipelines.PIPELINE, *pipelines.VULKAN_PASSES, *pipelines.LOOP_CAP_PASSES}
    named.add(pipelines.ISOLATE_RELAYOUTS)
    assert named <= set(PASSES)
    assert set(PASSES) <= named  # and no registered pass is left out of every pipeline
    for name, module in PASSES.items():
        assert module.ARGUMENT == name


def test_the_orders_per_target() -> None:
    assert pipelines.pipeline_for("llvm-cpu") == pipelines.PIPELINE
    vulkan = pipelines.pipeline_for("vulkan-spirv")
    assert vulkan[-1] == "vkml-verify-nan-semantics"
    assert vulkan.index("vkml-exact-divide") < vulkan.index("vkml-vulkan-nan")
    capped = pipelines.pipeline_for("vulkan-spirv", loop_cap=65535)
    first = len(pipelines.LOOP_CAP_PASSES)
    assert capped[:first] == pipelines.LOOP_CAP_PASSES and capped[first:] == vulkan
    # the recompile of a racy Vulkan module isolates transposes before the last passes
    isolated = pipelines.pipeline_for("vulkan-spirv", isolate_relayouts=True)
    assert isolated.index(pipelines.ISOLATE_RELAYOUTS) < isolated.index(pipelines.LAST[0])
    assert set(isolated) - set(vulkan) == {pipelines.ISOLATE_RELAYOUTS}
    assert pipelines.ISOLATE_RELAYOUTS not in pipelines.pipeline_for("llvm-cpu")
    assert "vkml-unify-equal-operands" in pipelines.PIPELINE
    # integer reductions are trees on every target (IREE's llvm-cpu miscompiles a native one)
    for passes in (pipelines.PIPELINE, vulkan, capped):
        assert "vkml-pairwise-integer-reductions" in passes


def test_the_orders_are_read_without_the_compiler() -> None:
    code = (
        "import sys; import vkml.passes.pipelines; "
        "print(any(m.startswith('iree.compiler') for m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


def test_every_pass_is_one_file_with_its_lit_test() -> None:
    # a pass is one module of vkml/passes/ named after it, and its IR is pinned by a lit test
    # named after its argument (issue 34; two passes had none)
    root = Path(__file__).resolve().parents[3]
    for argument, module in PASSES.items():
        assert Path(module.__file__ or "").stem == argument.removeprefix("vkml-").replace("-", "_")
        assert (root / "tests" / "lit" / "passes" / f"{argument}.mlir").is_file(), argument
