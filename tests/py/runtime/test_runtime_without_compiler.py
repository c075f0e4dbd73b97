"""vkml runs compiled modules on a machine without iree.compiler: vkml.runtime loads a
``.vmfb`` directly, and realize runs every graph the disk cache holds (vkml/compiler/cache.py).

Each test runs a child Python in which ``iree.compiler`` (and everything under it) cannot be
imported, as on a deployment machine with only iree-base-runtime and NumPy installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from support.without_compiler import run_without_compiler

import vkml
from vkml.compiler.cache import default_cache
from vkml.compiler.compile import run_pipeline
from vkml.compiler.target import CPU_TARGET

ROOT = Path(__file__).resolve().parents[3]

AFFINE = """module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>) {
    %v0 = stablehlo.multiply %arg0, %arg1 : tensor<4xf32>
    %v1 = stablehlo.add %v0, %arg0 : tensor<4xf32>
    return %v1 : tensor<4xf32>
  }
}
"""


def _last_json(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_compiler_blocker_works() -> None:
    proc = run_without_compiler("""
        try:
            import iree.compiler.tools
        except ImportError:
            print("blocked")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "blocked"


def test_import_runtime_does_not_import_compiler() -> None:
    proc = run_without_compiler("""
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
        check=False, capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def affine_vmfb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``x * y + x`` for 4 float32s, compiled here (where the compiler exists) to a file."""
    path = tmp_path_factory.mktemp("aot") / "affine.vmfb"
    path.write_bytes(run_pipeline(AFFINE, CPU_TARGET))
    return path


def test_precompiled_module_runs_without_compiler(affine_vmfb: Path) -> None:
    proc = run_without_compiler(
        """
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
    """,
        str(affine_vmfb),
    )
    assert _last_json(proc) == {
        "result": [11.0, 0.0, -9.0, 2.5],
        "dtype": "float32",
        "invocations": 1,
        "compiler_modules": [],
    }


def test_import_vkml_nn_example_and_reference_device_need_no_compiler() -> None:
    proc = run_without_compiler("""
        import json
        import numpy as np
        import vkml
        import vkml.nn as nn
        from vkml.examples import digits

        layer = nn.Linear(3, 2, key=vkml.random.key(0, device=vkml.reference))
        x = vkml.tensor(np.ones((4, 3), np.float32), device=vkml.reference)
        y = vkml.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=vkml.reference)
        out = layer(x)
        compiler = sorted(m for m in sys.modules if m.startswith("iree.compiler") and sys.modules[m])
        print(json.dumps({"matmul": (x @ y.T).numpy().tolist(), "layer": list(out.numpy().shape),
                          "images": len(digits.load_data(0).y_train), "compiler_modules": compiler}))
    """)
    assert _last_json(proc) == {
        "matmul": [[3.0, 12.0]] * 4, "layer": [4, 2], "images": 1438, "compiler_modules": [],
    }  # fmt: skip


def _affine_step(values: list[float]) -> vkml.Tensor:
    x = vkml.tensor(np.array(values, np.float32))
    return ((x * 3.0 + 1.0) * x).sum(axis=0)


VALUES = [1.5, -2.25, 1e-3, 7.0, -0.0]


@pytest.fixture
def precompiled_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, bytes]:
    """A cache directory holding ``_affine_step``'s module for cpu, compiled here as usual,
    and the result bytes that compile gave."""
    monkeypatch.setenv("VKML_CACHE_DIR", str(tmp_path))
    vkml.cpu.clear_executables()
    default_cache().clear_memory()
    try:
        result = _affine_step(VALUES).numpy()
        assert len(default_cache().entries()) == 1
    finally:
        vkml.cpu.clear_executables()
        default_cache().clear_memory()
    return tmp_path, result.tobytes()


CHILD_REALIZE = """
    import json
    import numpy as np
    import vkml

    x = vkml.tensor(np.array(json.loads(sys.argv[1]), np.float32))
    hit = ((x * 3.0 + 1.0) * x).sum(axis=0).numpy()
    try:
        ((x * 3.0 - 1.0) * x).sum(axis=0).numpy()  # a graph nobody compiled
        error = None
    except vkml.CompileError as exc:
        error = str(exc)
    stats = vkml.stats()
    compiler = sorted(m for m in sys.modules if m.startswith("iree.compiler") and sys.modules[m])
    print(json.dumps({"hit": hit.tobytes().hex(), "compiles": stats["compiles"],
                      "disk_hits": stats["cache_hits_disk"], "error": error,
                      "compiler_modules": compiler}))
"""


def test_realize_without_compiler_runs_the_disk_cache_bit_identically(
    precompiled_cache: tuple[Path, bytes],
) -> None:
    directory, expected = precompiled_cache
    proc = run_without_compiler(CHILD_REALIZE, json.dumps(VALUES),
                                 env={"VKML_CACHE_DIR": str(directory)})  # fmt: skip
    got = _last_json(proc)
    assert (got["hit"], got["compiles"], got["disk_hits"]) == (expected.hex(), 0, 1)
    assert got["compiler_modules"] == []


def test_a_graph_missing_from_the_cache_without_compiler_names_the_remedy(
    precompiled_cache: tuple[Path, bytes],
) -> None:
    directory, _ = precompiled_cache
    proc = run_without_compiler(CHILD_REALIZE, json.dumps(VALUES),
                                 env={"VKML_CACHE_DIR": str(directory)})  # fmt: skip
    error = _last_json(proc)["error"]
    assert isinstance(error, str)
    assert f"not in the compile cache at {directory} for target llvm-cpu-host" in error
    assert "iree-base-compiler is not installed" in error
    runtime = metadata.version("iree-base-runtime")
    assert f"pip install iree-base-compiler=={runtime}" in error
    assert "VKML_CACHE_DIR" in error and "docs/devices.md" in error
