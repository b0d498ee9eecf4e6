"""The mutable business state of one trial and the day cycle's mechanics.

Money is integer fen throughout (1 CNY = 100 fen); floats appear only inside the demand
draw. A ``Ledger`` line records every cash movement, so accounting invariants can be
checked every day: cash moves only by sales, purchases, fees and fines, and units are
conserved from order to sale, discard or write-off.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field

import numpy as np

from . import _demand as demand
from ._calendar import DayInfo, day_info
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


@dataclass(slots=True)
class Batch:
    """Units of one product that share an expiry day. ``arrived`` is the warehouse arrival day."""

    expiry: int
    arrived: int
    units: int


@dataclass(slots=True)
class Listing:
    """A product listed on a machine. Its batches and ``units`` change together: through
    ``take``, ``Business.to_shelf`` and the day's sales (the daily checks recount them)."""

    price: int                                   # fen
    listed_day: int = 0
    batches: list[Batch] = field(default_factory=list)   # oldest (earliest expiry) first
    units: int = 0                                       # kept equal to the batches' sum

    def take(self, units: int) -> list[Batch]:
        self.units -= units
        return take_oldest(self.batches, units)


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

    @property
    def net(self) -> int:
        """Change of net assets: what the business earned today."""
        return self.revenue - self.cogs - self.fees - self.visit_fees - self.fines - self.waste


