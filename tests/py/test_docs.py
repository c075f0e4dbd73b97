"""The documentation's examples run: every ``>>>`` in docs/ is a doctest, so the docs stay
true to the code."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if ">>>" in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_examples_in_the_docs_run(page: Path) -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(str(page), module_relative=False, optionflags=flags)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples failed in {page.name}"
    )
