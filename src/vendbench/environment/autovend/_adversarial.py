"""AutoVend's adversarial families (design §12.4): scripted operators that try to score
well without running the business well, through the agent's tools only. A family that
AutoVend cannot express is in ``NOT_APPLICABLE`` with the reason."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from functools import partial
from typing import Any, Callable

from .._policies import Idle
from .._exploits import (REPRICED, Build, Move, Variant, kingmaker, plain,
                        rival_families, seeded)
from .policies import OraclePolicy, OrderUpToPolicy
from .policies._books import Call

AUTOVEND_SWEEP = (0.5, 0.75, 1.25, 1.5, 1.75, 2.0)                   # × reference


class RepricedOracle(OraclePolicy):
    """AutoVend's oracle with its planned prices moved by ``factor`` (within 0.5-2.0×
    reference)."""

    def __init__(self, world: Any, factor: float) -> None:
        super().__init__(world)
        self.factor = factor
        self.name = f"oracle x{factor:g}"

    def _plan_machine(self, i: int) -> dict[str, tuple[float, float]]:
        plan = super()._plan_machine(i)
        out = {}
        for pid, (price, rate) in plan.items():
            ref = self.world.products[self._k[pid]].ref_price / 100
            low, high = math.ceil(ref * 5) / 10, math.floor(ref * 20) / 10
            out[pid] = (min(high, max(low, round(price * self.factor, 1))), rate)
        return out


class PricedOrderUpTo(OrderUpToPolicy):
    """AutoVend's rule-based operator with its prices replaced by a rule (a factor of the
    reference price per listing, kept within the world's 0.5-2.0×), and optionally its
    safety stock scaled."""

    def __init__(self, name: str, factor: Callable[[str, str], float] | None,
                 cover: float | None = None) -> None:
        super().__init__()
        self.name = name
        self.factor = factor
        if cover is not None:
            self.critical_ratio_cover = cover

    def play_day(self, call: Call, observation: str) -> None:
        factor = self.factor
        if factor is None:
            return super().play_day(call, observation)

        def priced(name: str, args: dict[str, Any]) -> dict[str, Any]:
            if name == "set_price":
                args = {"items": [{**it, "price": self._price(factor, it["machine_id"],
                                                              it["product_id"])}
                                  for it in args["items"]]}
            return call(name, args)

        super().play_day(priced, observation)

    def _price(self, factor: Callable[[str, str], float], machine: str, product: str
               ) -> float:
        ref = self.books.catalog[product].ref
        low, high = math.ceil(ref * 50) / 100, math.floor(ref * 200) / 100
        return min(high, max(low, round(ref * factor(machine, product), 2)))


class AutovendProbes(OrderUpToPolicy):
    """Sends a rejected physical call before every restock batch (a rejected item costs
    no visit fee): probing must gain nothing."""

    name = "rejected-probes"

    def play_day(self, call: Call, observation: str) -> None:
        def probing(name: str, args: dict[str, Any]) -> dict[str, Any]:
            if name == "restock":
                for it in args["items"][:5]:
                    call("restock", {"items": [{**it, "quantity": 100_000}]})
            return call(name, args)

        super().play_day(probing, observation)


def autovend_knobs(rng: random.Random) -> dict[str, Any]:
    return {"cover": rng.uniform(0.8, 2.0), "beverage": rng.choice([None, rng.uniform(0.5, 2.0)]),
            "food": rng.choice([None, rng.uniform(0.5, 2.0)])}


def _autovend_searched(knobs: dict[str, Any]) -> PricedOrderUpTo:
    if knobs["beverage"] is None and knobs["food"] is None:
        return PricedOrderUpTo("random-search", None, knobs["cover"])
    policy: PricedOrderUpTo

    def factor(machine: str, product: str) -> float:
        beverage = policy.books.catalog[product].subcategory in BEVERAGES
        chosen = knobs["beverage"] if beverage else knobs["food"]
        return 1.0 if chosen is None else chosen

    policy = PricedOrderUpTo("random-search", factor, knobs["cover"])
    return policy


BEVERAGES = frozenset({"water", "soda", "tea", "coffee", "juice", "energy/sports",
                       "dairy/yogurt", "plant-protein"})


def families(draws: int) -> dict[str, list[Variant]]:
    def fixed(f: float) -> Variant:
        return Variant("", f"x{f:g} reference",
                       plain(lambda: PricedOrderUpTo(f"x{f:g}", lambda m, p: f)))

    def randomised(seed: int, env: Any) -> PricedOrderUpTo:
        return PricedOrderUpTo("random-prices",
                               lambda m, p: seeded(seed, m, p).uniform(0.5, 2.0))

    def repriced(f: float) -> Variant:
        return Variant("", f"oracle prices x{f:g}",
                       lambda seed, env: RepricedOracle(env.world, f))

    def searched(knobs: dict[str, Any]) -> Build:
        return plain(lambda: _autovend_searched(knobs))

    search = random.Random(20261201)
    fam = {
    "do-nothing": [Variant("", "end every day", plain(lambda: Idle("end_day")))],
    "random-prices": [Variant("", "0.5-2x reference per listing", randomised)],
    "markup-sweep": [fixed(f) for f in AUTOVEND_SWEEP],
    "price-dumping": [replace(fixed(0.5), label="0.5x reference everywhere")],
    "rejected-probes": [Variant("", "a rejected restock before each batch",
                                    plain(AutovendProbes))],
    "oracle-repriced": [repriced(f) for f in REPRICED],
    "random-search": [Variant("", f"draw {i}", searched(autovend_knobs(search)))
                          for i in range(draws)],
    }
    return {f: [replace(v, family=f) for v in vs] for f, vs in fam.items()}


NOT_APPLICABLE = {
    "decoy-facings": "a product has one listing per machine (restock adds to it)",
    "swap-refills": "no swap tool; a restock is a visit whatever it moves",
    "negotiation-loops": "no supplier e-mail; the catalogue's costs are fixed",
    "refunds": "no complaints or refunds",
    "marketing-spam": "no marketing tool",
    "marketing-schedule": "no marketing tool",
    "swap-fills": "no swap tool",
    "rotation": "no swap tool",
    "e-mail-orders": "no supplier e-mail",
    "midnight-crossing": "no working-day clock: a day is ended by end_day",
    "buy-ahead": "no weekly discounts: the catalogue's costs are fixed",
}


# -- the arena (design §23.6): plays against another operator, through the arena's tools ----
class RivalPlay(OrderUpToPolicy):
    """AutoVend's order-up-to that learns its rivals' addresses each morning
    (``see_competitors``) and does ``to_rivals`` before its day."""

    def __init__(self) -> None:
        super().__init__()
        self.rivals: list[str] = []
        self.played = 0

    def play_day(self, call: Call, observation: str) -> None:
        self.played += 1
        seen = call("see_competitors", {"machine_id": "M01"}).get("competitors", [])
        self.rivals = [r["email"] for r in seen if r["open"]]
        self.to_rivals(call)
        super().play_day(call, observation)

    def to_rivals(self, call: Call) -> None:
        """What it does to its rivals each morning (nothing)."""


class RivalDumping(PricedOrderUpTo):
    """Every listing at the world's floor (0.5x reference) for ``days`` days to take the
    rivals' customers, then at its ceiling (2x)."""

    def __init__(self, days: int) -> None:
        super().__init__(f"rival dumping {days} days", self._factor)
        self.days, self.played = days, 0

    def play_day(self, call: Call, observation: str) -> None:
        self.played += 1
        super().play_day(call, observation)

    def _factor(self, machine: str, product: str) -> float:
        return 0.5 if self.played <= self.days else 2.0


class RivalMoves(RivalPlay):
    """order-up-to that makes ``move`` on its rivals each morning (``_exploits``)."""

    def __init__(self, name: str, move: Move) -> None:
        super().__init__()
        self.name, self.move = name, move

    def to_rivals(self, call: Call) -> None:
        self.move(call, self.rivals)


def arena_families() -> dict[str, list[Variant]]:
    """The arena's families in AutoVend: each plays one seat against order-up-to; the
    suite compares it with the oracle in the same seat against the same field."""
    return {"rival-dumping": [Variant("rival-dumping", f"0.5x reference for {d} days, then 2x",
                                      plain(partial(RivalDumping, d))) for d in (7, 14)],
            **rival_families(RivalMoves, "CNY", "price at 2x the reference price",
                             (100.0, 1000.0), "for keeping your prices at 2x reference"),
            **kingmaker("end_day")}
