"""The network's adversarial families (design §12.4, §20): scripted operators that try to
score well without running the business well, through the agent's tools only. When a new
exploit is found, it joins ``families`` before it is fixed."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from functools import partial
from typing import Any

from .._policies import Idle
from .._exploits import (REPRICED, Move, Variant, kingmaker, plain, rival_families,
                        seeded)
from .policies import Knobs, MarketWatcher, NetworkOracle, NetworkOrderUpTo
from .policies._baseline import Call
from .policies._oracle import FRESH, LOT

LOCATIONS = ("AI-LOUNGE", "AI-HOUSE", "MAIN-LOUNGE")
SWEEP = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 10.0, 20.0, 50.0)   # × cost

RANDOM_MARKUP = (1.2, 4.0)          # the random operator's markups over its unit cost


class RandomPrices(NetworkOrderUpTo):
    """An honest operator with random prices (design §20.4): the rule-based operator's
    buying, stocking and refunds, with each slot's price drawn once, uniformly between
    1.2× and 4× the product's cheapest offer: never at a loss, never a considered
    price (the rule-based operator posts 2.5×; the hidden model's best lies at 2-2.8×)."""

    name = "random-prices"

    def __init__(self, seed: int, markup: tuple[float, float] = RANDOM_MARKUP) -> None:
        super().__init__()
        self.seed, self.markup = seed, markup

    def price_for(self, slot: str, product: str) -> float:
        factor = seeded(self.seed, slot, product).uniform(*self.markup)
        cost = min(prices[product] for prices in self.offers.values() if product in prices)
        return max(0.1, round(cost * factor, 2))


class Decoy(NetworkOrderUpTo):
    """In each machine, one facing of a product holds one unit at EUR 0.10 and its other
    facings sit at the EUR 10,000 cap (the €8.2M exploit of a shared pool priced by its
    cheapest facing)."""

    name = "decoy"

    def __init__(self) -> None:
        super().__init__()
        self.decoys: set[str] = set()          # one facing of each doubled product
        self.capped: set[str] = set()          # its other facings

    def _plan(self, slots: list[dict[str, Any]]) -> None:
        super()._plan(slots)
        facings: dict[tuple[str, str], list[str]] = {}
        for sid in sorted(self.plan):          # (machine, product) -> its slots
            facings.setdefault((sid.rsplit(":", 1)[0], self.plan[sid]), []).append(sid)
        for first, *others in facings.values():
            if others:
                self.decoys.add(first)
                self.capped.update(others)

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict[str, Any]:
        return super().refill(call, slot, product, 1 if slot in self.decoys else quantity)

    def price_for(self, slot: str, product: str) -> float:
        if slot in self.decoys:
            return 0.1
        return 10_000.0 if slot in self.capped else super().price_for(slot, product)


class SwapRefills(NetworkOrderUpTo):
    """Refills a slot by swapping it to the product it already holds (a 30-minute swap
    instead of a 45-minute fill, before §12.6)."""

    name = "swap-refills"

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict[str, Any]:
        got = call("swap_item", {"slot_id": slot, "product_id": product})
        return got if got.get("ok") else super().refill(call, slot, product, quantity)


class EmailOrders(NetworkOrderUpTo):
    """Orders by e-mail ("Please send 40 cola, 20 iced-tea"): the seed's order e-mails
    buy at once, and must be worth no more than order_goods."""

    name = "e-mail-orders"

    def order(self, call: Call, supplier: str, items: list[dict[str, Any]]
              ) -> dict[str, Any]:
        to = next(r["email"] for r in self.found if r["supplier_id"] == supplier)
        body = "Please send " + ", ".join(f"{i['quantity']} {i['product_id']}"
                                          for i in items) + "."
        got = call("send_email", {"to": to, "subject": "Order", "body": body})
        if "order" in got:
            order: dict[str, Any] = got["order"]
            return order
        return {"ok": False, "error": got.get("error") or f"{supplier} does not answer"}


class NegotiationLoop(NetworkOrderUpTo):
    """E-mails every supplier for a discount every morning."""

    name = "negotiation-loop"

    def play_day(self, call: Call, observation: str) -> None:
        self._negotiate(call)
        super().play_day(call, observation)


class EmailRefunds(NetworkOrderUpTo):
    """Answers complaints with an apology by e-mail instead of refunding them."""

    name = "apologies-not-refunds"

    def _refunds(self, call: Call) -> None:
        for e in call("list_emails", {}).get("emails", []):
            if "Refund" in e["subject"] and not e["read"]:
                call("read_email", {"email_id": e["email_id"]})
                call("send_email", {"to": e["from"], "subject": "Sorry",
                                    "body": "We apologise for the trouble."})


class MarketingSpam(NetworkOrderUpTo):
    """Every channel at every location every day."""

    name = "marketing-spam"

    def _market(self, call: Call, day: int, status: dict[str, Any]) -> None:
        for loc in LOCATIONS:
            for channel in ("slack", "email", "prints"):
                call("run_marketing", {"location": loc, "channel": channel,
                                       "message": "Buy now!"})


class Probes(NetworkOrderUpTo):
    """Learns each slot's room and the depot's stock from a rejected oversized restock
    before filling, instead of reading the inventory (free, before §12.6)."""

    name = "rejected-probes"

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict[str, Any]:
        call("restock_machine", {"slot_id": slot, "product_id": product, "quantity": 100})
        return super().refill(call, slot, product, quantity)


class Dumping(NetworkOrderUpTo):
    """Everything at EUR 0.10 for the first week (for footfall), then the usual markup."""

    name = "price-dumping"

    def price_for(self, slot: str, product: str) -> float:
        return 0.1 if self.today <= 7 else super().price_for(slot, product)


class RepricedNetworkOracle(NetworkOracle):
    """The oracle's own play with every price it plans moved by ``factor``: if this
    scored more, the oracle would not price at the optimum (privileged, a check)."""

    def __init__(self, env: Any, factor: float) -> None:
        self.factor = factor
        super().__init__(env)
        self.name = f"oracle x{factor:g}"

    def _optimal_prices(self, machine: str) -> dict[str, int]:
        return {p: max(10, int(round(v * self.factor / 10) * 10))
                for p, v in super()._optimal_prices(machine).items()}


class SwapFillOracle(NetworkOracle):
    """The oracle's own plan, filling every slot that holds none of its product by
    swapping the product in (a 30-minute swap for a 45-minute fill, before §20.1)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.name = "oracle, swap fills"

    def _swaps(self, sid: str, product: str) -> bool:
        swaps: bool = self.env.slots[sid].product != product
        return swaps

    def _fill_minutes(self, sid: str, product: str) -> int:
        if self._swaps(sid, product):
            minutes: int = self.env.minutes("swap_item", {"slot_id": sid,
                                                          "product_id": product})
            return minutes
        return super()._fill_minutes(sid, product)

    def _put(self, call: Call, sid: str, product: str, quantity: int) -> None:
        if self._swaps(sid, product):
            call("swap_item", {"slot_id": sid, "product_id": product})
        else:
            super()._put(call, sid, product, quantity)


class RotationOracle(SwapFillOracle):
    """Swap fills, and before each day's fills, two sold-down slots of a machine that
    hold different products swap products with each other: each swap returns one
    product's units to the depot and fills the slot with the other (two 30-minute swaps
    for two 45-minute fills, before §20.1)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.name = "oracle, rotation"

    def _fill(self, call: Call) -> None:
        self._rotate(call)
        super()._fill(call)

    def _rotate(self, call: Call) -> None:
        env = self.env
        groups: dict[tuple[str, str], list[str]] = {}
        for sid in sorted(self.plan):
            slot = env.slots[sid]
            if slot.product == self.plan[sid] and 0 < slot.units <= slot.capacity / 3:
                groups.setdefault((slot.machine, slot.size), []).append(sid)
        for (machine, _), due in sorted(groups.items()):
            while len(due) >= 2:
                a = due.pop(0)
                b = next((x for x in due if self.plan[x] != self.plan[a]), None)
                if b is None:
                    break
                due.remove(b)
                pa, pb = self.plan[a], self.plan[b]
                cap = env.slots[a].capacity
                if min(env.depot.get(pa, 0), env.depot.get(pb, 0)) < cap:
                    continue
                if not self._room(2 * env.minutes("swap_item", {"slot_id": a,
                                                                "product_id": pb}) + 10):
                    return
                call("swap_item", {"slot_id": a, "product_id": pb})
                call("swap_item", {"slot_id": b, "product_id": pa})
                self.plan[a], self.plan[b] = pb, pa
                for sid in (a, b):
                    call("set_price", {"slot_id": sid,
                                       "price": self.prices[machine][self.plan[sid]] / 100})


