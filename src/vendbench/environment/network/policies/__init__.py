"""The network's reference policies: ``baseline/order-up-to`` sees only what an agent
sees; ``baseline/oracle`` plans with the economy file and the hidden demand model."""

from __future__ import annotations

from ._baseline import Knobs, NetworkOrderUpTo
from ._oracle import NetworkOracle

POLICIES = {"order-up-to": lambda env: NetworkOrderUpTo(),
            "oracle": lambda env: NetworkOracle(env)}

__all__ = ["Knobs", "NetworkOracle", "NetworkOrderUpTo", "POLICIES"]
