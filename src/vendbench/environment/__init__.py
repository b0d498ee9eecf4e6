"""Environments (scenarios) behind one small protocol.

    >>> from vendbench.environment import make
    >>> env = make("autovend", seed=1, days=180)
    >>> env.call("end_day", "{}")["ok"]
    True
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError, unknown_name
from ._protocol import Environment

SCENARIOS = ("autovend",)
# where a private world's secret salt is read from by default (never stored; see _world)
SALT_ENV = "VENDBENCH_WORLD_SALT"


def scenario_class(scenario: str) -> type:
    """The environment class of ``scenario``; its package is imported on first use."""
    if scenario == "autovend":
        from .autovend import AutoVendEnv

        return AutoVendEnv
    raise ConfigError(unknown_name("scenario", scenario, SCENARIOS))


def make(scenario: str = "autovend", **kwargs: Any) -> Environment:
    """Create a fresh environment of ``scenario`` (keyword arguments go to its constructor)."""
    cls = scenario_class(scenario)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"{scenario}: {exc}") from None


def trial_metrics(scenario: str, days: list[dict[str, Any]], sales: list[dict[str, Any]],
                  tool_calls: list[dict[str, Any]], world_seed: int | None = None,
                  world_salt: str | None = None, private: bool = False
                  ) -> dict[str, float | None]:
    """A scenario's operational metrics for one trial, from its logged rows (``private``:
    the world was salted; metrics of its hidden model need ``world_salt``)."""
    if scenario == "autovend":
        from .autovend._metrics import trial_metrics as autovend_metrics

        return autovend_metrics(days, sales, tool_calls, world_seed, world_salt, private)
    raise ConfigError(unknown_name("scenario", scenario, SCENARIOS))


def metric_directions(scenario: str) -> dict[str, str]:
    """Which way each operational metric is better ("higher" or "lower")."""
    if scenario == "autovend":
        from .autovend._metrics import DIRECTIONS

        return dict(DIRECTIONS)
    raise ConfigError(unknown_name("scenario", scenario, SCENARIOS))


__all__ = ["Environment", "SALT_ENV", "SCENARIOS", "make", "metric_directions", "scenario_class",
           "trial_metrics"]