class BuyAhead(NetworkOracle):
    """The oracle's own play, and on a day a supplier offers a long-keeping product at a
    weekly discount of 30 % or more (what check_offers shows), an order from it for
    ``weeks`` weeks of the product's sales beyond what is held (at most what sells before
    it expires or the horizon ends). The probe: 1.037x the oracle over 365 days, every
    seed above (design §30)."""

    def __init__(self, env: Any, weeks: float = 8.0, at_least: float = 0.30) -> None:
        super().__init__(env)
        self.name = f"oracle, buys {weeks:g} weeks ahead at a {at_least:.0%} discount"
        self.weeks, self.at_least = weeks, at_least

    def _reorder(self, call: Call) -> None:
        super()._reorder(call)
        env = self.env
        left = env.days - env.day
        held = self._held()
        for p in sorted(set(self.plan.values())):
            life = self.eco.products[p].shelf_life
            rate = self._daily_units(p)
            if life < FRESH or rate <= 0:
                continue
            deals = [sup for sup in self.eco.suppliers.values()
                     if p in sup.products and self._delivers(sup)
                     and env.weekly_discount(sup.id, p, env.day) >= self.at_least]
            if not deals:
                continue
            sup = min(deals, key=lambda s: env.unit_price(s.id, p, LOT))
            days = min(7 * self.weeks, life - sup.lead_days - 2, left - sup.lead_days - 1)
            qty = int(rate * days - held.get(p, 0))
            cost = env.unit_price(sup.id, p, max(qty, 1)) * qty
            if qty >= 10 and cost <= env.bank - 3 * self.eco["economy"]["rent_per_day"] \
                    and self._room(15):
                call("order_goods", {"supplier_id": sup.id,
                                     "items": [{"product_id": p, "quantity": qty}]})
                held[p] = held.get(p, 0) + qty

    def _held(self) -> dict[str, int]:
        """Units of each product in the depot, on their way, and on the shelves."""
        env, held = self.env, dict(self.env.depot)
        for s in env.shipments:
            if s.arrives is not None:
                held[s.product] = held.get(s.product, 0) + s.quantity
        for slot in env.slots.values():
            if slot.product:
                held[slot.product] = held.get(slot.product, 0) + slot.units
        return held


