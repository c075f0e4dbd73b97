"""The mutation campaign (``make mutation``) can still apply every mutant: each one's text is
in its file, once. A move or rename of the code a mutant targets (the emitters out of
``vkml/dialect/``, an op's kind turned into a rule object) otherwise leaves the campaign to
fail, or to test nothing, the next time it runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _campaign():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "mutation_campaign", ROOT / "scripts/mutation_campaign.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MUTANTS = _campaign().MUTANTS


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_every_mutant_finds_its_text_once(mutant) -> None:  # type: ignore[no-untyped-def]
    text = (ROOT / mutant.path).read_text(encoding="utf-8")
    assert text.count(mutant.old) == 1, f"{mutant.path}: {mutant.old!r}"
    for test in mutant.tests:
        assert (ROOT / test.split("::")[0]).exists(), test
