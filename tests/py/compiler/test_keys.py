"""The source part of a compile-cache key follows the code that compiles, wherever it lives:
the key hashes the MLIR before vkml's passes, so a module served from the cache after a pass,
a recipe a pass calls or a compile check changed would be a stale module, with no error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vkml.compiler import keys

PASSES = keys.PACKAGE / "passes"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the vkml package to move code around in."""
    package = tmp_path / "vkml"
    shutil.copytree(keys.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_every_pass_and_compile_check_is_hashed() -> None:
    hashed = {p.relative_to(keys.PACKAGE).as_posix() for p in keys.compile_sources()}
    passes = {p.relative_to(keys.PACKAGE).as_posix() for p in PASSES.glob("*.py")}
    assert passes - {"passes/__main__.py"} <= hashed
    checks = {"compiler/compile.py", "compiler/loop_budget.py", "compiler/workgroup_races.py"}
    assert checks <= hashed
    # the MLIR helpers the passes' recipes call
    assert {"dialect/intbits.py", "dialect/pairwise.py", "dialect/builder.py"} <= hashed


def test_the_front_end_is_not_hashed() -> None:
    # what the passes never run only reaches a module through the MLIR text, which the key
    # hashes itself: editing it must not throw the cache away
    hashed = {p.relative_to(keys.PACKAGE).as_posix() for p in keys.compile_sources()}
    assert not {p for p in hashed if p.startswith(("frontend/", "nn/", "builder/", "aot/"))}
    assert "__init__.py" not in hashed


def test_a_helper_moved_out_of_the_pass_folders_is_still_hashed(tree: Path) -> None:
    # move the integer bit helpers (which the float16 rounding and the exact divide call) to a
    # new package, as a redesign might, and import them from there, over several lines with a
    # comment in one place
    moved = tree / "numerics" / "intbits.py"
    moved.parent.mkdir()
    (moved.parent / "__init__.py").write_text("")
    (tree / "dialect" / "intbits.py").rename(moved)
    importers = [p for p in tree.rglob("*.py") if "vkml.dialect.intbits" in p.read_text()]
    assert tree / "passes" / "soft_f16.py" in importers
    for path in importers:
        path.write_text(path.read_text().replace("vkml.dialect.intbits", "vkml.numerics.intbits"))
    soft_f16 = tree / "passes" / "soft_f16.py"
    soft_f16.write_text(
        soft_f16.read_text().replace(
            "from vkml.numerics.intbits import",
            "from vkml.numerics import (  # the helpers\n    intbits,\n)\n"
            "from vkml.numerics.intbits import",
        )
    )
    assert moved in keys.compile_sources(tree)
    before = keys.source_fingerprint(tree)
    moved.write_text(moved.read_text().replace("def ", "def  ", 1))
    assert keys.source_fingerprint(tree) != before


def test_a_new_pass_file_and_an_edit_to_a_compile_check_change_the_key(tree: Path) -> None:
    before = keys.source_fingerprint(tree)
    races = tree / "compiler" / "workgroup_races.py"
    races.write_text(races.read_text() + "\n# changed\n")
    after_check = keys.source_fingerprint(tree)
    assert after_check != before
    (tree / "passes" / "extra.py").write_text("X = 1\n")
    pipeline = tree / "passes" / "run.py"
    pipeline.write_text("import vkml.passes.extra\n" + pipeline.read_text())
    assert keys.source_fingerprint(tree) != after_check


def test_the_key_does_not_depend_on_where_the_checkout_is(tree: Path) -> None:
    assert keys.source_fingerprint(tree) == keys.pipeline_fingerprint()


def test_submodules_named_in_a_from_import_are_followed(tmp_path: Path) -> None:
    package = tmp_path / "vkml"
    for name in ("compiler/__init__", "compiler/compile", "a/__init__", "a/b", "a/c", "a/d"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).with_suffix(".py").write_text("")
    (package / "compiler" / "compile.py").write_text(
        "from vkml.a import (  # recipes\n    b,\n    c as see,  # renamed\n)\nimport vkml.a.d\n"
    )
    found = {p.relative_to(package).as_posix() for p in keys.compile_sources(package)}
    assert found == {"compiler/compile.py", "a/__init__.py", "a/b.py", "a/c.py", "a/d.py"}
