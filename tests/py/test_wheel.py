"""The package as users get it: a wheel built from this tree installs into a fresh virtual
environment and runs the README's first example from outside the repository, importing the
installed copy (the dependencies come from this environment's site-packages)."""

from __future__ import annotations

import re
import site
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert block is not None, "README.md has no python example"
    return block.group(1)


def test_the_wheel_installs_and_runs_the_readme_example(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", str(wheels), str(ROOT)],
        check=True, cwd=tmp_path,
    )  # fmt: skip
    (wheel,) = wheels.glob("vkml-*.whl")
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    fresh_site = next(env_dir.glob("lib/python*/site-packages"))
    # numpy, IREE and the rest from here: a path file, so this environment's editable vkml
    # (a finder installed by its own path file, not read from here) is not on the path
    (fresh_site / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
         str(fresh_site), str(wheel)],
        check=True, cwd=tmp_path,
    )  # fmt: skip
    script = "import vkml, sys\nprint(vkml.__file__, file=sys.stderr)\n" + _readme_example()
    result = subprocess.run(
        [str(python), "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert str(fresh_site) in result.stderr.splitlines()[0]  # the installed copy ran
    assert "[[" in result.stdout  # y.numpy() printed a matrix