@dataclass(slots=True)
class UnitCounts:
    """Cumulative unit flows, for the conservation invariant."""

    ordered: int = 0
    sold: int = 0
    discarded: int = 0
    written_off: int = 0


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
        self.ref_price = np.array([p.ref_price for p in world.products], dtype=np.int64)
        self.ref_price_f = self.ref_price.astype(float)
        self.cash = STARTING_CASH
        self.day = 0
        self.status = "running"
        self.days_below_zero = 0
        self.warehouse: dict[int, list[Batch]] = {}
        self.wh_units = 0     # warehouse units (expired ones too), kept by every move
        self._wh_expiry: dict[int, list[int]] = {}   # warehouse [units, cost] by expiry day
        self._expiry_cost: dict[int, int] = {}   # cost of units in stock, by expiry day
        self.shelves: list[dict[int, Listing]] = [{} for _ in world.machines]
        self.orders: list[Order] = []
        self._first_open_order = 0     # orders before this index have all arrived
        self._day_value = 0            # stock value after this morning's expiries
        self._expiring_today = 0
        self.visited: set[int] = set()
        self.notes = ""
        self.units = UnitCounts()
        self.today = DayPnL()
        self.history: list[dict] = []          # one P&L row per finished day
        # one int64 array per finished day, one row per listing (SALES_COLUMNS), by machine
        self.sales: list[np.ndarray] = []
        self.sales_offsets: list[np.ndarray] = []   # per day: first row of each machine
        # units sold per (machine, product) over the last 7 and 30 finished days
        shape = (len(world.machines), len(world.products))
        self.sold_7d, self.sold_30d = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
        self.on_shelf = [0] * len(world.machines)   # units per machine, kept by every move
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
                order.arrived = day = self.day
                for k, n in order.items:
                    expiry = day + self.world.products[k].shelf_life
                    put_batch(self.warehouse.setdefault(k, []), expiry, day, n)
                    self.into_warehouse(k, [Batch(expiry, day, n)])
                    self.stock_in(k, expiry, n)
        while self._first_open_order < len(self.orders) and \
                self.orders[self._first_open_order].arrived is not None:
            self._first_open_order += 1
        day, by_expiry = self.day, self._expiry_cost
        expiring = by_expiry.get(day, 0)
        value = sum(c for e, c in by_expiry.items() if e > day)
        self._day_value, self._expiring_today = value + self._transit_value(), expiring
        self.today.fees = FIXED_FEE + MACHINE_RENT * len(self.shelves) \
            + WAREHOUSE_RENT * self.wh_units
        self.cash -= self.today.fees
        self.today.waste += expiring

    def end_day(self) -> None:
        """Customers buy, visit fees are charged, the day is recorded and the next begins."""
        if self.done:
            return
        self._sell()
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

    def _sell(self) -> None:
        """Customers buy at every machine. Sales rows: per machine, its empty listings
        first, then the stocked ones (SALES_COLUMNS)."""
        multipliers = np.array([demand.site_multiplier(m.site_type, self.info, self.weather)
                                for m in self.world.machines])
        attempts = self._arrivals.draw(self.day, multipliers)
        self.attempts_log.append(attempts)       # hidden: for tests and metrics only
        heat = demand.product_multiplier(self.world.hidden.heat, self.weather)
        draws = demand.customer_draws(self.seed, self.day, attempts)
        day, t = self.day, self.today
        machines: list[int] = []
        products: list[int] = []
        listings: list[Listing] = []
        per_machine = []
        for m, shelf in enumerate(self.shelves):
            products += shelf.keys()
            listings += shelf.values()
            machines += [m] * len(shelf)
            per_machine.append(len(shelf))
        cols = np.array((machines, products, [lst.price for lst in listings],
                         [lst.units for lst in listings]), dtype=np.int64).reshape(4, -1)
        # each machine's empty listings first, then its stocked ones, in listing order
        order = np.argsort(cols[0] * 2 + (cols[3] > 0), kind="stable")
        rows = np.zeros((len(listings), len(SALES_COLUMNS)), dtype=np.int64)
        rows[:, 0] = day
        rows[:, 1:5] = cols[:, order].T
        on = np.flatnonzero(rows[:, 4])
        if len(on):
            stocked = [listings[i] for i in order[on].tolist()]
            ms, ks, prices, units = (rows[on, c] for c in (1, 2, 3, 4))
            sold = demand.day_sales(self.world.hidden, ms, ks, units, prices.astype(float),
                                    self.ref_price_f[ks], heat, attempts, draws)
            cogs = sold * self.unit_cost[ks]
            hit = np.flatnonzero(sold)
            by_expiry, cost = self._expiry_cost, self.cost
            for i, k, n in zip(hit.tolist(), ks[hit].tolist(), sold[hit].tolist()):
                lst = stocked[i]
                lst.units -= n
                batches, c = lst.batches, cost[k]
                first = batches[0]
                if first.units >= n and first.expiry > day:     # the common case
                    first.units -= n
                    if not first.units:
                        del batches[0]
                    by_expiry[first.expiry] -= c * n
                    continue
                # into an expired or exhausted oldest batch: oldest first, batch by batch
                cost_of_sold = 0
                while n:
                    b = batches[0]
                    take = n if n < b.units else b.units
                    b.units -= take
                    n -= take
                    by_expiry[b.expiry] = by_expiry.get(b.expiry, 0) - c * take
                    if b.expiry <= day:
                        t.expired_sold += take
                        t.fines += EXPIRED_SALE_FINE * take
                    else:
                        cost_of_sold += c * take
                    if not b.units:
                        del batches[0]
                cogs[i] = cost_of_sold
            rows[on, 5], rows[on, 6], rows[on, 7] = sold, sold * prices, cogs
            n_sold = int(sold.sum())
            t.revenue += int(rows[on, 6].sum())
            t.cogs += int(cogs.sum())
            t.units_sold += n_sold
            self.units.sold += n_sold
            for m, n in enumerate(np.bincount(ms, weights=sold, minlength=len(self.shelves))
                                  .astype(np.int64).tolist()):
                self.on_shelf[m] -= n
        self.sales.append(rows)
        self.sales_offsets.append(np.cumsum([0] + per_machine))
        for window, sold_in in ((7, self.sold_7d), (30, self.sold_30d)):
            # a listing is one row a day, so each (machine, product) appears once per day
            sold_in[rows[:, 1], rows[:, 2]] += rows[:, 5]
            if len(self.sales) > window:
                old = self.sales[-1 - window]
                sold_in[old[:, 1], old[:, 2]] -= old[:, 5]
        self.cash += t.revenue - t.fines

    # ------------------------------------------------------------------ valuation
    def stock_in(self, k: int, expiry: int, units: int) -> None:
        """Units of product ``k`` entered stock (they arrived)."""
        self._expiry_cost[expiry] = self._expiry_cost.get(expiry, 0) + self.cost[k] * units

    def into_warehouse(self, k: int, batches: list[Batch]) -> None:
        """Units of product ``k`` entered the warehouse (arrived, or came off a shelf)."""
        self._warehouse_move(k, batches, 1)

    def out_of_warehouse(self, k: int, batches: list[Batch]) -> None:
        """Units of product ``k`` left the warehouse (restocked or discarded)."""
        self._warehouse_move(k, batches, -1)

    def to_shelf(self, k: int, listing: Listing, units: int) -> None:
        """Move ``units`` of product ``k`` from the warehouse onto ``listing``, earliest
        unexpired expiry first (the caller has checked that there are enough)."""
        stock, shelf, day, c = self.warehouse[k], listing.batches, self.day, self.cost[k]
        listing.units += units
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

    def _warehouse_move(self, k: int, batches: list[Batch], sign: int) -> None:
        by_expiry, c = self._wh_expiry, self.cost[k]
        for b in batches:
            units_cost = by_expiry.get(b.expiry)
            if units_cost is None:
                units_cost = by_expiry[b.expiry] = [0, 0]
            units_cost[0] += sign * b.units
            units_cost[1] += sign * b.units * c
            self.wh_units += sign * b.units

    def warehouse_summary(self) -> tuple[int, int, int, int]:
        """(units, cost of unexpired units, units expiring within 7 days, expired units)."""
        day = self.day
        value = soon = expired = 0
        for expiry, (units, cost) in self._wh_expiry.items():
            if expiry <= day:
                expired += units
            else:
                value += cost
                if expiry <= day + 7:
                    soon += units
        return self.wh_units, value, soon, expired

    def stock_out(self, k: int, batches: list[Batch]) -> None:
        """Units of product ``k`` left stock (sold, discarded or written off)."""
        for b in batches:
            self._expiry_cost[b.expiry] = self._expiry_cost.get(b.expiry, 0) \
                - self.cost[k] * b.units

    def shelf_units(self, m: int) -> int:
        return self.on_shelf[m]

    def count_shelf(self, m: int) -> int:
        """Recount a machine's units from its batches (checks ``on_shelf``)."""
        return sum(b.units for lst in self.shelves[m].values() for b in lst.batches)

    def _stock_pass(self) -> tuple[int, int, int]:
        """One pass over all stock: (warehouse units, cost of units expiring today,
        cost of unexpired units on shelves and in the warehouse). The day cycle keeps
        these without a scan (``wh_units``, ``stock_in``/``stock_out``); this recount is
        what the invariant checks compare them with."""
        day, cost = self.day, self.cost
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

    def inventory_value(self) -> int:
        """Cost value of unexpired units on shelves, in the warehouse and in transit (fen).

        Kept without a scan: during a day, stock value moves only by purchases (+),
        cost of goods sold (−) and waste (−); ``recount_inventory_value`` checks it.
        """
        t = self.today
        return self._day_value + t.purchases - t.cogs - (t.waste - self._expiring_today)

    def recount_inventory_value(self) -> int:
        """``inventory_value`` recomputed from every batch (for invariant checks)."""
        return self._stock_pass()[2] + self._transit_value()

    def _transit_value(self) -> int:
        """Cost value of units ordered and not yet arrived (fen)."""
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
            "shelves": sum(self.count_shelf(m) for m in range(len(self.shelves))),
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

    def _day_row(self) -> dict:
        t = self.today
        return {
            "day": self.day, "date": self.date_of(self.day).isoformat(),
            "cash": self.cash, "net_assets": self.net_assets(),
            "revenue": t.revenue, "cogs": t.cogs, "purchases": t.purchases, "fees": t.fees,
            "visit_fees": t.visit_fees, "fines": t.fines, "waste_cost": t.waste,
            "units_sold": t.units_sold, "expired_units_sold": t.expired_sold,
            "machines_visited": t.visits, "net": t.net,
        }
