"""The network world (after Prosus Vending Bench, seed 001): six machines at three
locations, one depot, bank and clock, suppliers found by search and e-mail, marketing,
a working day. Every economic value lives in ``network.toml``."""

from ._arena import Market, Operator
from ._env import NetworkEnv

__all__ = ["Market", "NetworkEnv", "Operator"]
