"""A pytest plugin for the Array API suite's run on vkml: hypothesis without its shrink phase.

Shrinking a failing example tries hundreds of smaller ones, and each new shape is a new
graph for vkml to compile: one failing test then takes many minutes. The run reports which
tests fail; reproducing one small is a separate, focused run (``-k`` without this plugin).
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    # after the suite's conftest has loaded its profile: the same settings, less shrinking
    settings.register_profile(
        "vkml-no-shrink",
        parent=settings.get_profile("array-api-tests"),
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
    )
    settings.load_profile("vkml-no-shrink")
