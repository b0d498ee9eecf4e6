"""Fixtures of the environment tests."""

from __future__ import annotations

import pytest

from vendbench.environment import REGISTRY, register

from .toy_scenario.scenario import SCENARIO


@pytest.fixture
def toy():
    """The lemonade stand (``toy_scenario``), registered for a test."""
    register(SCENARIO)
    yield
    REGISTRY.pop("toy")
