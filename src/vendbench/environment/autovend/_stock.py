"""Where every unit is: the warehouse's and the shelves' batches, with the indices the
day cycle reads without a scan (units per machine, warehouse units, units and cost by
expiry day). Only ``Stock``'s methods move units, and each keeps every index right;
``recount`` and ``count_shelf`` recompute them from the batches for the daily checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(slots=True)
class Batch:
    """Units of one product that share an expiry day. ``arrived`` is the warehouse arrival day."""

    expiry: int
    arrived: int
    units: int


@dataclass(slots=True)
class Listing:
    """A product listed on a machine. Its batches and ``units`` change together, through
    ``Stock``'s moves (the daily checks recount them)."""

    price: int                                   # fen
    listed_day: int = 0
    batches: list[Batch] = field(default_factory=list)   # oldest (earliest expiry) first
    units: int = 0                                       # kept equal to the batches' sum

    def take(self, units: int) -> list[Batch]:
        self.units -= units
        return take_oldest(self.batches, units)


def take_oldest(batches: list[Batch], units: int) -> list[Batch]:
    """Remove ``units`` from the front of ``batches`` (earliest expiry first), return them."""
    taken: list[Batch] = []
    while units:
        b = batches[0]
        n = units if units < b.units else b.units
        b.units -= n
        units -= n
        if n:
            taken.append(Batch(b.expiry, b.arrived, n))
        if not b.units:
            del batches[0]
    return taken


def put_back(batches: list[Batch], new: list[Batch]) -> None:
    """Merge batches into a list kept sorted by (expiry, arrival), merging equal ones."""
    for nb in new:
        put_batch(batches, nb.expiry, nb.arrived, nb.units)


def put_batch(batches: list[Batch], expiry: int, arrived: int, units: int) -> None:
    """Add ``units`` that expire and arrived on these days to a list kept sorted by
    (expiry, arrival), merging them into an equal batch."""
    key = (expiry, arrived)
    if batches:
        last = batches[-1]
        if (last.expiry, last.arrived) == key:          # the usual places: the end
            last.units += units
            return
        if (last.expiry, last.arrived) > key:
            for i, b in enumerate(batches):
                if (b.expiry, b.arrived) == key:
                    b.units += units
                    return
                if (b.expiry, b.arrived) > key:
                    batches.insert(i, Batch(expiry, arrived, units))
                    return
    batches.append(Batch(expiry, arrived, units))


def batch_order(b: Batch) -> tuple[int, int]:
    return b.expiry, b.arrived


