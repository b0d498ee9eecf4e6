"""The mutable business state of one trial and the day cycle's mechanics.

Money is integer fen throughout (1 CNY = 100 fen); floats appear only inside the demand
draw. A ``Ledger`` line records every cash movement, so accounting invariants can be
checked every day: cash moves only by sales, purchases, fees and fines, and units are
conserved from order to sale, discard or write-off.
"""

from __future__ import annotations

from typing import Any

import datetime as dt
import hashlib
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from . import _demand as demand
from ._calendar import DayInfo, day_info
from ._stock import Stock
from ._world import World

FIXED_FEE = 8_000            # fen per day
MACHINE_RENT = 400           # fen per machine per day
WAREHOUSE_RENT = 3           # fen per unit per day (expired units included)
VISIT_FEE = 3_500            # fen per machine per day visited
EXPIRED_SALE_FINE = 100_000  # fen per expired unit sold
STARTING_CASH = 4_000_000    # fen
LEAD_TIME = 3
SALES_COLUMNS = ("day", "machine", "product", "price", "units_on_shelf", "units_sold",
                 "revenue", "cogs")
BANKRUPT_AFTER = 10
_price, _units = attrgetter("price"), attrgetter("units")


@dataclass(slots=True)
class Order:
    id: str
    placed: int
    due: int
    items: list[tuple[int, int]]                 # (product index, units)
    cost: int
    arrived: int | None = None


@dataclass(slots=True)
class DayPnL:
    revenue: int = 0
    cogs: int = 0            # cost of unexpired units sold
    purchases: int = 0
    fees: int = 0            # fixed fee + machine rent + warehouse rent
    visit_fees: int = 0
    fines: int = 0
    waste: int = 0           # cost of units that expired today + unexpired units discarded
    units_sold: int = 0
    expired_sold: int = 0
    visits: int = 0
    transfers: int = 0       # an arena's payments: received from other operators less paid

    @property
    def net(self) -> int:
        """Change of net assets: what the business earned today."""
        return (self.revenue - self.cogs - self.fees - self.visit_fees - self.fines
                - self.waste + self.transfers)


@dataclass(slots=True)
class UnitCounts:
    """Cumulative unit flows, for the conservation invariant."""

    ordered: int = 0
    sold: int = 0
    discarded: int = 0
    written_off: int = 0


@dataclass(frozen=True, slots=True)
class Offer:
    """A night's listings as customers meet them (``Business.offer``)."""

    rows: np.ndarray              # one SALES_COLUMNS row per listing, by machine
    on: np.ndarray                # the rows of the stocked listings
    stocked: list[Any]            # their ``Listing`` objects
    listed: np.ndarray            # their machine, product, price, units (4 rows)
    per_machine: list[int]        # listings per machine
    attempts: np.ndarray          # purchase attempts per machine
    draws: np.ndarray             # one uniform draw per attempt, machine by machine
    heat: np.ndarray              # tonight's heat multiplier per product

    def sales(self, biz: Business, fill: np.ndarray | None = None) -> np.ndarray:
        """The units each stocked listing sells when these customers choose among its
        listings alone."""
        ms, ks, prices, units = self.listed
        if not len(ms):
            return np.zeros(0, np.int64)
        return demand.day_sales(biz.world.hidden, ms, ks, units, prices.astype(float),
                                biz.ref_price_f[ks], self.heat, self.attempts, self.draws,
                                fill)


