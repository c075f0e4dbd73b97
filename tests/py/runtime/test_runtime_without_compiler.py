"""vkml.runtime runs compiled modules on a machine without iree.compiler.

Each test runs a child Python in which ``iree.compiler`` (and everything under it) cannot be
imported, as on a deployment machine with only iree-base-runtime and NumPy installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vkml.frontend.devices import CPU_TARGET
from vkml.passes.pipeline import compile_module

ROOT = Path(__file__).resolve().parents[3]

AFFINE = """module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>) {
    %v0 = stablehlo.multiply %arg0, %arg1 : tensor<4xf32>
    %v1 = stablehlo.add %v0, %arg0 : tensor<4xf32>
    return %v1 : tensor<4xf32>
  }
}
"""

# Runs before anything else in the child: iree.compiler and its submodules cannot be found.
BLOCK_COMPILER = """
import importlib.abc
import sys

sys.modules["iree.compiler"] = None


class BlockCompiler(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "iree.compiler" or name.startswith("iree.compiler."):
            raise ModuleNotFoundError(f"{name} is not installed here", name=name)
        return None


sys.meta_path.insert(0, BlockCompiler())
"""


def _run_without_compiler(body: str, *argv: str) -> subprocess.CompletedProcess[str]:
    script = BLOCK_COMPILER + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script, *argv],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip


def _last_json(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_compiler_blocker_works() -> None:
    proc = _run_without_compiler("""
        try:
            import iree.compiler.tools
        except ImportError:
            print("blocked")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "blocked"


def test_import_runtime_does_not_import_compiler() -> None:
    proc = _run_without_compiler("""
        import json
        import vkml.runtime

        loaded = sorted(m for m in sys.modules if m.startswith("iree.compiler") and sys.modules[m])
        print(json.dumps({"compiler_modules": loaded, "has_executable": hasattr(vkml.runtime, "Executable")}))
    """)
    assert _last_json(proc) == {"compiler_modules": [], "has_executable": True}


def test_import_runtime_in_normal_process_does_not_import_compiler() -> None:
    # Without a blocker too: importing the runtime must not pull the compiler in on its own.
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys, vkml.runtime; print(sorted(m for m in sys.modules if m.startswith('iree.compiler')))"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def affine_vmfb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``x * y + x`` for 4 float32s, compiled here (where the compiler exists) to a file."""
    path = tmp_path_factory.mktemp("aot") / "affine.vmfb"
    path.write_bytes(compile_module(AFFINE, CPU_TARGET))
    return path


def test_precompiled_module_runs_without_compiler(affine_vmfb: Path) -> None:
    proc = _run_without_compiler("""
        import json
        import numpy as np
        import vkml.runtime as runtime
        from vkml.dtypes import float32

        sess = runtime.session("local-task")
        executable = runtime.Executable(sess, open(sys.argv[1], "rb").read(), "main", 1)
        x = runtime.upload(sess, np.array([1.0, 2.0, -3.0, 0.5], np.float32), float32)
        y = runtime.upload(sess, np.array([10.0, -1.0, 2.0, 4.0], np.float32), float32)
        (out,) = executable.invoke([x, y])
        result = runtime.download(out, float32)
        compiler = sorted(m for m in sys.modules if m.startswith("iree.compiler") and sys.modules[m])
        print(json.dumps({"result": result.tolist(), "dtype": str(result.dtype),
                          "invocations": runtime.snapshot()["invocations"],
                          "compiler_modules": compiler}))
    """, str(affine_vmfb))
    assert _last_json(proc) == {
        "result": [11.0, 0.0, -9.0, 2.5],
        "dtype": "float32",
        "invocations": 1,
        "compiler_modules": [],
    }
