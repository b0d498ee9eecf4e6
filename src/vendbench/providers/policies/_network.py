"""The network scenario's privileged scripted operator (its ``baseline/oracle``).

It knows the economy file (suppliers' reliability, products' popularity, the demand
model) and plans with it, but acts only through the 22 tools, within the working day:
it finds the reliable suppliers, negotiates each down, stocks every slot with a planned
assortment at prices that ration the demand to what its fills can supply, refills the
emptiest slots first, reorders ahead of the lead time, and refunds every complaint.
"""

from __future__ import annotations

import math
from typing import Any, Callable

Call = Callable[[str, dict], dict]
PRICE_GRID = [round(0.8 + 0.05 * i, 2) for i in range(29)]        # ×0.80 … ×2.20


class NetworkOracle:
    name = "baseline/oracle"

    def __init__(self, env: Any) -> None:
        self.env = env
        self.eco = env.eco
        self.reliable = [s for s in self.eco.suppliers.values()
                         if s.vanishes_on is None and s.insolvent_on is None
                         and s.short_chance < 0.1]
        self.plan = self._assortment()
        self.prices: dict[str, int] = {}
        self.priced: set[str] = set()
        self.negotiations: dict[str, int] = {}

    # -- planning (privileged) ---------------------------------------------------------
    def _best_supplier(self, product: str) -> Any:
        offers = [s for s in self.reliable if product in s.products]
        return min(offers, key=lambda s: (s.markup, s.lead_days, s.id)) if offers else None

    def _assortment(self) -> dict[str, str]:
        """slot id -> product: every stockable product once per machine, the extra slots
        to the products with the most demand there."""
        plan: dict[str, str] = {}
        slots = self.env.slots
        for loc in self.eco.locations:
            for kind in ("snack", "drinks"):
                machine = f"{loc.id}:{kind.upper()}"
                for size in ("small", "large", "can"):
                    ids = sorted(s.id for s in slots.values()
                                 if s.machine == machine and s.size == size)
                    if not ids:
                        continue
                    prods = [p for p in self.eco.products.values()
                             if p.machine == kind and p.size == size
                             and self._best_supplier(p.id) is not None]
                    prods.sort(key=lambda p: -self._appeal(p, loc))
                    order = [prods[i % len(prods)] for i in range(len(ids))]
                    for sid, p in zip(ids, order):
                        plan[sid] = p.id
        return plan

    def _appeal(self, product: Any, loc: Any) -> float:
        dem = self.eco["demand"]
        pref = dem["pref_boost"] if product.kind in loc.favours else 1.0
        return product.popularity * pref * (product.retail - product.cost)

    def _price(self, slot_id: str) -> int:
        """A price that rations a facing's expected demand to about what one fill a week
        supplies, never below the margin-maximising price."""
        env, dem = self.env, self.eco["demand"]
        slot = env.slots[slot_id]
        loc = next(loc for loc in self.eco.locations if slot.machine.startswith(loc.id + ":"))
        prod = self.eco.products[self.plan[slot_id]]
        facings = sum(1 for s, p in self.plan.items() if p == prod.id
                      and env.slots[s].machine == slot.machine)
        supply = facings * slot.capacity / 6.0                 # units a day from its fills
        here = {p for s, p in self.plan.items() if env.slots[s].machine == slot.machine}
        base = sum(self._weight(self.eco.products[p], loc, 1.0) for p in here)
        customers = dem["base_customers"] * loc.volume
        best, best_profit = 1.0, -math.inf
        for m in PRICE_GRID:
            w = self._weight(prod, loc, m)
            share = w / (dem["no_purchase"] + base - self._weight(prod, loc, 1.0) + w)
            units = min(customers * share, supply)
            profit = units * (m * prod.retail - prod.cost)
            if profit > best_profit:
                best, best_profit = m, profit
        return int(round(best * prod.retail / 10) * 10)

    def _weight(self, prod: Any, loc: Any, m: float) -> float:
        dem = self.eco["demand"]
        pref = dem["pref_boost"] if prod.kind in loc.favours else 1.0
        return prod.popularity * pref * m ** (-dem["elasticity"] * loc.sensitivity)

    # -- a day -------------------------------------------------------------------------
    def play_day(self, call: Call, observation: str) -> None:
        env = self.env
        day = env.day
        if day == 1:
            call("search_web", {"query": "snacks drinks coffee sweets food wholesale"})
        for sup in self.reliable:                       # three rounds of haggling
            if self.negotiations.get(sup.id, 0) < 3 and self._room(call, 15):
                call("send_email", {"to": sup.email, "subject": "Better terms",
                                    "body": "We order every week: can you offer a discount?"})
                self.negotiations[sup.id] = self.negotiations.get(sup.id, 0) + 1
        for c in list(env.complaints):                  # privileged: it knows who waits
            if not c.resolved and c.day < day and self._room(call, 10) and env.bank >= c.amount:
                call("send_payment", {"to": c.id, "amount": c.amount / 100})
        self._reorder(call)
        self._fill(call)
        call("wait_for_next_day", {})

    def _room(self, call: Call, minutes: int) -> bool:
        return self.env.minute + minutes <= self.eco["clock"]["close"] - 5

    def _reorder(self, call: Call) -> None:
        env = self.env
        need: dict[str, int] = {}
        for sid, p in self.plan.items():
            need[p] = need.get(p, 0) + env.slots[sid].capacity
        coming: dict[str, int] = {}
        for s in env.shipments:
            if s.arrives is not None:
                coming[s.product] = coming.get(s.product, 0) + s.quantity
        by_supplier: dict[str, list[dict]] = {}
        days_left = env.days - env.day
        for p, weekly in need.items():
            have = env.depot.get(p, 0) + coming.get(p, 0)
            target = weekly if days_left > 7 else weekly * days_left // 7
            if have < target // 2:
                sup = self._best_supplier(p)
                by_supplier.setdefault(sup.id, []).append(
                    {"product_id": p, "quantity": max(1, target - have)})
        for sid, items in sorted(by_supplier.items()):
            if not self._room(call, 15):
                break
            cost = sum(env.unit_price(sid, i["product_id"], i["quantity"]) * i["quantity"]
                       for i in items)
            while items and cost > env.bank - 3 * self.eco["economy"]["rent_per_day"]:
                items.pop()
                cost = sum(env.unit_price(sid, i["product_id"], i["quantity"]) * i["quantity"]
                           for i in items)
            if items:
                call("order_goods", {"supplier_id": sid, "items": items})

    def _fill(self, call: Call) -> None:
        env = self.env

        def deficit(sid: str) -> float:
            slot, p = env.slots[sid], self.plan[sid]
            units = slot.units if slot.product == p else 0
            return (slot.capacity - units) / slot.capacity

        for sid in sorted(self.plan, key=lambda s: (-deficit(s), s)):
            slot, p = env.slots[sid], self.plan[sid]
            have = env.depot.get(p, 0)
            units = slot.units if slot.product == p else 0
            qty = min(slot.capacity - units, have)
            if deficit(sid) < 0.3 or qty <= 0:
                continue
            if not self._room(call, 45 + (5 if sid not in self.priced else 0)):
                break
            call("restock_machine", {"slot_id": sid, "product_id": p, "quantity": qty})
            if sid not in self.priced:
                call("set_price", {"slot_id": sid, "price": self._price(sid) / 100})
                self.priced.add(sid)
