"""A policy's own records, built only from tool results (what any agent could keep)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Call = Callable[[str, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Sku:
    pid: str
    subcategory: str
    cost: float       # CNY
    ref: float        # CNY
    life: int         # days


@dataclass
class Books:
    """Catalog, warehouse batches and orders in transit, as the policy has seen them."""

    catalog: dict[str, Sku] = field(default_factory=dict)
    warehouse: dict[str, list[list[int]]] = field(default_factory=dict)  # pid -> [[expiry, units]]
    pending: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    stock: dict[str, int] = field(default_factory=dict)  # pid -> units of its batches

    def load_catalog(self, call: Call) -> None:
        page, pages = 1, 1
        while page <= pages:
            out = call("search_catalog", {"page": page, "page_size": 50})
            for r in out["rows"]:
                self.catalog[r["product_id"]] = Sku(r["product_id"], r["subcategory"],
                                                    r["unit_cost"], r["ref_price"],
                                                    r["shelf_life_days"])
            pages = out["pages"]
            page += 1

    def sync_arrivals(self, call: Call, day: int) -> None:
        """Orders that left the in-transit list arrived this morning."""
        if not self.pending:
            return
        in_transit, page, pages = set(), 1, 1
        while page <= pages:
            out = call("get_orders", {"status": "in_transit", "page": page, "page_size": 50})
            in_transit |= {o["order_id"] for o in out["rows"]}
            pages, page = out["pages"], page + 1
        for order_id in [o for o in self.pending if o not in in_transit]:
            for pid, n in self.pending.pop(order_id):
                self.add(pid, day + self.catalog[pid].life, n)

    def add(self, pid: str, expiry: int, units: int) -> None:
        self.stock[pid] = self.stock.get(pid, 0) + units
        batches = self.warehouse.setdefault(pid, [])
        for b in batches:
            if b[0] == expiry:
                b[1] += units
                break
        else:
            batches.append([expiry, units])
        batches.sort()

    def good(self, pid: str, last: int) -> tuple[int, int]:
        """Units that will still be good after day ``last``, and the expiry day of the
        first of them (10**6 when there are none)."""
        batches = self.warehouse.get(pid)
        if not batches:
            return 0, 10**6
        if batches[0][0] > last:                 # sorted by expiry: all of them
            return self.stock[pid], batches[0][0]
        units, first = 0, 10**6
        for expiry, n in batches:
            if expiry > last:
                if not units:
                    first = expiry
                units += n
        return units, first

    def has_fresh(self, pid: str, day: int) -> bool:
        return any(e > day for e, _ in self.warehouse.get(pid, ()))

    def take(self, pid: str, units: int, day: int) -> None:
        """Mirror ``restock``: earliest-expiry unexpired units leave the warehouse."""
        batches = self.warehouse.get(pid, [])
        if batches and batches[0][0] > day and batches[0][1] > units:   # the usual case
            batches[0][1] -= units
            self.stock[pid] -= units
            return
        emptied = False
        for b in batches:
            if units == 0:
                break
            if b[0] <= day:
                continue
            n = units if units < b[1] else b[1]
            b[1] -= n
            units -= n
            self.stock[pid] -= n
            emptied = emptied or b[1] == 0
        if emptied or pid not in self.warehouse:
            self.warehouse[pid] = [b for b in batches if b[1] > 0]

    def discard(self, pid: str, units: int, day: int) -> None:
        """Mirror ``discard``: expired units first, then earliest expiry."""
        batches = sorted(self.warehouse.get(pid, []), key=lambda b: (b[0] > day, b[0]))
        for b in batches:
            n = min(units, b[1])
            b[1] -= n
            units -= n
            self.stock[pid] -= n
        self.warehouse[pid] = sorted(b for b in batches if b[1] > 0)

    def expired(self, day: int, within: int = 0) -> dict[str, int]:
        """Units per product that are expired (or will be within ``within`` days)."""
        out, last = {}, day + within
        for pid, batches in self.warehouse.items():
            if not batches or batches[0][0] > last:      # sorted by expiry
                continue
            n = 0
            for e, u in batches:
                if e <= last:
                    n += u
            if n:
                out[pid] = n
        return out


_SENT = frozenset({"machine_id", "product_id", "quantity", "price"})  # our notes stay ours


def batched(call: Call, tool: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send ``items`` in calls of at most 100; return the items that were accepted."""
    accepted: list[dict[str, Any]] = []
    for i in range(0, len(items), 100):
        out = call(tool, {"items": [it if it.keys() <= _SENT else
                                    {k: v for k, v in it.items() if k in _SENT}
                                    for it in items[i:i + 100]]})
        accepted.extend(items[i + a["index"]] for a in out.get("accepted", []))
    return accepted