class Business:
    """State and day-cycle mechanics of one trial. Tools validate; this class executes."""

    def __init__(self, world: World, seed: int, days: int, start: dt.date) -> None:
        self.world = world
        self._iso: dict[int, str] = {}
        self.seed = seed
        self.horizon = days
        self.start = start
        self.unit_cost = np.array([p.unit_cost for p in world.products], dtype=np.int64)
        self.cost = [p.unit_cost for p in world.products]      # the same, for Python loops
        self._shelf_life = [p.shelf_life for p in world.products]
        self._site_types = [m.site_type for m in world.machines]
        self._machine_index = np.arange(len(world.machines))
        self.ref_price = np.array([p.ref_price for p in world.products], dtype=np.int64)
        self.ref_price_f = self.ref_price.astype(float)
        self.cash = STARTING_CASH
        self.day = 0
        self.status = "running"
        self.days_below_zero = 0
        self.stock = Stock(self.cost, len(world.machines))
        # the stock's own structures, read everywhere (only the stock's moves change them)
        self.warehouse, self.shelves = self.stock.warehouse, self.stock.shelves
        self.on_shelf = self.stock.on_shelf
        self.orders: list[Order] = []
        self._first_open_order = 0     # orders before this index have all arrived
        self.in_transit = 0            # cost of the units ordered and not yet arrived
        self._day_value = 0            # stock value after this morning's expiries
        self._expiring_today = 0
        self.visited: set[int] = set()
        self.notes = ""
        self.units = UnitCounts()
        self.today = DayPnL()
        self.history: list[dict[str, Any]] = []          # one P&L row per finished day
        # one int64 array per finished day, one row per listing (SALES_COLUMNS), by machine
        self.sales: list[np.ndarray] = []
        self.sales_offsets: list[np.ndarray] = []   # per day: first row of each machine
        # units sold per (machine, product) over the last 7 and 30 finished days
        shape = (len(world.machines), len(world.products))
        self.sold_7d, self.sold_30d = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
        self._arrivals = demand.Arrivals(seed, world.hidden)
        self.attempts_log: list[np.ndarray] = []
        self.info: DayInfo = day_info(start)
        self.weather = demand.weather(seed, 1, self.info)
        self._start_day()

    # ------------------------------------------------------------------ the calendar
    def date_of(self, day: int) -> dt.date:
        return self.start + dt.timedelta(days=day - 1)

    def iso(self, day: int) -> str:
        """ISO date of a simulated day (memoised: reports print many)."""
        text = self._iso.get(day)
        if text is None:
            text = self._iso[day] = self.date_of(day).isoformat()
        return text

    def recent_sales(self, window: int, machine: int | None = None) -> np.ndarray:
        """Sales rows (SALES_COLUMNS) of the last ``window`` finished days, optionally of
        one machine."""
        parts = []
        for i in range(max(0, len(self.sales) - window), len(self.sales)):
            rows = self.sales[i]
            if machine is not None:
                off = self.sales_offsets[i]
                rows = rows[off[machine]:off[machine + 1]]
            parts.append(rows)
        return np.concatenate(parts) if parts else np.zeros((0, len(SALES_COLUMNS)), np.int64)

    @property
    def done(self) -> bool:
        return self.status != "running"

    def _start_day(self) -> None:
        """Deliveries arrive, fees are charged, expiries are marked."""
        self.day += 1
        self.today = DayPnL()
        self.visited = set()
        self.info = day_info(self.date_of(self.day))
        self.weather = demand.weather(self.seed, self.day, self.info)
        for order in self.orders[self._first_open_order:]:
            if order.arrived is None and order.due <= self.day:
                order.arrived = self.day
                self.stock.receive(order.items, self._shelf_life, self.day)
                self.in_transit -= order.cost
        while self._first_open_order < len(self.orders) and \
                self.orders[self._first_open_order].arrived is not None:
            self._first_open_order += 1
        expiring, value = self.stock.value_on(self.day)
        self._day_value, self._expiring_today = value + self.in_transit, expiring
        self.today.fees = FIXED_FEE + MACHINE_RENT * len(self.shelves) \
            + WAREHOUSE_RENT * self.stock.wh_units
        self.cash -= self.today.fees
        self.today.waste += expiring

    def end_day(self, night: tuple[Offer, np.ndarray] | None = None) -> None:
        """Customers buy, visit fees are charged, the day is recorded and the next begins.
        ``night``: tonight's offer and the units each of its listings sold, decided
        elsewhere (an arena's market, where customers choose among every operator's
        listings); by default this business's own customers choose among its own."""
        if self.done:
            return
        if night is None:
            offer = self.offer()
            night = offer, offer.sales(self)
        self._book(*night)
        self.today.visits = len(self.visited)
        self.today.visit_fees = VISIT_FEE * len(self.visited)
        self.cash -= self.today.visit_fees
        self.history.append(self._day_row())
        self.days_below_zero = self.days_below_zero + 1 if self.cash < 0 else 0
        if self.days_below_zero >= BANKRUPT_AFTER:
            self.status = "bankrupt"
        elif self.day >= self.horizon:
            self.status = "completed"
        else:
            self._start_day()

    def offer(self) -> Offer:
        """Tonight's listings as the customers meet them, and the customers: each
        machine's purchase attempts (drawn from the seed, whoever plays) and their draws."""
        info, wx = self.info, self.weather
        multipliers = np.array([demand.site_multiplier(site, info, wx)
                                for site in self._site_types])
        attempts = self._arrivals.draw(self.day, multipliers)
        self.attempts_log.append(attempts)       # hidden: for tests and metrics only
        heat = demand.product_multiplier(self.world.hidden.heat, wx)
        draws = demand.customer_draws(self.seed, self.day, attempts)
        day, shelves = self.day, self.shelves
        per_machine = [len(shelf) for shelf in shelves]
        listings = list(chain.from_iterable(shelf.values() for shelf in shelves))
        n = len(listings)
        cols = np.empty((4, n), np.int64)
        cols[0] = np.repeat(self._machine_index, per_machine)
        cols[1] = np.fromiter(chain.from_iterable(shelves), np.int64, n)
        cols[2] = np.fromiter(map(_price, listings), np.int64, n)
        cols[3] = np.fromiter(map(_units, listings), np.int64, n)
        # each machine's empty listings first, then its stocked ones, in listing order
        order = np.argsort(cols[0] * 2 + (cols[3] > 0), kind="stable")
        rows = np.zeros((n, len(SALES_COLUMNS)), dtype=np.int64)
        rows[:, 0] = day
        rows[:, 1:5] = cols[:, order].T
        on = np.flatnonzero(rows[:, 4])
        stocked = list(map(listings.__getitem__, order[on].tolist()))
        return Offer(rows, on, stocked, cols[:, order[on]], per_machine, attempts, draws,
                     heat)

    def _book(self, offer: Offer, sold: np.ndarray) -> None:
        """Tonight's sales: ``sold`` units of each stocked listing of ``offer`` leave the
        shelves, oldest first. Sales rows: per machine, its empty listings first, then
        the stocked ones (SALES_COLUMNS)."""
        day, t, rows, on = self.day, self.today, offer.rows, offer.on
        if len(on):
            stocked = offer.stocked
            ms, ks, prices, units = offer.listed
            cogs = sold * self.unit_cost[ks]
            expired = self.stock.sell(stocked, ms, sold, cogs, day)
            t.expired_sold += expired
            t.fines += EXPIRED_SALE_FINE * expired
            rows[on, 5], rows[on, 6], rows[on, 7] = sold, sold * prices, cogs
            n_sold = int(sold.sum())
            t.revenue += int(rows[on, 6].sum())
            t.cogs += int(cogs.sum())
            t.units_sold += n_sold
            self.units.sold += n_sold
        self.sales.append(rows)
        self.sales_offsets.append(np.cumsum([0, *offer.per_machine]))
        for window, sold_in in ((7, self.sold_7d), (30, self.sold_30d)):
            # a listing is one row a day, so each (machine, product) appears once per day
            sold_in[rows[:, 1], rows[:, 2]] += rows[:, 5]
            if len(self.sales) > window:
                old = self.sales[-1 - window]
                sold_in[old[:, 1], old[:, 2]] -= old[:, 5]
        self.cash += t.revenue - t.fines

    # ------------------------------------------------------------------ valuation
    @property
    def wh_units(self) -> int:
        return self.stock.wh_units

    def warehouse_summary(self) -> tuple[int, int, int, int]:
        """(units, cost of unexpired units, units expiring within 7 days, expired units)."""
        return self.stock.warehouse_summary(self.day)

    def shelf_units(self, m: int) -> int:
        return self.on_shelf[m]

    def inventory_value(self) -> int:
        """Cost value of unexpired units on shelves, in the warehouse and in transit (fen).

        Kept without a scan: during a day, stock value moves only by purchases (+),
        cost of goods sold (−) and waste (−); ``recount_inventory_value`` checks it.
        """
        t = self.today
        return self._day_value + t.purchases - t.cogs - (t.waste - self._expiring_today)

    def recount_inventory_value(self) -> int:
        """``inventory_value`` recomputed from every batch (for invariant checks)."""
        return self.stock.recount(self.day)[2] + self._transit_value()

    def _transit_value(self) -> int:
        """Cost value of units ordered and not yet arrived (fen), recounted (the day
        cycle keeps it as ``in_transit``)."""
        return sum(self.cost[k] * n for o in self.open_orders() for k, n in o.items)

    def open_orders(self) -> list[Order]:
        """Orders not yet delivered, oldest first."""
        return [o for o in self.orders[self._first_open_order:] if o.arrived is None]

    def net_assets(self) -> int:
        return self.cash + self.inventory_value()

    def unit_census(self) -> dict[str, int]:
        """Where every unit ever ordered is now (for the conservation invariant)."""
        return {
            "transit": sum(n for o in self.orders if o.arrived is None for _, n in o.items),
            "warehouse": sum(b.units for bs in self.warehouse.values() for b in bs),
            "shelves": sum(self.stock.count_shelf(m) for m in range(len(self.shelves))),
            "sold": self.units.sold,
            "discarded": self.units.discarded,
            "written_off": self.units.written_off,
        }

    def fingerprint(self) -> str:
        """A hash of the whole business state: equal states, equal fingerprints."""
        state = (
            self.day, self.status, self.cash, self.days_below_zero, self.notes,
            sorted(self.visited),
            sorted((k, [(b.expiry, b.arrived, b.units) for b in bs])
                   for k, bs in self.warehouse.items()),
            [sorted((k, lst.price, lst.listed_day, lst.units,
                     [(b.expiry, b.arrived, b.units) for b in lst.batches])
                    for k, lst in shelf.items()) for shelf in self.shelves],
            [(o.id, o.placed, o.due, o.items, o.cost, o.arrived) for o in self.orders],
            (self.units.ordered, self.units.sold, self.units.discarded, self.units.written_off),
            [(f, getattr(self.today, f)) for f in DayPnL.__slots__],
            len(self.history),
        )
        return hashlib.sha256(repr(state).encode()).hexdigest()

    def _day_row(self) -> dict[str, Any]:
        t = self.today
        return {
            "day": self.day, "date": self.date_of(self.day).isoformat(),
            "cash": self.cash, "net_assets": self.net_assets(),
            "revenue": t.revenue, "cogs": t.cogs, "purchases": t.purchases, "fees": t.fees,
            "visit_fees": t.visit_fees, "fines": t.fines, "waste_cost": t.waste,
            "units_sold": t.units_sold, "expired_units_sold": t.expired_sold,
            "machines_visited": t.visits, "transfers": t.transfers, "net": t.net,
        }
