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


def make(scenario: str = "autovend", **kwargs: Any) -> Environment:
    """Create a fresh environment of ``scenario`` (keyword arguments go to its constructor)."""
    if scenario == "autovend":
        from .autovend import AutoVendEnv

        try:
            return AutoVendEnv(**kwargs)
        except TypeError as exc:
            raise ConfigError(f"autovend: {exc}") from None
    raise ConfigError(unknown_name("scenario", scenario, SCENARIOS))


__all__ = ["Environment", "SCENARIOS", "make"]
