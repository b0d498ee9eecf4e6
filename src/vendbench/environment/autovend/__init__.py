"""The AutoVend world (design §2): 20 machines, 5 site types, one warehouse, 180 days."""

from ._arena import Market, Operator
from ._env import DAILY_TOOL_CALLS, AutoVendEnv
from .._registry import DEFAULT_WORLD_SEED
from ._world import World, build_world

__all__ = ["AutoVendEnv", "DAILY_TOOL_CALLS", "DEFAULT_WORLD_SEED", "Market", "Operator",
           "World", "build_world"]
