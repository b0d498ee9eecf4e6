"""Fixtures of the environment tests."""

from __future__ import annotations

import pytest

from vendbench.environment import REGISTRY, Scenario, register


@pytest.fixture
def toy():
    """The lemonade stand (``toy_scenario``), registered with its one line for a test."""
    register(Scenario("toy", "tests.environment.toy_scenario", "ToyEnv", None,
                      "a lemonade stand", currency="USD", default_days=5))
    yield
    REGISTRY.pop("toy")
