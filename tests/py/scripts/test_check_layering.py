"""Tests for scripts/check_layering.py, run as a subprocess against fake trees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "check_layering.py"
STALE = "docs/architecture.md is stale: run python scripts/check_layering.py --write"

# A minimal tree in which every layer has at least one module and all imports point down.
BASE: dict[str, str] = {
    "vkml/__init__.py": "from vkml.frontend.x import Tensor\n",
    "vkml/errors.py": "class VkmlError(Exception):\n    pass\n",
    "vkml/dtypes.py": "from vkml.errors import VkmlError\n",
    "vkml/graph/__init__.py": "from vkml.dtypes import *\n",
    "vkml/runtime/__init__.py": "import iree.runtime\nfrom vkml import errors\n",
    "vkml/dialect/__init__.py": "from iree.compiler import ir\nimport vkml.runtime\n",
    "vkml/passes/__init__.py": "from ..dialect import ir_helpers\n",
    "vkml/dialect/ir_helpers.py": "from . import __name__ as _name\n",
    "vkml/ops/__init__.py": "from vkml.dialect import ir_helpers\n",
    "vkml/compiler/__init__.py": "from vkml.ops import x\n",
    "vkml/devices/__init__.py": "from vkml.compiler import x\n",
    "vkml/frontend/__init__.py": "from . import x\n",
    "vkml/frontend/x.py": "from vkml.dtypes import *\nfrom vkml.passes import Pass\n\nTensor = 1\n",
    "vkml/trace/__init__.py": "from vkml.frontend import x\n",
    "vkml/builder/__init__.py": "from vkml.frontend import x\n",
    "vkml/nn/__init__.py": "from vkml.frontend import x\n",
    "vkml/aot/__init__.py": "from vkml.frontend import x\n",
    "vkml/array_api/__init__.py": "from vkml.frontend import x\n",
    "vkml/examples/demo.py": "import vkml\n",
    "vkml/cli.py": "from vkml.examples import demo\n",
}


def make_tree(root: Path, files: dict[str, str | None]) -> Path:
    """Write BASE overlaid with `files` (None deletes a BASE file) under `root`."""
    for rel, text in {**BASE, **files}.items():
        if text is not None:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the script on `root`; stdout and stderr are merged into .stdout."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def write_and_check(
    tmp_path: Path, files: dict[str, str | None]
) -> subprocess.CompletedProcess[str]:
    """Build the tree and run with --write (so only layering problems can fail)."""
    return run(make_tree(tmp_path, files), "--write")


def assert_violation(result: subprocess.CompletedProcess[str], line: str) -> None:
    """The run failed and printed exactly `line` among its output lines."""
    assert result.returncode == 1, result.stdout
    assert line in result.stdout.splitlines(), result.stdout


def test_clean_tree_passes_after_write(tmp_path: Path) -> None:
    result = write_and_check(tmp_path, {})
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "layering: 20 modules, 17 layers, 0 violations"
    doc = (tmp_path / "docs" / "architecture.md").read_text()
    assert "python scripts/check_layering.py --write" in doc
    assert "```mermaid\nflowchart TD\n" in doc
    assert "    L14 -->|1| L8\n" in doc  # api -> frontend
    assert "    L13 -->|1| L8\n" in doc  # array_api -> frontend
    assert "    L12 -->|1| L8\n" in doc  # aot -> frontend
    assert "    L11 -->|1| L8\n" in doc  # nn -> frontend
    assert "    L10 -->|1| L8\n" in doc  # builder -> frontend
    assert "    L9 -->|1| L8\n" in doc  # trace -> frontend
    assert "    L8 -->|1| L4\n" in doc and "    L8 -->|1| L0\n" in doc  # frontend -> passes, L0
    assert "    L2 -->|1| L0\n" in doc  # `from vkml import errors` resolves to errors.py
    assert "    L1 -->|1| L0\n" in doc  # graph -> errors+dtypes
    assert "| L8 | frontend | `vkml/frontend/` | 2 | passes (1), errors+dtypes (1) |" in doc
    assert "class " not in doc.split("classDef")[1]  # no empty layers
    again = run(tmp_path)
    assert again.returncode == 0, again.stdout


def test_write_is_deterministic(tmp_path: Path) -> None:
    make_tree(tmp_path, {})
    doc = tmp_path / "docs" / "architecture.md"
    assert run(tmp_path, "--write").returncode == 0
    first = doc.read_bytes()
    doc.unlink()
    assert run(tmp_path, "--write").returncode == 0
    assert doc.read_bytes() == first


def test_empty_layer_is_dashed(tmp_path: Path) -> None:
    result = write_and_check(
        tmp_path, {"vkml/passes/__init__.py": None, "vkml/frontend/x.py": "Tensor = 1\n"}
    )
    assert result.returncode == 0, result.stdout
    doc = (tmp_path / "docs" / "architecture.md").read_text()
    assert '    L4["L4 passes<br/>0 modules"]' in doc
    assert "    class L4 empty\n" in doc


def test_upward_top_level_import_fails(tmp_path: Path) -> None:
    code = "import os\nfrom vkml.frontend import x\n"
    result = write_and_check(tmp_path, {"vkml/runtime/rt.py": code})
    assert_violation(
        result,
        "vkml/runtime/rt.py:2: upward import: runtime module "
        "vkml/runtime/rt.py imports vkml.frontend.x (layer frontend)",
    )
    assert "1 violations" in result.stdout


def test_import_inside_function_fails(tmp_path: Path) -> None:
    code = "class C:\n    def f(self):\n        if True:\n            import vkml.passes\n"
    result = write_and_check(tmp_path, {"vkml/dialect/d.py": code})
    assert_violation(
        result,
        "vkml/dialect/d.py:4: upward import: dialect module "
        "vkml/dialect/d.py imports vkml.passes (layer passes)",
    )


def test_import_inside_try_fails(tmp_path: Path) -> None:
    code = "try:\n    from vkml.cli import main\nexcept ImportError:\n    pass\n"
    result = write_and_check(tmp_path, {"vkml/frontend/y.py": code, "vkml/cli.py": "main = 1\n"})
    assert_violation(
        result,
        "vkml/frontend/y.py:2: upward import: frontend module "
        "vkml/frontend/y.py imports vkml.cli (layer cli)",
    )


def test_star_import_fails(tmp_path: Path) -> None:
    result = write_and_check(tmp_path, {"vkml/errors.py": "from vkml.frontend import *\n"})
    assert_violation(
        result,
        "vkml/errors.py:1: upward import: errors+dtypes module "
        "vkml/errors.py imports vkml.frontend (layer frontend)",
    )


@pytest.mark.parametrize(
    ("rel", "code", "module", "layer"),
    [
        ("vkml/passes/p.py", "from ..frontend import x", "vkml.frontend.x", "frontend"),
        ("vkml/passes/p.py", "from .. import frontend", "vkml.frontend", "frontend"),
        (
            "vkml/runtime/r.py",
            "from ..dialect.ir_helpers import f",
            "vkml.dialect.ir_helpers",
            "dialect",
        ),
        ("vkml/dtypes.py", "from . import Tensor", "vkml", "api"),
    ],
)
def test_relative_import_upward_fails(
    tmp_path: Path, rel: str, code: str, module: str, layer: str
) -> None:
    result = write_and_check(tmp_path, {rel: code + "\n"})
    own = {"vkml/passes/p.py": "passes", "vkml/runtime/r.py": "runtime"}.get(rel, "errors+dtypes")
    assert_violation(
        result, f"{rel}:1: upward import: {own} module {rel} imports {module} (layer {layer})"
    )


@pytest.mark.parametrize(
    "call",
    [
        'import importlib\nm = importlib.import_module("vkml.frontend.x")',
        'from importlib import import_module\nm = import_module("vkml.frontend.x")',
        'x = 0\nm = __import__("vkml.frontend.x")',
        'import importlib\nm = importlib.import_module(".frontend.x", package="vkml")',
    ],
)
def test_dynamic_import_with_literal_fails(tmp_path: Path, call: str) -> None:
    result = write_and_check(tmp_path, {"vkml/runtime/r.py": call + "\n"})
    assert_violation(
        result,
        "vkml/runtime/r.py:2: upward import: runtime module "
        "vkml/runtime/r.py imports vkml.frontend.x (layer frontend)",
    )


def test_from_vkml_import_resolves_submodule_or_package(tmp_path: Path) -> None:
    code = "from vkml import errors, dtypes\nfrom vkml import frontend\nfrom vkml import Tensor\n"
    result = write_and_check(tmp_path, {"vkml/runtime/r.py": code})
    lines = [ln for ln in result.stdout.splitlines() if "upward import" in ln]
    assert lines == [
        (
            "vkml/runtime/r.py:2: upward import: runtime module vkml/runtime/r.py "
            "imports vkml.frontend (layer frontend)"
        ),
        (
            "vkml/runtime/r.py:3: upward import: runtime module vkml/runtime/r.py "
            "imports vkml (layer api)"
        ),
    ], result.stdout


@pytest.mark.parametrize(
    "code",
    [
        "from iree.compiler import ir",
        "import iree.compiler",
        "from iree import compiler",
        "def f():\n    import iree.compiler.ir",
    ],
)
def test_iree_compiler_from_passes_fails(tmp_path: Path, code: str) -> None:
    result = write_and_check(tmp_path, {"vkml/passes/foo.py": code + "\n"})
    assert result.returncode == 1, result.stdout
    hits = [ln for ln in result.stdout.splitlines() if ln.startswith("vkml/passes/foo.py:")]
    assert len(hits) == 1, result.stdout
    assert " vkml/passes/foo.py imports iree.compiler" in hits[0]
    assert hits[0].endswith(": only vkml/dialect/ may")


def test_iree_runtime_from_frontend_fails(tmp_path: Path) -> None:
    code = "import os\nimport iree.runtime as rt\n"
    result = write_and_check(tmp_path, {"vkml/frontend/y.py": code})
    assert_violation(
        result,
        "vkml/frontend/y.py:2: vkml/frontend/y.py imports iree.runtime: only vkml/runtime/ may",
    )


def test_unassigned_module_fails(tmp_path: Path) -> None:
    result = write_and_check(tmp_path, {"vkml/utils.py": "import os\n"})
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    assert any(ln.startswith("vkml/utils.py:1: unassigned module") for ln in lines), result.stdout


def test_syntax_error_fails(tmp_path: Path) -> None:
    result = write_and_check(tmp_path, {"vkml/frontend/y.py": "def f(:\n"})
    assert result.returncode == 1, result.stdout
    assert "vkml/frontend/y.py:1: cannot parse" in result.stdout


def test_missing_diagram_fails(tmp_path: Path) -> None:
    result = run(make_tree(tmp_path, {}))
    assert result.returncode == 1
    assert STALE in result.stdout.splitlines()


def test_stale_diagram_fails_and_write_fixes_it(tmp_path: Path) -> None:
    assert write_and_check(tmp_path, {}).returncode == 0
    (tmp_path / "vkml" / "frontend" / "y.py").write_text("import vkml.runtime\n")
    stale = run(tmp_path)
    assert stale.returncode == 1
    assert STALE in stale.stdout.splitlines()
    fixed = run(tmp_path, "--write")
    assert fixed.returncode == 0, fixed.stdout
    assert "    L8 -->|1| L2\n" in (tmp_path / "docs" / "architecture.md").read_text()
    assert run(tmp_path).returncode == 0


def test_an_import_cycle_within_a_layer_fails(tmp_path: Path) -> None:
    """Two modules of one layer importing each other (one inside a function, as a hidden
    cycle would) are reported with both imports."""
    files = {
        "vkml/frontend/a.py": "from vkml.frontend import b\n",
        "vkml/frontend/b.py": "def f():\n    from vkml.frontend.a import x\n",
    }
    result = write_and_check(tmp_path, files)
    assert_violation(
        result,
        "vkml/frontend/a.py:1: import cycle among 2 modules: "
        "vkml/frontend/a.py:1 imports vkml/frontend/b.py, "
        "vkml/frontend/b.py:2 imports vkml/frontend/a.py",
    )


def test_a_package_init_reexporting_its_modules_is_no_cycle(tmp_path: Path) -> None:
    files = {
        "vkml/nn/__init__.py": "from vkml.nn.m import M\n",
        "vkml/nn/m.py": "from vkml.nn import helpers\nM = 1\n",
        "vkml/nn/helpers.py": "X = 1\n",
    }
    result = write_and_check(tmp_path, files)
    assert result.returncode == 0, result.stdout
