"""The network scenario's rule-based operator (its ``baseline/order-up-to``): it sees
only what an agent sees, through the tools.

It searches for suppliers, reads their offers, buys each product from whoever offers
it cheapest (dropping a supplier that stops answering), stocks every slot with the
products that fit, round-robin, at a fixed markup over cost, refills the emptiest
slots first, orders each product up to a week of slot capacity, and refunds the
complaints it reads in its inbox.
"""

from __future__ import annotations

import re
from typing import Callable

Call = Callable[[str, dict], dict]
MARKUP = 2.5


class NetworkOrderUpTo:
    name = "baseline/order-up-to"

    def __init__(self) -> None:
        self.offers: dict[str, dict[str, float]] = {}     # supplier -> product -> price
        self.fits: dict[str, str] = {}
        self.dead: set[str] = set()
        self.plan: dict[str, str] = {}
        self.priced: set[str] = set()
        self.paid: set[str] = set()

    def play_day(self, call: Call, observation: str) -> None:
        status = call("get_status", {})
        day = status["day"]
        if day == 1:
            found = call("search_web", {"query": "snacks drinks coffee wholesale"})
            for r in found.get("results", []):
                self._learn(call, r["supplier_id"])
        elif day % 7 == 1:                               # weekly: prices move
            for sid in list(self.offers):
                if sid not in self.dead:
                    self._learn(call, sid)
        slots = call("get_machine_inventory", {}).get("slots", [])
        if not self.plan:
            self._plan(slots)
        self._refunds(call)
        self._reorder(call, slots, status)
        self._fill(call, slots)
        call("wait_for_next_day", {})

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

    def _plan(self, slots: list[dict]) -> None:
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
                    self.plan[sid] = prods[i % len(prods)]

    def _refunds(self, call: Call) -> None:
        for e in call("list_emails", {}).get("emails", []):
            m = re.search(r"\((C\d+)\)", e["subject"])
            if m and not e["read"] and m.group(1) not in self.paid:
                body = call("read_email", {"email_id": e["email_id"]}).get("body", "")
                amount = re.search(r"EUR (\d+\.\d\d)", body)
                if amount and call("send_payment", {"to": m.group(1),
                                                    "amount": float(amount.group(1))}).get("ok"):
                    self.paid.add(m.group(1))

    def _reorder(self, call: Call, slots: list[dict], status: dict) -> None:
        storage = call("get_storage_inventory", {})
        have = dict(storage.get("depot", {}))
        for s in storage.get("in_transit", []):
            have[s["product_id"]] = have.get(s["product_id"], 0) + s["units"]
        need: dict[str, int] = {}
        for sid, p in self.plan.items():
            cap = next(s["capacity"] for s in slots if s["slot_id"] == sid)
            need[p] = need.get(p, 0) + cap
        orders: dict[str, list[dict]] = {}
        for p, target in sorted(need.items()):
            if have.get(p, 0) < target // 2:
                sid = self._cheapest(p)
                if sid is not None:
                    orders.setdefault(sid, []).append({"product_id": p,
                                                       "quantity": target - have.get(p, 0)})
        budget = status["bank"] - 40
        for sid, items in sorted(orders.items()):
            cost = sum(self.offers[sid][i["product_id"]] * i["quantity"] for i in items)
            if cost > budget:
                continue
            got = call("order_goods", {"supplier_id": sid, "items": items})
            if got.get("ok"):
                budget -= got["paid"]
            elif "does not answer" in got.get("error", ""):
                self.dead.add(sid)

    def _fill(self, call: Call, slots: list[dict]) -> None:
        depot = dict(call("get_storage_inventory", {}).get("depot", {}))
        state = {s["slot_id"]: s for s in slots}

        def deficit(sid: str) -> float:
            s = state[sid]
            units = s["units"] if s["product_id"] == self.plan[sid] else 0
            return (s["capacity"] - units) / s["capacity"]

        for sid in sorted(self.plan, key=lambda s: (-deficit(s), s)):
            s, p = state[sid], self.plan[sid]
            units = s["units"] if s["product_id"] == p else 0
            qty = min(s["capacity"] - units, depot.get(p, 0))
            if deficit(sid) < 0.3 or qty <= 0:
                continue
            got = call("restock_machine", {"slot_id": sid, "product_id": p, "quantity": qty})
            if not got.get("ok"):
                break                                    # out of time today
            depot[p] -= qty
            if sid not in self.priced:
                cost = min(prices[p] for prices in self.offers.values() if p in prices)
                if call("set_price", {"slot_id": sid,
                                      "price": round(cost * MARKUP, 1)}).get("ok"):
                    self.priced.add(sid)
