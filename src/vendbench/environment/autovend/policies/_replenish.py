"""The replenishment engine shared by the reference policies (design §2.3).

Every day: note arrivals, visit the machines that need it, restock them to
order-up-to targets, place warehouse orders ahead of the 3-day lead time, discard
expired stock, end the day. Subclasses decide what to list, at what price, and
how fast each listing sells; this engine only turns those beliefs into tool calls.
"""

from __future__ import annotations

from typing import Any

import datetime as dt
import math
import re
from dataclasses import dataclass, field

from ._books import Books, Call, batched

CAPACITY = 200
MAX_LISTINGS = 40
LEAD = 3
MAX_CYCLE = 7             # days between visits at most ("weekly replenishment")
MIN_DEPTH = 5             # attraction falls below φ = 5 units on the shelf
CASH_RESERVE = 1_000.0    # CNY kept back from orders for the daily fees


@dataclass
class MachineView:
    """What the policy believes about one machine."""

    mid: str
    site: str
    rates: dict[str, float] = field(default_factory=dict)    # units/day per listed product
    prices: dict[str, float] = field(default_factory=dict)
    listed: dict[str, int] = field(default_factory=dict)     # product -> day it was listed
    last_visit: int = -100
    expiry_alarm: int = 10**6                                 # a shelf unit expires then
    level_after_visit: int = 0
    daily_units: float = 0.0                                  # EWMA of units sold per day
    planned_adds: list[str] = field(default_factory=list)
    planned_drops: list[str] = field(default_factory=list)
    posted: dict[str, float] = field(default_factory=dict)   # prices we set, per product

    def cycle(self) -> int:
        """Days between visits: a week, or sooner when the machine sells fast."""
        if self.daily_units <= 0:
            return MAX_CYCLE
        return max(2, min(MAX_CYCLE, int(0.8 * CAPACITY / self.daily_units)))


