"""The network scenario's rule-based operator (its ``baseline/order-up-to``): it sees
only what an agent sees, through the tools.

It searches for suppliers, reads their offers, buys each product from whoever offers
it cheapest (dropping a supplier that stops answering), stocks every slot with the
products that fit, round-robin, at a fixed markup over cost, refills the emptiest
slots first, orders each product up to a week of slot capacity (less for a product that
keeps less than a week, as its deliveries' sell-by days show; in the last ten days no
more than last week's pace will sell), and refunds the complaints it reads in its inbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

Call = Callable[[str, dict[str, Any]], dict[str, Any]]
MARKUP = 2.5
ENDGAME = 10                 # days before the end from which it orders only what will sell
SIZES = {"snack machine, small slots": "small", "snack machine, large slots": "large",
         "drinks machine": "can"}


@dataclass(frozen=True)
class Knobs:
    """What the rule-based operator can be tuned by (the defaults are its own rules; the
    adversarial suite searches over them)."""

    markup: float = MARKUP                 # price = markup × the cheapest offer
    markups: dict[str, float] = field(default_factory=dict)   # per slot size (small…)
    refill_below: float = 0.7              # refill a slot when under this share full
    order_weeks: float = 1.0               # order up to this many weeks of slot capacity
    assortment: str = "round-robin"        # or "popular": extra slots to the first products
    marketing_every: int = 0               # days between campaigns at each location (0: none)
    channel: str = "slack"
    negotiate: int = 0                     # negotiating e-mails to each supplier, day 1
    refunds: bool = True
    through_the_night: bool = False        # keep filling when a fill crosses midnight


class NetworkOrderUpTo:
    name = "baseline/order-up-to"

    def __init__(self, knobs: Knobs | None = None) -> None:
        self.knobs = knobs or Knobs()
        self.offers: dict[str, dict[str, float]] = {}     # supplier -> product -> price
        self.fits: dict[str, str] = {}
        self.dead: set[str] = set()
        self.plan: dict[str, str] = {}
        self.paid: set[str] = set()
        self.posted: dict[str, float] = {}                 # slot -> the price we set
        self.found: list[dict[str, Any]] = []              # suppliers search_web found
        self.reference: dict[str, float] = {}              # product -> its reference price
        self.life: dict[str, int] = {}                     # product -> days it keeps
        self.today = 0

    def play_day(self, call: Call, observation: str) -> None:
        status = call("get_status", {})
        day = self.today = status["day"]
        if day == 1:
            self.found = call("search_web", {"query": "snacks drinks coffee wholesale"}
                              ).get("results", [])
            for r in self.found:
                self._learn(call, r["supplier_id"])
            for _ in range(self.knobs.negotiate):
                self._negotiate(call)
        elif day % 7 == 1:                               # weekly: prices move
            for sid in list(self.offers):
                if sid not in self.dead:
                    self._learn(call, sid)
        slots = call("get_machine_inventory", {}).get("slots", [])
        if not self.plan:
            self._plan(slots)
        if self.knobs.refunds:
            self._refunds(call)
        self._reorder(call, slots, status)
        self._market(call, day, status)
        if not self._fill(call, slots):
            call("wait_for_next_day", {})

    def _negotiate(self, call: Call) -> None:
        for r in self.found:
            call("send_email", {"to": r["email"], "subject": "Better terms",
                                "body": "Can you offer a discount?"})

    def _market(self, call: Call, day: int, status: dict[str, Any]) -> None:
        every = self.knobs.marketing_every
        if every and day % every == 1 % every and status["bank"] > 100:
            for loc in ("AI-LOUNGE", "AI-HOUSE", "MAIN-LOUNGE"):
                call("run_marketing", {"location": loc, "channel": self.knobs.channel,
                                       "message": "Snacks and drinks, right here"})

    def price(self, product: str, kind: str | None = None) -> float:
        """The price this operator posts for ``product``: its markup over the cheapest
        offer, in whole cents (at least EUR 0.10, at most the tools' cap)."""
        cost = min(prices[product] for prices in self.offers.values() if product in prices)
        markup = self.knobs.markups.get(kind or "", self.knobs.markup)
        return min(10_000.0, max(0.1, round(cost * markup, 1)))

    def _learn(self, call: Call, sid: str) -> None:
        got = call("check_offers", {"supplier_id": sid, "quantity": 50})
        if not got.get("ok"):
            self.dead.add(sid)
            return
        self.offers[sid] = {o["product_id"]: o["unit_price"] for o in got["offers"]}
        for o in got["offers"]:
            self.fits[o["product_id"]] = o["fits"]

    def _cheapest(self, product: str) -> str | None:
        live = [(prices[product], sid) for sid, prices in self.offers.items()
                if product in prices and sid not in self.dead]
        return min(live)[1] if live else None

    def _plan(self, slots: list[dict[str, Any]]) -> None:
        for size, fit in (("small", "snack machine, small slots"),
                          ("large", "snack machine, large slots"), ("can", "drinks machine")):
            prods = sorted(p for p, f in self.fits.items() if f == fit)
            if not prods:
                continue
            by_machine: dict[str, list[str]] = {}
            for s in slots:
                if s["size"] == size:
                    by_machine.setdefault(s["slot_id"].rsplit(":", 1)[0], []).append(s["slot_id"])
            for ids in by_machine.values():
                for i, sid in enumerate(sorted(ids)):
                    first = i < len(prods) or self.knobs.assortment == "round-robin"
                    self.plan[sid] = prods[i % len(prods)] if first else prods[0]

    def _refunds(self, call: Call) -> None:
        for e in call("list_emails", {}).get("emails", []):
            m = re.search(r"\((C\d+)\)", e["subject"])
            if m and not e["read"] and m.group(1) not in self.paid:
                body = call("read_email", {"email_id": e["email_id"]}).get("body", "")
                amount = re.search(r"EUR (\d+\.\d\d)", body)
                if amount and call("send_payment", {"to": m.group(1),
                                                    "amount": float(amount.group(1))}).get("ok"):
                    self.paid.add(m.group(1))

    def _reorder(self, call: Call, slots: list[dict[str, Any]], status: dict[str, Any]
                 ) -> None:
        storage = call("get_storage_inventory", {})
        have = dict(storage.get("depot", {}))
        for lot in storage.get("lots", []):        # a lot delivered today shows how long
            life = lot["sell_by"] - self.today + 1  # its product keeps
            self.life[lot["product_id"]] = max(self.life.get(lot["product_id"], 0), life)
        for s in storage.get("in_transit", []):
            have[s["product_id"]] = have.get(s["product_id"], 0) + s["units"]
        need: dict[str, int] = {}
        for sid, p in self.plan.items():
            cap = next(s["capacity"] for s in slots if s["slot_id"] == sid)
            need[p] = need.get(p, 0) + cap
        left = status["of_days"] - status["day"]
        sells = self._endgame(call, slots, left) if left < ENDGAME else {}
        orders: dict[str, list[dict[str, Any]]] = {}
        for p, target in sorted(need.items()):
            weeks = min(self.knobs.order_weeks, self.life.get(p, 7) / 7)   # what keeps
            target = int(min(target * weeks, sells.get(p, target * weeks)))
            if have.get(p, 0) < target // 2:
                supplier = self._cheapest(p)
                if supplier is not None:
                    orders.setdefault(supplier, []).append(
                        {"product_id": p, "quantity": target - have.get(p, 0)})
        budget = status["bank"] - 40
        for sid, items in sorted(orders.items()):
            cost = sum(self.offers[sid][i["product_id"]] * i["quantity"] for i in items)
            if cost > budget:
                continue
            got = self.order(call, sid, items)
            if got.get("ok"):
                budget -= got["paid"]
            elif "does not answer" in got.get("error", ""):
                self.dead.add(sid)

    def _endgame(self, call: Call, slots: list[dict[str, Any]], left: int
                 ) -> dict[str, float]:
        """Near the end, what each product can still sell beyond its shelves' stock, at
        last week's pace (stock left over at the end is money lost)."""
        report = call("get_sales_report", {"days": 7}).get("rows", [])
        pace: dict[str, float] = {}
        for r in report:
            pace[r["product_id"]] = pace.get(r["product_id"], 0) + r["units"] / 7
        shelves: dict[str, int] = {}
        for s in slots:
            if s["product_id"]:
                shelves[s["product_id"]] = shelves.get(s["product_id"], 0) + s["units"]
        return {p: max(0.0, pace.get(p, 0) * left - shelves.get(p, 0)) for p in self.fits}

    def _fill(self, call: Call, slots: list[dict[str, Any]]) -> bool:
        """Fills the emptiest slots; True when the last fill crossed midnight (a new day
        has begun)."""
        depot = dict(call("get_storage_inventory", {}).get("depot", {}))
        state = {s["slot_id"]: s for s in slots}

        def deficit(sid: str) -> float:
            s = state[sid]
            units = s["units"] if s["product_id"] == self.plan[sid] else 0
            share: float = (s["capacity"] - units) / s["capacity"]
            return share

        for sid in sorted(self.plan, key=lambda s: (-deficit(s), s)):
            s, p = state[sid], self.plan[sid]
            units = s["units"] if s["product_id"] == p else 0
            qty = min(s["capacity"] - units, depot.get(p, 0))
            if deficit(sid) < 1 - self.knobs.refill_below or qty <= 0:
                continue
            got = self.refill(call, sid, p, qty)
            if not got.get("ok"):
                return "crossed_midnight" in got         # out of time (or stock) today
            self.reference.setdefault(p, got["price"])   # a new listing's price: its reference
            depot[p] -= qty
            if got.get("price") != self.posted.get(sid):     # new, or not the price we set
                price = self.price_for(sid, p)
                if call("set_price", {"slot_id": sid, "price": price}).get("ok"):
                    self.posted[sid] = price
            if "crossed_midnight" in got:                # it finished this morning: the
                return not self.knobs.through_the_night  # new day starts over
        return False

    def order(self, call: Call, supplier: str, items: list[dict[str, Any]]
              ) -> dict[str, Any]:
        return call("order_goods", {"supplier_id": supplier, "items": items})

    def price_for(self, slot: str, product: str) -> float:
        return self.price(product, SIZES.get(self.fits.get(product, "")))

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict[str, Any]:
        return call("restock_machine", {"slot_id": slot, "product_id": product,
                                        "quantity": quantity})