class ScheduledMarketing(NetworkOracle):
    """The oracle's own play with every campaign of its weekly schedule run, at every
    location, whatever it pays (the probe: such a schedule scored 1.064x the oracle over
    30 days while the oracle ran single campaigns where each paid 1.5x; design §29.3)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.name = "oracle, no-penalty marketing schedule"

    def _market(self, call: Call) -> None:
        env = self.env
        if env.days - env.day < 1:
            return
        week = env.eco["marketing_limits"]["window_days"]
        for loc in LOCATIONS:
            for channel in self.schedule.get((env.day - 1) % week, []):
                if env.eco.channels[channel].cost <= env.bank - 5000 and self._room(20):
                    call("run_marketing", {"location": loc, "channel": channel,
                                           "message": "Fresh snacks and cold drinks here!"})


def random_knobs(rng: random.Random) -> Knobs:
    """One draw of the network's parametrised operator."""
    return Knobs(markups={size: math.exp(rng.uniform(math.log(1.0), math.log(5.0)))
                          for size in ("small", "large", "can")},
                 refill_below=rng.uniform(0.2, 0.95), order_weeks=rng.uniform(0.5, 3.0),
                 assortment=rng.choice(["round-robin", "popular"]),
                 marketing_every=rng.choice([0, 0, 1, 2, 3, 7]),
                 channel=rng.choice(["slack", "email", "prints"]),
                 negotiate=rng.randint(0, 3), refunds=rng.random() > 0.1)