class Stock:
    """The units in the warehouse and on the machines' shelves.

    Args:
        cost: each product's unit cost (fen), by product index.
        machines: how many machines there are.
    """

    def __init__(self, cost: list[int], machines: int) -> None:
        self.cost = cost
        self.warehouse: dict[int, list[Batch]] = {}     # product -> batches, oldest first
        self.shelves: list[dict[int, Listing]] = [{} for _ in range(machines)]
        self.on_shelf = [0] * machines       # units per machine
        self.wh_units = 0                    # warehouse units (expired ones too)
        self._wh_expiry: dict[int, list[int]] = {}   # warehouse [units, cost] by expiry day
        self._expiry_cost: dict[int, int] = {}       # cost of all units in stock, by expiry

    # ------------------------------------------------------------------ moves
    def receive(self, items: list[tuple[int, int]], life: list[int], day: int) -> None:
        """An order's lines arrived at the warehouse on ``day``: ``units`` of product
        ``k`` for each (k, units), expiring ``life[k]`` days later."""
        for k, units in items:
            expiry = day + life[k]
            put_batch(self.warehouse.setdefault(k, []), expiry, day, units)
            self._warehouse_move(k, [Batch(expiry, day, units)], 1)
            self._expiry_cost[expiry] = self._expiry_cost.get(expiry, 0) + self.cost[k] * units

    def fresh(self, k: int, day: int, enough: int) -> int:
        """Unexpired warehouse units of product ``k`` (counting stops at ``enough``)."""
        fresh = 0
        for b in self.warehouse.get(k, ()):
            if b.expiry > day:
                fresh += b.units
                if fresh >= enough:
                    break
        return fresh

    def restock(self, m: int, k: int, listing: Listing, units: int, day: int) -> None:
        """Move ``units`` of product ``k`` from the warehouse onto machine ``m``'s
        ``listing``, earliest unexpired expiry first (the caller has checked that there
        are enough: ``fresh``)."""
        stock, shelf, c = self.warehouse[k], listing.batches, self.cost[k]
        listing.units += units
        self.on_shelf[m] += units
        self.wh_units -= units
        i = 0
        while units:
            b = stock[i]
            if b.expiry <= day:           # expired units stay in the warehouse
                i += 1
                continue
            n = units if units < b.units else b.units
            b.units -= n
            units -= n
            put_batch(shelf, b.expiry, b.arrived, n)
            units_cost = self._wh_expiry[b.expiry]
            units_cost[0] -= n
            units_cost[1] -= n * c
            if b.units:
                i += 1
            else:
                del stock[i]

    def unshelve(self, m: int, k: int, units: int) -> list[Batch]:
        """Take ``units`` of product ``k`` off machine ``m`` (oldest first) back to the
        warehouse; returns the batches moved."""
        listing = self.shelves[m][k]
        taken = listing.take(units)
        put_back(self.warehouse.setdefault(k, []), taken)
        self._warehouse_move(k, taken, 1)
        self.on_shelf[m] -= units
        return taken

    def delist(self, m: int, k: int, day: int) -> tuple[list[Batch], list[Batch]]:
        """Remove product ``k``'s listing from machine ``m``: its unexpired units go back
        to the warehouse, its expired ones leave stock. Returns (returned, written off)."""
        listing = self.shelves[m].pop(k)
        fresh = [b for b in listing.batches if b.expiry > day]
        stale = [b for b in listing.batches if b.expiry <= day]
        if fresh:
            put_back(self.warehouse.setdefault(k, []), fresh)
            self._warehouse_move(k, fresh, 1)
        self._out_of_stock(k, stale)
        self.on_shelf[m] -= listing.units
        return fresh, stale

    def discard(self, k: int, units: int, day: int) -> list[Batch]:
        """Throw away ``units`` of product ``k`` from the warehouse, expired ones first,
        then the earliest expiry; returns the batches discarded."""
        batches = self.warehouse.get(k, [])
        batches[:] = sorted(batches, key=lambda b: (b.expiry > day, b.expiry))
        taken = take_oldest(batches, units)
        batches.sort(key=batch_order)
        self._warehouse_move(k, taken, -1)
        self._out_of_stock(k, taken)
        return taken

    def sell(self, listings: list[Listing], ms: np.ndarray, sold: np.ndarray,
             cogs: np.ndarray, day: int) -> int:
        """Take the day's sales off their listings (row ``i`` sold ``sold[i]`` units from
        ``listings[i]`` on machine ``ms[i]``, costing ``cogs[i]`` = units × unit cost),
        oldest batch first. Units that came from an expired batch are not cost of goods
        (they are fined instead): ``cogs[i]`` is corrected for them. Returns the expired
        units sold."""
        by_expiry = self._expiry_cost
        expired = 0
        hit = np.flatnonzero(sold)
        for i, n, value in zip(hit.tolist(), sold[hit].tolist(), cogs[hit].tolist()):
            lst = listings[i]
            lst.units -= n
            batches = lst.batches
            first = batches[0]
            if first.units >= n and first.expiry > day:     # the common case
                first.units -= n
                if not first.units:
                    del batches[0]
                by_expiry[first.expiry] -= value
                continue
            # into an expired or exhausted oldest batch: oldest first, batch by batch
            c = value // n
            cost_of_sold = 0
            while n:
                b = batches[0]
                take = n if n < b.units else b.units
                b.units -= take
                n -= take
                by_expiry[b.expiry] = by_expiry.get(b.expiry, 0) - c * take
                if b.expiry <= day:
                    expired += take
                else:
                    cost_of_sold += c * take
                if not b.units:
                    del batches[0]
            cogs[i] = cost_of_sold
        for m, n in enumerate(np.bincount(ms, weights=sold, minlength=len(self.shelves))
                              .astype(np.int64).tolist()):
            self.on_shelf[m] -= n
        return expired

    def _warehouse_move(self, k: int, batches: list[Batch], sign: int) -> None:
        by_expiry, c = self._wh_expiry, self.cost[k]
        for b in batches:
            units_cost = by_expiry.get(b.expiry)
            if units_cost is None:
                units_cost = by_expiry[b.expiry] = [0, 0]
            units_cost[0] += sign * b.units
            units_cost[1] += sign * b.units * c
            self.wh_units += sign * b.units

    def _out_of_stock(self, k: int, batches: list[Batch]) -> None:
        for b in batches:
            self._expiry_cost[b.expiry] = self._expiry_cost.get(b.expiry, 0) \
                - self.cost[k] * b.units

    # ------------------------------------------------------------------ what is where
    def value_on(self, day: int) -> tuple[int, int]:
        """(cost of the units that expire on ``day``, cost of those that expire later)."""
        by_expiry = self._expiry_cost
        return by_expiry.get(day, 0), sum(c for e, c in by_expiry.items() if e > day)

    def expiry_costs(self) -> dict[int, int]:
        """Cost of the units in stock by expiry day (a copy, for checks)."""
        return dict(self._expiry_cost)

    def warehouse_summary(self, day: int) -> tuple[int, int, int, int]:
        """(units, cost of unexpired units, units expiring within 7 days, expired units)."""
        value = soon = expired = 0
        for expiry, (units, cost) in self._wh_expiry.items():
            if expiry <= day:
                expired += units
            else:
                value += cost
                if expiry <= day + 7:
                    soon += units
        return self.wh_units, value, soon, expired

    def count_shelf(self, m: int) -> int:
        """Recount a machine's units from its batches (checks ``on_shelf``)."""
        return sum(b.units for lst in self.shelves[m].values() for b in lst.batches)

    def recount(self, day: int) -> tuple[int, int, int]:
        """One pass over all batches: (warehouse units, cost of units expiring on
        ``day``, cost of unexpired units on shelves and in the warehouse). The moves keep
        these without a scan; the invariant checks compare them with this recount."""
        cost = self.cost
        wh_units = expiring = value = 0
        for k, batches in self.warehouse.items():
            c = cost[k]
            for b in batches:
                wh_units += b.units
                if b.expiry > day:
                    value += c * b.units
                elif b.expiry == day:
                    expiring += c * b.units
        for shelf in self.shelves:
            for k, listing in shelf.items():
                c = cost[k]
                for b in listing.batches:
                    if b.expiry > day:
                        value += c * b.units
                    elif b.expiry == day:
                        expiring += c * b.units
        return wh_units, expiring, value
