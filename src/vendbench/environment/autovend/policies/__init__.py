"""AutoVend's reference policies: ``baseline/order-up-to`` sees only what an agent sees;
``baseline/oracle`` plans with the world's hidden demand model."""

from __future__ import annotations

from ._baseline import OrderUpToPolicy
from ._oracle import OraclePolicy

POLICIES = {"order-up-to": lambda env: OrderUpToPolicy(),
            "oracle": lambda env: OraclePolicy(env.world)}

__all__ = ["OraclePolicy", "OrderUpToPolicy", "POLICIES"]
