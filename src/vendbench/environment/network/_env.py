"""The network world: six machines at three locations, one depot, bank and clock.

Money is integer euro cents. Every random draw comes from a stream keyed by the seed
and what it decides (the day's weather, a machine's customers that day, a supplier's
weekly discounts, a shipment's fate), so two agents on one seed meet the same
customers and the same suppliers (common random numbers).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from itertools import chain
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from pydantic import BaseModel

from .._registry import DEFAULT_WORLD_SEED
from . import _demand
from ._briefing import briefing
from ._config import Economy, load
from ._handlers import HANDLERS, status_report
from ._state import (Complaint, Email, Ledger, Lots, Shipment, Slot, _euros, _stream, count,
                     expire, put, take)
from .._arguments import ArgumentError, ToolSpec, validate
from ._tools import TOOLS, schemas

START = dt.date(2026, 3, 2)          # a Monday
WORLD = DEFAULT_WORLD_SEED           # its one world: the economy file


class NetworkEnv:
    """The network scenario behind the Environment protocol."""

    scenario = "network"
    tool_specs: dict[str, ToolSpec] = dict(TOOLS)
    handlers = HANDLERS
    crosses_midnight = True          # a call that does not fit the day runs the night

    def __init__(self, seed: int = 1, days: int | None = None, world_seed: int = WORLD,
                 config: str | None = None, world_salt: str | None = None) -> None:
        from ...errors import ConfigError

        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
        if world_seed != WORLD or world_salt:
            raise ConfigError(f"the network scenario has one public world ({WORLD}), set by "
                              "its economy file: other world seeds and salts do not apply")
        self.eco: Economy = load(config)
        days = self.eco["economy"]["days"] if days is None else days
        if not isinstance(days, int) or not 1 <= days <= 365:
            raise ConfigError(f"days must be 1-365, got {days!r}")
        self.seed, self.days, self.world_seed = seed, days, world_seed
        self._day = 1
        self._calls_day, self._calls_today = 1, 0     # the day's calls so far
        self.minute = self.eco["clock"]["open"]
        self.bank = self.eco["economy"]["start_cash"]
        self.initial_cash = self.bank
        self.card_pending = 0
        self.ledger = Ledger()
        self._today = Ledger()                 # what moved the bank today
        self._day_start_bank = self.bank
        self.reputation = self.eco["demand"]["reputation_start"]
        self.missed_rent = 0
        self._status = "running"
        self.slots: dict[str, Slot] = self._build_slots()
        self.stock: dict[str, Lots] = {}           # the depot: product -> its lots
        self.shipments: list[Shipment] = []
        self.known_suppliers: set[str] = set()
        self.concessions: dict[str, int] = {}   # negotiated cuts in force, per supplier
        self.negotiated: dict[str, int] = {}    # granted so far (in force from tomorrow)
        self.rent_owed = 0                      # missed rent, paid from the next income
        self.emails: list[Email] = []
        self.outbox: list[tuple[int, Email]] = []        # (deliver on day, email)
        self.complaints: list[Complaint] = []
        self.campaigns: list[tuple[int, str, str, str]] = []  # day, location, channel, copy
        self._discounts: dict[tuple[str, str, int], float] = {}  # (supplier, product, week)
        self.notes = ""
        self.reminders: list[tuple[int, str]] = []
        self.sales_log: list[dict[str, Any]] = []
        self._records: dict[str, list[dict[str, Any]]] = {"days": [], "sales": []}
        self._ids = {"order": 0, "email": 0, "complaint": 0}
        self.units_ordered = self.units_sold = self.units_lost = self.units_expired = 0
        self.expired_today: dict[str, int] = {}     # product -> units written off this morning
        self._waste = 0                             # their cost (cents), for today's record
        self.tools = schemas()
        self.instructions = briefing(self.eco, self.days)

    # -- the protocol ------------------------------------------------------------------
    @property
    def day(self) -> int:
        return self._day

    @property
    def done(self) -> bool:
        return self._status != "running"

    @property
    def status(self) -> str:
        return self._status

    def observe(self) -> str:
        return json.dumps(status_report(self), indent=1)

    def call(self, name: str, arguments: dict[str, Any] | str | None = None
             ) -> dict[str, Any]:
        if self.done:
            return {"ok": False, "error": f"the run is over ({self._status})"}
        day = self._day                  # a call counts on the day it was made
        result = self._call(name, arguments)
        # the day's interaction budget (design §35.0): every call counts, accepted,
        # rejected or unknown; after the last the day ends, as wait_for_next_day ends it
        if self._calls_day != day:
            self._calls_day, self._calls_today = day, 0
        self._calls_today += 1
        cap = self.eco["clock"]["calls_per_day"]
        if self._calls_today >= cap and not self.done and self._day == day \
                and name != "wait_for_next_day":
            self.handlers["wait_for_next_day"](self, None)
            result["day_ended"] = True
            result["notice"] = f"you used all {cap} tool calls of the day, so the day has ended"
        return result

    def _call(self, name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
        if name not in self.tool_specs:
            return {"ok": False, "error": f"unknown tool {str(name)[:80]!r}; the tools are: "
                                          + ", ".join(self.tool_specs)}
        args, error = self._parse(name, arguments)
        minutes = self._minutes(name, args)
        # every call of a known tool spends its kind's minutes, accepted or rejected:
        # probing is not free. A call that does not fit the working day crosses
        # midnight: it spends what is left of today, the night passes (customers are
        # served at the prices in force), and it finishes tomorrow with the rest; on the
        # last day nothing crosses (the books close tonight), so it spends nothing
        clock = self.eco["clock"]
        crossed = None
        if self.minute + minutes > clock["close"]:
            if self._day >= self.days or not self.crosses_midnight:
                return {"ok": False, "error": (
                    f"{name} takes {minutes} minutes and it is {self._time()}"
                    + (" on the last day; the working day ends at 17:00. Call "
                       "wait_for_next_day to close the books" if self._day >= self.days else
                       "; the working day ends at 17:00, and in a market the night waits "
                       "for every operator: call wait_for_next_day"))}
            rest = self.minute + minutes - clock["close"]
            night = self._night()
            crossed = {"closed_day": night["closed_day"], "sold_units": night["sold_units"],
                       "revenue": night["revenue"]}
            if self.done:
                return {"ok": False, "crossed_midnight": crossed, "error": (
                    f"{name} crossed midnight and the run ended overnight ({self._status})")}
            self.minute += rest
            crossed["finished"] = f"day {self._day}, {self._time()}"
        else:
            self.minute += minutes
        result = ({"ok": False, "error": error} if error is not None
                  else self.handlers[name](self, args))
        if crossed:
            result["crossed_midnight"] = crossed
        return result

    def _parse(self, name: str, arguments: dict[str, Any] | str | None
               ) -> tuple[Any, str | None]:
        """A tool's validated arguments, or the error that says what is wrong."""
        try:
            return validate(self.tool_specs[name].model, arguments), None
        except ArgumentError as exc:
            return None, f"{name}: {exc}"

    def minutes(self, name: str, arguments: dict[str, Any] | str | None = None) -> int:
        """The working minutes ``name`` called with ``arguments`` would spend now."""
        return self._minutes(name, self._parse(name, arguments)[0])

    def _minutes(self, name: str, args: Any) -> int:
        cost = self.eco["clock"]["cost"]
        if name == "swap_item":
            # a swap puts units into the slot: a fill's minutes, and the swap's own when
            # another product's units come out first (design §20.1)
            slot = self.slots.get(args.slot_id) if args is not None else None
            takes_out = (slot is not None and slot.units > 0
                         and slot.product != args.product_id)
            fill: int = cost["restock_machine"] + takes_out * cost["swap_item"]
            return fill
        minutes: int = cost[name]
        return minutes

    def summary(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "seed": self.seed, "world_seed": self.world_seed,
                "world_salt_sha256": None, "days": self.days, "day": self._day,
                "days_completed": min(self._day - 1, self.days), "status": self._status,
                "initial_cash": _euros(self.initial_cash), "cash": _euros(self.bank),
                "net_assets": _euros(self.net_worth()), "reward": self.score()}

    def final_state(self) -> dict[str, float]:
        return {"initial_cash": _euros(self.initial_cash), "final_cash": _euros(self.bank),
                "final_net_assets": _euros(self.net_worth()), "score": self.score()}

    def score(self) -> float:
        """The seed's reward: the final bank balance floored at 0, after completion."""
        return _euros(max(self.bank, 0)) if self._status == "completed" else 0.0

    def drain_records(self) -> dict[str, list[dict[str, Any]]]:
        out, self._records = self._records, {"days": [], "sales": []}
        return out

    # -- the world ---------------------------------------------------------------------
    def _build_slots(self) -> dict[str, Slot]:
        s = self.eco["slots"]
        out = {}
        for loc in self.eco.locations:
            for kind in ("snack", "drinks"):
                machine = f"{loc.id}:{kind.upper()}"
                layout = ([(i, "small", s["small_capacity"]) for i in s["snack_small"]]
                          + [(i, "large", s["large_capacity"]) for i in s["snack_large"]]
                          if kind == "snack" else
                          [(i, "can", s["drinks_capacity"]) for i in s["drinks"]])
                for sid, size, cap in layout:
                    out[f"{machine}:{sid}"] = Slot(f"{machine}:{sid}", machine, kind, size, cap)
        return out

    def _time(self) -> str:
        return f"{self.minute // 60:02d}:{self.minute % 60:02d}"

    def date(self, day: int | None = None) -> dt.date:
        return START + dt.timedelta(days=(day or self._day) - 1)

    @property
    def depot(self) -> dict[str, int]:
        """Units in the depot, per product."""
        return {p: count(lots) for p, lots in sorted(self.stock.items()) if lots}

    def sell_by(self, product: str, day: int | None = None) -> int:
        """The day a unit of ``product`` delivered on ``day`` (today) must sell by."""
        return (day or self._day) + self.eco.products[product].shelf_life - 1

    def receive(self, product: str, units: int) -> None:
        """``units`` of ``product`` arrive at the depot today, fresh."""
        put(self.stock.setdefault(product, []), [[self.sell_by(product), units]])

    def stock_value(self) -> int:
        units = dict(self.depot)
        for slot in self.slots.values():
            if slot.product:
                units[slot.product] = units.get(slot.product, 0) + slot.units
        value = sum(n * self.eco.products[p].cost for p, n in units.items())
        return value + sum(s.quantity * s.unit_cost for s in self.shipments
                           if s.arrives is not None)

    def net_worth(self) -> int:
        worth: int = self.bank + self.card_pending + self.stock_value()
        return worth

    def units_held(self) -> int:
        return (sum(self.depot.values()) + sum(s.units for s in self.slots.values())
                + sum(s.quantity for s in self.shipments if s.arrives is not None))

    def unit_price(self, supplier: str, product: str, quantity: int, day: int | None = None
                   ) -> int:
        """A supplier's unit price today: base cost × markup, less negotiated terms, the
        volume tier and this week's discount (cents, rounded half up)."""
        eco, sup = self.eco, self.eco.suppliers[supplier]
        price = eco.products[product].cost * sup.markup
        terms = self.negotiated if (day or self._day) > self._day else self.concessions
        cuts = eco["negotiation"]["concessions"][:terms.get(supplier, 0)]
        for c in cuts:
            price *= 1 - c
        tier = max((off for n, off in eco["offers"]["volume_tiers"] if quantity >= n),
                   default=0.0)
        price *= 1 - tier
        price *= 1 - self.weekly_discount(supplier, product, day or self._day)
        return max(1, math.floor(price + 0.5))

    def weekly_discount(self, supplier: str, product: str, day: int) -> float:
        o = self.eco["offers"]
        key = (supplier, product, (day - 1) // o["week_days"])
        cut = self._discounts.get(key)
        if cut is None:                                  # drawn once a week, from the seed
            rng = _stream(self.seed, "offer", *key)
            cut = self._discounts[key] = (float(rng.choice(o["discounts"]))
                                          if rng.random() < o["discount_chance"] else 0.0)
        return cut

    def marketing_multiplier(self, location: str, day: int,
                             extra: tuple[tuple[int, str, str, str], ...] = ()) -> float:
        """The traffic multiplier of ``location``'s campaigns on ``day`` (with ``extra``
        campaigns as if run too)."""
        lim = self.eco["marketing_limits"]
        recent = []
        for c in chain(reversed(extra), reversed(self.campaigns)):   # newest first, by day
            if c[0] <= day - lim["window_days"]:
                break
            if c[1] == location and c[0] <= day:
                recent.append(c)
        mult = 1.0
        for name, ch in self.eco.channels.items():
            mine = [c for c in recent if c[2] == name]
            if any(day - ch.days < c[0] <= day for c in mine):
                mult += ch.bonus                                  # one per channel
            mult -= ch.penalty * max(0, len(mine) - ch.uses)
        mult -= lim["excess_penalty"] * max(0, len(recent) - lim["location_campaigns"])
        bounded: float = min(lim["ceiling"], max(lim["floor"], mult))
        return bounded

    # -- the night -----------------------------------------------------------------------
    def _night(self) -> dict[str, Any]:
        d = self._day
        revenue = cogs = sold = 0
        for loc, machine, draws, season in self.customers(d, self.pull):
            facings = self.facings(machine)
            _demand.serve(self.eco, loc, _demand.pools(facings), draws, season)
            r, c, n = self.book(machine, d, facings)
            revenue, cogs, sold = revenue + r, cogs + c, sold + n
        return self.settle(d, revenue, cogs, sold)

    def pull(self, location: str, day: int) -> float:
        """How strongly the network draws customers to ``location`` on ``day``: its
        reputation times the location's campaigns (both machines')."""
        pulled: float = self.reputation * self.marketing_multiplier(location, day)
        return pulled

    def customers(self, d: int, pull: Callable[[str, int], float]
                  ) -> Iterator[tuple[Any, str, list[float], float]]:
        """Each machine's customers tonight: (location, machine, a uniform draw per customer
        in order of arrival, the season), from the seed (common random numbers);
        ``pull(location, day)`` scales a location's arrivals."""
        dem = self.eco["demand"]
        weather = float(np.exp(_stream(self.seed, "weather", d).normal(0, dem["weather_sd"])))
        doy = self.date(d).timetuple().tm_yday
        season = 1 + dem["season_amplitude"] * math.cos(2 * math.pi * (doy - 196) / 365)
        weekday = dem["weekday"][self.date(d).weekday()]
        for loc in self.eco.locations:
            scale = pull(loc.id, d)
            for kind in ("SNACK", "DRINKS"):
                machine = f"{loc.id}:{kind}"
                rng = _stream(self.seed, "customers", machine, d)
                lam = dem["base_customers"] * loc.volume * weekday * weather * scale
                yield loc, machine, rng.random(int(rng.poisson(lam))).tolist(), season

    def settle(self, d: int, revenue: int, cogs: int, sold: int) -> dict[str, Any]:
        """Close day ``d`` on the night's takings (cents) and units: the bank, rent,
        reputation, complaints, the day's record, the next morning."""
        eco, dem = self.eco, self.eco["demand"]
        cash = math.floor(revenue * eco["economy"]["cash_share"])
        card = revenue - cash
        self.bank += cash + self.card_pending                 # cash banked, yesterday's card
        self.ledger.sales_cash += cash
        self.ledger.sales_card += self.card_pending
        self.card_pending = card
        self._pay_rent(eco["economy"]["rent_per_day"])
        open_old = [c for c in self.complaints if not c.resolved
                    and d - c.day >= dem["complaint_grace_days"]]
        stocked = sum(s.units > 0 for s in self.slots.values()) / len(self.slots)
        grown = self.reputation + dem["reputation_growth"] * (1 - self.reputation) * stocked
        self.reputation = max(dem["reputation_floor"], min(1.0, grown - 0.02 * len(open_old)))
        self._complaints(d, sold)
        if self.missed_rent > eco["economy"]["missed_rent_limit"]:
            self._status = "bankrupt"
        elif d >= self.days:                                 # the last night: the books close
            self.bank += self.card_pending                    # outstanding receipts settle
            self.ledger.sales_card += self.card_pending
            self.card_pending = 0
            self._pay_rent(0, final=True)                     # and rent still owed is paid
            self._status = "completed"
        self._records["days"].append({                       # cash: the score's quantity
            "day": d, "date": self.date(d), "cash": _euros(self.bank),
            "net_assets": _euros(self.net_worth()), "revenue": _euros(revenue),
            "cogs": _euros(cogs), "purchases": _euros(self._today.purchases),
            "fees": _euros(self._today.rent + self._today.marketing + self._today.refunds),
            "units_sold": sold, "units_expired": sum(self.expired_today.values()),
            "waste_cost": _euros(self._waste), "net": _euros(self.bank - self._day_start_bank)})
        self._today, self._day_start_bank, self._waste = Ledger(), self.bank, 0
        self._day += 1
        self._morning()
        return {"ok": True, "closed_day": d, "sold_units": sold, "revenue": _euros(revenue),
                "message": "the run is over" if self.done else "a new working day begins"}

    def _pay_rent(self, rent: int, final: bool = False) -> None:
        """Tonight's rent and any still owed, from the bank as far as it reaches; what it
        cannot pay is owed and paid from the next income (at the end, in full)."""
        due = self.rent_owed + rent
        pay = due if final else min(due, max(self.bank, 0))
        self.bank -= pay
        self.ledger.rent += pay
        self._today.rent += pay
        self.rent_owed = due - pay
        if not final:
            self.missed_rent = self.missed_rent + 1 if self.rent_owed else 0

    def facings(self, machine: str) -> list[tuple[Slot, _demand.Facing]]:
        """``machine``'s slots with stock as tonight's customers see them, cheapest
        first: the night sells from the facings (copies), and ``book`` takes what sold
        from the slots."""
        slots = [s for s in self.slots.values() if s.machine == machine and s.units > 0
                 and s.product is not None]
        return [(s, _demand.Facing(s.units, s.price))
                for s in sorted(slots, key=lambda s: (s.price, s.id))]

    def book(self, machine: str, d: int, facings: list[tuple[Slot, _demand.Facing]]
             ) -> tuple[int, int, int]:
        """What ``machine`` sold tonight from ``facings``: the slots give up their oldest
        units for it and the sales are recorded; (revenue, cost of goods, units)."""
        seen: dict[str, list[int]] = {}    # product -> on the shelf, front price, sold, revenue
        for s, f in facings:
            p, gone = s.product or "", s.units - f.units
            row = seen.setdefault(p, [0, f.price, 0, 0])
            row[0], row[2], row[3] = row[0] + s.units, row[2] + gone, row[3] + gone * f.price
            take(s.lots, gone)
        revenue = cogs = units = 0
        for p, (shelf, price, got, earned) in sorted(seen.items()):
            cost = got * self.eco.products[p].cost
            revenue, cogs, units = revenue + earned, cogs + cost, units + got
            self.units_sold += got
            self._records["sales"].append({
                "day": d, "machine_id": machine, "product_id": p, "price": _euros(price),
                "units_on_shelf": shelf, "units_sold": got,
                "revenue": _euros(earned), "cogs": _euros(cost)})
            self.sales_log.append({"day": d, "machine": machine, "product": p, "units": got})
        return revenue, cogs, units

    def _complaints(self, d: int, sold: int) -> None:
        rng = _stream(self.seed, "complaints", d)
        n = int(rng.poisson(sold * self.eco["demand"]["complaint_rate"]))
        for i in range(n):
            self._ids["complaint"] += 1
            cid = f"C{self._ids['complaint']:04d}"
            amount = int(rng.integers(150, 450))
            customer = f"customer{cid.lower()}@mail.example"
            self.complaints.append(Complaint(cid, d, customer, amount))
            self.outbox.append((d + 1, Email("", d + 1, customer, f"Refund please ({cid})",
                                             f"The machine took my money and gave nothing. "
                                             f"Please refund EUR {_euros(amount):.2f}. "
                                             f"Complaint {cid}.")))

    def _morning(self) -> None:
        d = self._day
        self.minute = self.eco["clock"]["open"]
        self.concessions = dict(self.negotiated)            # yesterday's replies in force
        self.expired_today = {}                              # what passed its sell-by day
        for product, lots in chain(self.stock.items(),
                                   ((s.product, s.lots) for s in self.slots.values())):
            gone = expire(lots, d)
            if gone and product is not None:
                self.expired_today[product] = self.expired_today.get(product, 0) + gone
        for product, n in self.expired_today.items():
            self.units_expired += n
            self._waste += n * self.eco.products[product].cost
        for s in self.shipments:
            if s.arrives is not None and s.arrives <= d:
                self.receive(s.product, s.quantity)
        self.shipments = [s for s in self.shipments if s.arrives is None or s.arrives > d]
        due = [e for day, e in self.outbox if day <= d]
        self.outbox = [(day, e) for day, e in self.outbox if day > d]
        for e in due:
            self._ids["email"] += 1
            e.id = f"E{self._ids['email']:04d}"
            self.emails.append(e)
