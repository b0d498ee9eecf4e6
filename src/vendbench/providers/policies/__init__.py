"""In-process reference policies ("models" named ``baseline/...``)."""

from __future__ import annotations

from ...environment import Environment
from ...errors import ConfigError, unknown_name
from ._baseline import OrderUpToPolicy
from ._oracle import OraclePolicy
from ._run import InProcessPolicy, evaluate_policy, play_day, run_policy

POLICIES = ("order-up-to", "oracle")


def make_policy(name: str, env: Environment) -> InProcessPolicy:
    """Build the reference policy ``name`` (``order-up-to`` or ``oracle``, with or without
    the ``baseline/`` prefix) for ``env``'s scenario. The oracle reads the env's hidden
    parameters; the order-up-to policy sees only what an agent sees."""
    short = name.removeprefix("baseline/")
    if short not in POLICIES:
        raise ConfigError(unknown_name("policy", name, POLICIES))
    if env.scenario not in BUILDERS:
        raise ConfigError(f"scenario {env.scenario} has no reference policies")
    return BUILDERS[env.scenario][short](env)


def _network(short: str):
    def build(env: Environment) -> InProcessPolicy:
        from ._network import NetworkOracle
        from ._network_baseline import NetworkOrderUpTo

        return NetworkOrderUpTo() if short == "order-up-to" else NetworkOracle(env)

    return build


# each scenario's reference policies (the oracle reads the env's hidden parameters)
BUILDERS = {
    "autovend": {"order-up-to": lambda env: OrderUpToPolicy(),
                 "oracle": lambda env: OraclePolicy(env.world)},
    "network": {"order-up-to": _network("order-up-to"), "oracle": _network("oracle")},
}


__all__ = ["InProcessPolicy", "evaluate_policy", "OraclePolicy", "OrderUpToPolicy", "POLICIES", "make_policy",
           "play_day", "run_policy"]
