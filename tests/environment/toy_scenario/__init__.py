"""A third scenario, from its own package: a lemonade stand.

Everything vendbench needs of a world is here (the environment, its metrics and record
tables, its reference policies, and its descriptor in ``scenario``); an installed package
registers through the entry-point group ``vendbench.scenarios`` with one line, and the
tests' fixture registers it with ``register(SCENARIO)``.
"""

from __future__ import annotations

import json
from typing import Any

from vendbench.environment import Metric, RecordTable

COST = 50                      # cents a cup
START = 1_000                  # cents

# the environment's record tables: the days every scenario keeps, and one of its own
RECORDS = (RecordTable("days", (("day", "INTEGER"), ("cash", "DOUBLE"),
                                ("net_assets", "DOUBLE"), ("cups", "INTEGER"))),
           RecordTable("toy_prices", (("day", "INTEGER"), ("price", "DOUBLE"))))
METRICS = (Metric("cups_per_day", "higher", "cups/day", 1, 1),
           Metric("calls", "lower", "calls", 1, 0))


def trial_metrics(records: dict[str, list[dict]], tool_calls: list[dict], world_seed=None,
                  world_salt=None, private=False) -> dict[str, float | None]:
    days = records["days"]
    assert len(records["toy_prices"]) == len(days)      # its own table came back
    return {"cups_per_day": sum(d["cups"] for d in days) / len(days) if days else None,
            "calls": float(len(tool_calls))}


def cups(price: int, seed: int, day: int) -> int:
    """Cups sold at ``price`` cents: 20 at no price, 4 fewer per dollar, ±1 by day."""
    return max(0, 20 - 4 * price // 100 + (seed + day) % 3 - 1)


class ToyEnv:
    scenario = "toy"
    instructions = "Sell lemonade: set_price (dollars), then end_day. Cups cost $0.50."
    tools = [{"type": "function", "function": {
        "name": name, "description": text, "parameters": {
            "type": "object", "properties": props, "required": list(props)}}}
        for name, text, props in (("set_price", "today's price in dollars",
                                   {"price": {"type": "number"}}),
                                  ("end_day", "sell at today's price; a new day", {}))]

    def __init__(self, seed: int = 1, days: int = 5, world_seed: int | None = None,
                 world_salt: str | None = None) -> None:
        self.seed, self.days, self.world_seed = seed, days, world_seed or 0
        self._day, self.cash, self.price, self.sold = 1, START, 100, 0
        self._records: dict[str, list[dict]] = {"days": [], "toy_prices": []}

    @property
    def done(self) -> bool:
        return self._day > self.days

    @property
    def day(self) -> int:
        return self._day

    @property
    def status(self) -> str:
        return "completed" if self.done else "running"

    def observe(self) -> str:
        return f"Day {self._day} of {self.days}: cash ${self.cash / 100:.2f}."

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        args = json.loads(arguments) if isinstance(arguments, str) else (arguments or {})
        if self.done:
            return {"ok": False, "error": "the stand is closed"}
        if name == "set_price":
            price = args.get("price")
            if not isinstance(price, (int, float)) or not 0 < price <= 10:
                return {"ok": False, "error": "price is $0.01-$10"}
            self.price = round(price * 100)
            return {"ok": True, "price": self.price / 100}
        if name == "end_day":
            n = cups(self.price, self.seed, self._day)
            self.cash += n * (self.price - COST)
            self.sold += n
            self._records["days"].append({"day": self._day, "cash": self.cash / 100,
                                          "net_assets": self.cash / 100, "cups": n})
            self._records["toy_prices"].append({"day": self._day, "price": self.price / 100})
            self._day += 1
            return {"ok": True, "cups": n}
        return {"ok": False, "error": f"unknown tool {name}"}

    def summary(self) -> dict[str, Any]:
        return {"scenario": "toy", "seed": self.seed, "world_seed": self.world_seed,
                "world_salt_sha256": None, "days": self.days, "day": self._day,
                "days_completed": min(self._day - 1, self.days), "status": self.status,
                "initial_cash": START / 100, "cash": self.cash / 100,
                "net_assets": self.cash / 100}

    def final_state(self) -> dict[str, float]:
        return {"initial_cash": START / 100, "final_cash": self.cash / 100,
                "final_net_assets": self.cash / 100, "score": self.cash / 100}

    def score(self) -> float:
        return self.cash / 100

    def drain_records(self) -> dict[str, list[dict[str, Any]]]:
        out, self._records = self._records, {"days": [], "toy_prices": []}
        return out