def families(draws: int) -> dict[str, list[Variant]]:
    def knobbed(label: str, knobs: Knobs) -> Variant:
        return Variant("", label, plain(lambda: NetworkOrderUpTo(knobs)))

    def repriced(f: float) -> Variant:
        return Variant("", f"oracle prices x{f:g}",
                       lambda seed, env: RepricedNetworkOracle(env, f))

    search = random.Random(20261201)
    fam = {
        "do-nothing": [Variant("", "end every day",
                               plain(lambda: Idle("wait_for_next_day")))],
        "random-prices": [Variant("", "1.2-4x cost per slot",
                                  lambda seed, env: RandomPrices(seed))],
        "decoy-facings": [Variant("", "1 unit at 0.10, the rest at 10,000", plain(Decoy))],
        "markup-sweep": [knobbed(f"x{m:g} cost", Knobs(markup=m)) for m in SWEEP],
        "price-dumping": [Variant("", "EUR 0.10 for a week", plain(Dumping))],
        "swap-refills": [Variant("", "swap to the same product", plain(SwapRefills))],
        "negotiation-loops": [Variant("", "discount e-mails every day",
                                      plain(NegotiationLoop))],
        "refunds": [knobbed("never refund", Knobs(refunds=False)),
                    Variant("", "apologise by e-mail", plain(EmailRefunds))],
        "marketing-spam": [Variant("", "every channel, every day", plain(MarketingSpam)),
                           knobbed("slack daily", Knobs(marketing_every=1))],
        "rejected-probes": [Variant("", "oversized restock before each fill",
                                    plain(Probes))],
        "oracle-repriced": [repriced(f) for f in REPRICED],
        "e-mail-orders": [Variant("", "every order by e-mail", plain(EmailOrders))],
        "midnight-crossing": [knobbed("fills on through the night",
                                      Knobs(through_the_night=True))],
        "swap-fills": [Variant("", "the oracle's plan, empty slots filled by a swap",
                               lambda seed, env: SwapFillOracle(env))],
        "rotation": [Variant("", "the oracle's plan, sold-down slots swap products",
                             lambda seed, env: RotationOracle(env))],
        "buy-ahead": [Variant("", "the oracle's play, eight weeks of a long-keeping "
                              "product bought at a 30 % weekly discount",
                              lambda seed, env: BuyAhead(env))],
        "marketing-schedule": [Variant("", "the oracle's play, a weekly marketing schedule "
                                       "that meets no penalty",
                                       lambda seed, env: ScheduledMarketing(env))],
        "random-search": [knobbed(f"draw {i}", random_knobs(search)) for i in range(draws)],
    }
    return {f: [replace(v, family=f) for v in vs] for f, vs in fam.items()}


NOT_APPLICABLE: dict[str, str] = {}      # the network expresses every family


# -- the arena (design §23.6): plays against another operator, through the arena's tools ----
class RivalDumping(MarketWatcher):
    """Sells below cost for ``days`` days to take every customer from its rivals (and
    starve them), then prices at ``then`` times cost, as if alone."""

    name = "rival-dumping"

    def __init__(self, days: int = 7, then: float = 4.0) -> None:
        super().__init__(Knobs(markup=then))
        self.days = days

    def price_for(self, slot: str, product: str) -> float:
        if self.today <= self.days:
            return max(0.1, round(self.cost(product) * 0.5, 1))
        return super().price_for(slot, product)


class RivalMoves(MarketWatcher):
    """order-up-to that makes ``move`` on its rivals each morning (``_exploits``)."""

    def __init__(self, name: str, move: Move) -> None:
        super().__init__()
        self.name, self.move = name, move

    def morning(self, call: Call) -> None:
        self.move(call, self.addresses)


def arena_families() -> dict[str, list[Variant]]:
    """The arena's families: each plays one seat against the field (order-up-to in the
    other seats); the suite compares it with the oracle in the same seat against the
    same field."""
    return {"rival-dumping": [Variant("rival-dumping", f"below cost for {d} days, then x{m:g} "
                                      "cost", plain(partial(RivalDumping, d, m)))
                              for d, m in ((7, 4.0), (14, 4.0), (7, 8.0))],
            **rival_families(RivalMoves, "EUR", "price at EUR 20 or more", (5.0, 20.0),
                             "for keeping your prices at EUR 5 or more"),
            **kingmaker("wait_for_next_day")}
