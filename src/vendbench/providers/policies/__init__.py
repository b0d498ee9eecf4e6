"""In-process reference policies ("models" named ``baseline/...``)."""

from __future__ import annotations

from ...environment import Environment
from ...errors import ConfigError, unknown_name
from ._baseline import OrderUpToPolicy
from ._oracle import OraclePolicy
from ._run import InProcessPolicy, evaluate_policy, run_policy

POLICIES = ("order-up-to", "oracle")


def make_policy(name: str, env: Environment) -> InProcessPolicy:
    """Build the reference policy ``name`` (``order-up-to`` or ``oracle``, with or without
    the ``baseline/`` prefix) for ``env``. The oracle reads the env's hidden parameters."""
    short = name.removeprefix("baseline/")
    if short == "order-up-to":
        return OrderUpToPolicy()
    if short == "oracle":
        return OraclePolicy(env.world)      # privileged: the frozen world with hidden demand
    raise ConfigError(unknown_name("policy", name, POLICIES))


__all__ = ["InProcessPolicy", "evaluate_policy", "OraclePolicy", "OrderUpToPolicy", "POLICIES", "make_policy",
           "run_policy"]
