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
    the ``baseline/`` prefix) for ``env``'s scenario. The oracle reads the env's hidden
    parameters; the order-up-to policy sees only what an agent sees."""
    short = name.removeprefix("baseline/")
    if short not in POLICIES:
        raise ConfigError(unknown_name("policy", name, POLICIES))
    if env.scenario == "network":
        from ._network import NetworkOracle
        from ._network_baseline import NetworkOrderUpTo

        return NetworkOrderUpTo() if short == "order-up-to" else NetworkOracle(env)
    if short == "order-up-to":
        return OrderUpToPolicy()
    return OraclePolicy(env.world)          # privileged: the frozen world with hidden demand


__all__ = ["InProcessPolicy", "evaluate_policy", "OraclePolicy", "OrderUpToPolicy", "POLICIES", "make_policy",
           "run_policy"]