class ReplenishmentPolicy:
    """Order-up-to replenishment through the agent tools. Subclasses supply beliefs."""

    name = "replenishment"
    critical_ratio_cover = 1.25   # safety factor on demand over the cycle

    def __init__(self) -> None:
        self.books = Books()
        self.machines: dict[str, MachineView] = {}
        self.day = 0
        self.cash = 0.0
        self.today = dt.date.min
        self._claimed: dict[str, int] = {}
        self._days: dict[str, int] = {}                  # reported dates as day numbers

    # -- hooks -----------------------------------------------------------------------
    def initial_assortment(self, m: MachineView) -> list[str]:
        raise NotImplementedError

    def prior_rate(self, m: MachineView, pid: str) -> float:
        raise NotImplementedError

    def review(self, call: Call, m: MachineView, inventory: dict[str, Any],
               sold30: dict[str, int],
               price_updates: list[dict[str, Any]]) -> None:
        """Update beliefs after a visit's queries; queue price changes and assortment plans."""

    # -- the day -----------------------------------------------------------------------
    def play_day(self, call: Call, observation: str) -> None:
        """Act for one day, as an agent would: read the report, use tools, end the day."""
        head = re.match(r"Day (\d+) of \d+ . (\d{4}-\d\d-\d\d)", observation)
        if head is None:
            raise ValueError(f"not a daily report: {observation[:80]!r}")
        day = self.day = int(head.group(1))
        self.today = dt.date.fromisoformat(head.group(2))
        cash = re.search(r"^Cash ([\d,.-]+) CNY", observation, re.M)
        self.cash = float(cash.group(1).replace(",", "")) if cash else 0.0
        if day == 1:
            self.setup(call)
        else:
            self.books.sync_arrivals(call, day)
            self.track_sales(call)
        visits = [m for m in self.machines.values() if self.needs_visit(m)][:12]
        restocks: list[Any] = []
        removals: list[Any] = []
        delists: list[Any] = []
        prices: list[Any] = []
        self._claimed = {}                       # warehouse units promised to today's restocks
        for m in visits:
            self.visit(call, m, restocks, removals, delists, prices)
        # units that would expire before they sell: off the shelves and out of the warehouse
        doomed = self.books.expired(day, within=MAX_CYCLE + 2)
        for it in batched(call, "remove_stock", removals):
            pid, n = it["product_id"], it["quantity"]
            self.books.add(pid, it["expiry"], n)
            doomed[pid] = doomed.get(pid, 0) + n
        for it in batched(call, "discard", [{"product_id": p, "quantity": n}
                                            for p, n in doomed.items()]):
            self.books.discard(it["product_id"], it["quantity"], day)
        batched(call, "delist", delists)
        for it in batched(call, "restock", restocks):
            self.books.take(it["product_id"], it["quantity"], day)
        batched(call, "set_price", prices)
        self.order(call)
        call("end_day", {})

    def setup(self, call: Call) -> None:
        self.books.load_catalog(call)
        for r in call("list_machines", {})["machines"]:
            m = self.machines[r["machine_id"]] = MachineView(r["machine_id"], r["site_type"])
            for pid in self.initial_assortment(m):
                m.rates[pid] = self.prior_rate(m, pid)
                m.prices[pid] = self.books.catalog[pid].ref
            m.planned_adds = list(m.rates)
        self.order(call)

    def track_sales(self, call: Call) -> None:
        out = call("get_sales_report", {"window": 1, "group_by": "machine"})
        sold = {r["machine_id"]: r["units"] for r in out["rows"]}
        for m in self.machines.values():
            if m.last_visit > 0:
                m.daily_units = 0.8 * m.daily_units + 0.2 * sold.get(m.mid, 0) \
                    if m.daily_units else float(sold.get(m.mid, 0))

    def needs_visit(self, m: MachineView) -> bool:
        if self.day + 1 >= m.expiry_alarm:       # never let a unit expire on the shelf
            return True
        stock_ready = any(self.books.has_fresh(p, self.day) for p in m.rates)
        if m.last_visit < 0:
            return stock_ready
        since = self.day - m.last_visit
        left = m.level_after_visit - m.daily_units * (since + 1)
        return stock_ready and (since >= MAX_CYCLE or left < 0.3 * m.level_after_visit)

    # -- a visit -------------------------------------------------------------------------
    def visit(self, call: Call, m: MachineView, restocks: list[Any], removals: list[Any],
              delists: list[Any], prices: list[Any]) -> None:
        day, books = self.day, self.books
        shelf: dict[str, dict[str, Any]] = {}
        due_drops, m.planned_drops = m.planned_drops, []     # decided at the last visit
        if m.last_visit > 0:
            inv = call("get_machine_inventory", {"machine_id": m.mid})
            shelf = {r["product_id"]: r for r in inv["listings"]}
            sold30 = {pid: r["sold_30d"] for pid, r in shelf.items()}
            self.review(call, m, shelf, sold30, prices)
        next_visit = day + m.cycle()
        # units that would expire on the shelf before the next visit come off now
        alarm, too_late, day_of, known = 10**6, next_visit + 2, self._day_of, self._days
        for pid, r in shelf.items():
            iso = r["next_expiry"]
            expiry = (known.get(iso) or day_of(iso)) if iso else 10**6
            if r["expired"] or expiry <= too_late:
                removals.append({"machine_id": m.mid, "product_id": pid, "quantity": r["units"],
                                 "expiry": min(expiry, day)})
                shelf[pid] = {**r, "units": 0, "sellable": 0}
            elif expiry < alarm:
                alarm = expiry
        for pid in due_drops:
            if pid in shelf and pid in m.rates:
                delists.append({"machine_id": m.mid, "product_id": pid})
                if shelf[pid]["sellable"]:
                    books.add(pid, self._day_of(shelf[pid]["next_expiry"]),
                              shelf[pid]["sellable"])
                shelf.pop(pid)
                for d in (m.rates, m.prices, m.listed):
                    d.pop(pid, None)
        targets = self.targets(m, next_visit)
        room = CAPACITY - sum(r["units"] for r in shelf.values())
        slots = MAX_LISTINGS - len(shelf)
        total = 0
        mid, claimed, posted, price_of = m.mid, self._claimed, m.posted, m.prices
        good_after, last = books.good, next_visit + 1
        for pid, target in targets.items():
            row = shelf.get(pid)
            have = row["sellable"] if row is not None else 0
            good, first_expiry = good_after(pid, last)
            qty = target - have          # max(0, min(target - have, available, room))
            avail = good - claimed.get(pid, 0)
            if avail < qty:
                qty = avail
            if room < qty:
                qty = room
            if qty < 0:
                qty = 0
            if qty and row is None:
                if slots == 0:          # the listing it replaces goes at the next visit
                    continue
                slots -= 1
            room -= qty
            if qty:
                restocks.append({"machine_id": mid, "product_id": pid, "quantity": qty})
                claimed[pid] = claimed.get(pid, 0) + qty
                alarm = min(alarm, first_expiry)
                m.listed.setdefault(pid, day)
            total += have + qty
            if (have or qty) and posted.get(pid) != price_of[pid]:
                prices.append({"machine_id": mid, "product_id": pid, "price": price_of[pid]})
                posted[pid] = price_of[pid]
        m.last_visit, m.level_after_visit, m.expiry_alarm = day, total, alarm - 1

    def targets(self, m: MachineView, next_visit: int) -> dict[str, int]:
        """Order-up-to levels for each listing, fitted to capacity, filling the machine."""
        cover = next_visit - self.day + 1
        raw = {}
        drops, safety, ceil, sqrt = set(m.planned_drops), self.critical_ratio_cover, \
            math.ceil, math.sqrt
        for pid, rate in m.rates.items():
            if pid in drops:
                continue
            mean = rate * cover
            target = ceil(mean * safety + 1.3 * sqrt(mean))
            raw[pid] = target if target > MIN_DEPTH else MIN_DEPTH
        total = sum(raw.values())
        if total > CAPACITY:
            scale = CAPACITY / total
            raw = {p: max(2, int(v * scale)) for p, v in raw.items()}
        else:   # spare room: fuller machines sell more, so fill it (within shelf life)
            spare = CAPACITY * 0.95 - total
            weight = sum(m.rates.values()) or 1.0
            catalog = self.books.catalog
            for pid, rate in m.rates.items():
                level = raw.get(pid)
                if level is None:
                    continue
                life_cap = max(level, int(rate * catalog[pid].life * 0.5))
                raw[pid] = min(life_cap, level + int(spare * rate / weight))
        return raw

    # -- ordering ------------------------------------------------------------------------
    def order(self, call: Call) -> None:
        need: dict[str, float] = {}    # units/day over all machines, summed in machine order
        need_of = need.get
        for m in self.machines.values():
            need.update({pid: need_of(pid, 0.0) + rate for pid, rate in m.rates.items()})
        transit: dict[str, int] = {}
        for lines in self.books.pending.values():
            for pid, n in lines:
                transit[pid] = transit.get(pid, 0) + n
        good_after = self.day + 5                   # units still good in five days count
        first: dict[str, int] = {}          # stock for listings to be added at next visits
        for m in self.machines.values():
            for pid in m.planned_adds:
                first[pid] = first.get(pid, 0) + self._initial_qty(m, pid)
        items: list[dict[str, Any]] = []
        catalog, ceil, sqrt, good = self.books.catalog, math.ceil, math.sqrt, self.books.good
        horizon = LEAD + 1 + 4
        for pid, rate in need.items():
            expected = rate * horizon
            target = ceil(expected + 1.5 * sqrt(expected))
            initial = first.get(pid, 0)
            if initial > target:
                target = initial
            if catalog[pid].life <= 30:
                target = min(target, max(initial, ceil(rate * 14)))
            short = target - good(pid, good_after)[0] - transit.get(pid, 0)
            if short >= 3 and short >= 0.25 * target:
                items.append({"product_id": pid, "quantity": int(short)})
        for m in self.machines.values():
            m.planned_adds = []
        # spend what the cash allows, keeping a reserve for fees; fastest sellers first
        budget = self.cash - CASH_RESERVE
        items.sort(key=lambda it: -need.get(it["product_id"], 0.0))
        affordable = []
        for it in items:
            cost = it["quantity"] * self.books.catalog[it["product_id"]].cost
            if cost > budget:
                continue
            budget -= cost
            affordable.append(it)
        items = affordable
        if not items:
            return
        for i in range(0, len(items), 100):
            out = call("place_order", {"items": items[i:i + 100]})
            lines = [(items[i + a["index"]]["product_id"], items[i + a["index"]]["quantity"])
                     for a in out.get("accepted", [])]
            if lines:
                self.books.pending[out["accepted"][0]["order_id"]] = lines

    def _initial_qty(self, m: MachineView, pid: str) -> int:
        return max(MIN_DEPTH + 1, math.ceil(m.rates.get(pid, 0.0) * MAX_CYCLE))

    def _day_of(self, iso: str) -> int:
        """The simulated day of a date the tools reported (memoised: dates repeat)."""
        day = self._days.get(iso)
        if day is None:
            day = self._days[iso] = self.day + (dt.date.fromisoformat(iso) - self.today).days
        return day
