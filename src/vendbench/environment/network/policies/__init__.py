"""The network's reference policies: ``baseline/order-up-to`` sees only what an agent
sees; ``baseline/oracle`` plans with the economy file and the hidden demand model."""

from __future__ import annotations

from ._baseline import Knobs, NetworkOrderUpTo
from ._oracle import NetworkOracle
from ._rivals import Colluder, MarketWatcher, Undercutter

POLICIES = {"order-up-to": lambda env: NetworkOrderUpTo(),
            "oracle": lambda env: NetworkOracle(env)}
# policies that play against other operators, in an arena only (design §23.6)
ARENA_POLICIES = {"undercutter": lambda env: Undercutter(),
                  "colluder": lambda env: Colluder()}

__all__ = ["ARENA_POLICIES", "Colluder", "Knobs", "MarketWatcher", "NetworkOracle",
           "NetworkOrderUpTo", "POLICIES", "Undercutter"]
