"""``AutoVendEnv``: the AutoVend world behind the environment protocol."""

from __future__ import annotations

import datetime as dt
import json
from functools import cache, cached_property
from typing import Any

import numpy as np
from pydantic import ValidationError

from ...errors import ConfigError, ToolError, unknown_name
from . import _state
from ._calendar import DEFAULT_START, MAX_DAYS
from ._operations import Resolver, fen
from ._prompt import system_prompt
from ._report import daily_report
from ._schemas import SqlArgs
from ._sql import SqlSandbox
from ._state import Business
from .._arguments import ArgumentError, describe_errors, parse_arguments
from ._tools import MUTATING, TOOLS, _batch
from .._registry import DEFAULT_WORLD_SEED
from ._world import HiddenDemand, build_world

DAILY_TOOL_CALLS = 40


class AutoVendEnv:
    """One trial of the AutoVend world: 20 machines, one warehouse, ``days`` days.

    Args:
        seed: trial seed (weather, demand noise, delivery delays).
        days: horizon, 1–365.
        world_seed: the frozen world (catalog, machines, hidden demand).
        world_salt: a secret that makes the world private (not computable from the public
            code); only its SHA-256 is kept (``summary()["world_salt_sha256"]``).
        start: first simulated date.
        daily_tool_calls: tool calls the agent may make per day before the day ends.
        sql_time_limit_s: ``query_sql`` stops a query after this long.
    """

    scenario = "autovend"

    def __init__(self, seed: int = 1, days: int = 180, world_seed: int = DEFAULT_WORLD_SEED,
                 start: dt.date = DEFAULT_START, daily_tool_calls: int = DAILY_TOOL_CALLS,
                 sql_time_limit_s: float = 2.0, world_salt: str | None = None) -> None:
        for name, value in (("seed", seed), ("world_seed", world_seed), ("days", days),
                            ("daily_tool_calls", daily_tool_calls)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"{name} must be an integer, got {value!r}")
        if not 1 <= days <= MAX_DAYS:
            raise ConfigError(f"days must be 1–{MAX_DAYS}, got {days}")
        if seed < 0 or world_seed < 0:
            raise ConfigError("seeds must be non-negative integers")
        if daily_tool_calls < 1:
            raise ConfigError("daily_tool_calls must be at least 1")
        self.seed, self.world_seed, self.days = seed, world_seed, days
        self.daily_tool_calls = daily_tool_calls
        if world_salt is not None and not isinstance(world_salt, str):
            raise ConfigError("world_salt must be a string")
        self.world = build_world(world_seed, world_salt)
        self._biz = Business(self.world, seed, days, start)
        self._ids = Resolver(self._biz)
        self._sql: SqlSandbox | None = None
        self._sql_time_limit = sql_time_limit_s
        self._version = 0
        self._calls_today = 0
        self._drained = {"days": 0, "sales": 0}
        self.instructions = system_prompt(days, daily_tool_calls)

    # -- the protocol ---------------------------------------------------------------
    @cached_property
    def tools(self) -> list[dict[str, Any]]:
        """The 18 tool schemas, OpenAI function-calling format (built on first use: an
        in-process policy never needs them)."""
        return tool_schemas()

    @property
    def done(self) -> bool:
        return self._biz.done

    @property
    def day(self) -> int:
        return self._biz.day

    def observe(self) -> str:
        """Today's daily report, as text."""
        return daily_report(self._biz)

    def call(self, name: str, arguments: dict[str, Any] | str | None = None
             ) -> dict[str, Any]:
        """Run one tool call; never raises for anything the agent sends."""
        if self.done:
            return {"ok": False, "error": f"the trial is over ({self._biz.status}); "
                                          "no more tool calls are accepted"}
        self._calls_today += 1
        result = self._dispatch(name, arguments)
        if name in MUTATING:
            self._version += 1
        if not self.done and self._calls_today >= self.daily_tool_calls and name != "end_day":
            self._end_day()
            result["day_ended"] = True
            result["notice"] = (f"you used all {self.daily_tool_calls} tool calls of the day, "
                                "so the day has ended")
        return result

    def final_state(self) -> dict[str, float]:
        """Initial and final cash, net assets and the score (net assets again; CNY), for
        the trial record."""
        b = self._biz
        return {"initial_cash": fen(_state.STARTING_CASH), "final_cash": fen(b.cash),
                "final_net_assets": fen(b.net_assets()), "score": self.score()}

    @property
    def status(self) -> str:
        """running, completed or bankrupt."""
        return self._biz.status

    def summary(self) -> dict[str, Any]:
        b = self._biz
        return {"scenario": self.scenario, "seed": self.seed, "world_seed": self.world_seed,
                "world_salt_sha256": self.world.salt_sha256, "days": self.days, "day": b.day, "days_completed": len(b.history),
                "status": b.status, "initial_cash": fen(_state.STARTING_CASH),
                "cash": fen(b.cash), "net_assets": fen(b.net_assets())}

    def score(self) -> float:
        """Net assets in CNY (the leaderboard decides what an unfinished trial scores)."""
        return fen(self._biz.net_assets())

    def drain_records(self) -> dict[str, list[dict[str, Any]]]:
        """Per-day rows produced since the last call: ``days`` and ``sales`` tables."""
        b = self._biz
        if len(b.history) == self._drained["days"] and len(b.sales) == self._drained["sales"]:
            return {"days": [], "sales": []}
        days = [{k: (fen(v) if k in _MONEY else v) for k, v in r.items()}
                for r in b.history[self._drained["days"]:]]
        new = b.sales[self._drained["sales"]:]
        sales = []
        if new:
            # column by column: an int64 over 100 is the same correctly rounded float as
            # ``fen``'s int over 100
            d, m, k, price, shelf, n, rev, cogs = np.concatenate(new).T
            mids, pids = self._id_lists
            sales = [{"day": dd, "machine_id": mids[mm], "product_id": pids[kk], "price": pp,
                      "units_on_shelf": ss, "units_sold": nn, "revenue": rr, "cogs": cc}
                     for dd, mm, kk, pp, ss, nn, rr, cc in zip(
                         d.tolist(), m.tolist(), k.tolist(), (price / 100).tolist(),
                         shelf.tolist(), n.tolist(), (rev / 100).tolist(),
                         (cogs / 100).tolist())]
        self._drained = {"days": len(b.history), "sales": len(b.sales)}
        return {"days": days, "sales": sales}

    # -- internals ------------------------------------------------------------------
    @cached_property
    def _id_lists(self) -> tuple[list[str], list[str]]:
        """Machine and product ids by index."""
        return [m.id for m in self.world.machines], [p.id for p in self.world.products]

    def _end_day(self) -> None:
        self._biz.end_day()
        self._calls_today = 0
        self._version += 1

    def _dispatch(self, name: str, arguments: dict[str, Any] | str | None
                  ) -> dict[str, Any]:
        tool = TOOLS.get(name) if isinstance(name, str) else None
        if tool is None:
            return {"ok": False, "error": unknown_name("tool", str(name), TOOLS)}
        try:
            raw = parse_arguments(arguments)
            if tool.item is not None:
                return _batch(tool, self._biz, raw, self._ids)
            args = tool.model.model_validate(raw)
            if name == "end_day":
                closed = self._biz.day
                self._end_day()
                return {"ok": True, "closed_day": closed,
                        "message": "day closed" + ("; the trial is over" if self.done else
                                                   "; the next daily report follows")}
            if name == "query_sql":
                if self._sql is None:
                    self._sql = SqlSandbox(self._biz, self._sql_time_limit)
                assert isinstance(args, SqlArgs)
                return {"ok": True, **self._sql.query(args.sql, self._version)}
            assert tool.run is not None             # a tool without items has a handler
            return {"ok": True, **tool.run(self._biz, args, self._ids)}
        except ValidationError as exc:
            return {"ok": False, "error": f"{name}: invalid arguments: {describe_errors(exc)}"}
        except (ToolError, ArgumentError) as exc:
            return {"ok": False, "error": f"{name}: {exc}"}

    @property
    def hidden(self) -> HiddenDemand:
        """Privileged access for reference policies and metrics; never shown to agents."""
        return self.world.hidden

    @property
    def business(self) -> Business:
        """The raw state, for tests, the oracle and invariant checks."""
        return self._biz


@cache
def _schemas() -> str:
    return json.dumps([t.schema() for t in TOOLS.values()])


def tool_schemas() -> list[dict[str, Any]]:
    """The 18 tool schemas (built once; each environment gets its own copy)."""
    schemas: list[dict[str, Any]] = json.loads(_schemas())
    return schemas


_MONEY = {"cash", "net_assets", "revenue", "cogs", "purchases", "fees", "visit_fees", "fines",
          "waste_cost", "transfers", "net"}
