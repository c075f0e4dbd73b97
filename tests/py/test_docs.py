"""The documentation's examples run, so the docs stay true to the code: every ``>>>`` in docs/
is a doctest, the README's Python blocks run in order, and every ``console`` transcript's
commands run and print what the page shows (``...`` stands for what differs between runs),
in a folder holding the page's ``# file: NAME`` blocks."""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if ">>>" in p.read_text(encoding="utf-8"))
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
TRANSCRIPTS = sorted(
    p for p in [ROOT / "README.md", *DOCS.rglob("*.md")]
    if any(lang == "console" for lang, _ in BLOCK.findall(p.read_text(encoding="utf-8")))
)  # fmt: skip


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_examples_in_the_docs_run(page: Path) -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(str(page), module_relative=False, optionflags=flags)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples failed in {page.name}"
    )


def test_the_readme_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In order, in one namespace, as a reader pastes them (the Training block used an
    undefined ``batches``)."""
    monkeypatch.chdir(tmp_path)  # the blocks write files (mlp.npz)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    blocks = [
        body for lang, body in BLOCK.findall((ROOT / "README.md").read_text()) if lang == "python"
    ]
    assert len(blocks) >= 3
    for i, body in enumerate(blocks):
        exec(compile(body, f"README.md python block {i + 1}", "exec"), namespace)  # noqa: S102


def _run(command: str, folder: Path) -> str:
    words = shlex.split(command)
    if words[0] == "vkml":
        words = [sys.executable, "-m", "vkml", *words[1:]]
    done = subprocess.run(words, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


@pytest.mark.parametrize("page", TRANSCRIPTS, ids=lambda p: p.name)
def test_console_transcripts_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    for _, body in blocks:
        first, _, rest = body.partition("\n")
        if first.startswith("# file: "):
            (tmp_path / first.removeprefix("# file: ").strip()).write_text(rest)
    checker = doctest.OutputChecker()
    for lang, body in blocks:
        if lang != "console":
            continue
        steps = re.split(r"^\$ ", body, flags=re.MULTILINE)[1:]
        for step in steps:
            command, _, shown = step.partition("\n")
            got = _run(command, tmp_path)
            assert checker.check_output(shown, got, doctest.ELLIPSIS), (
                f"{page.name}: `{command}` printed\n{got}\nthe page shows\n{shown}"
            )
