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
import re
import zlib
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from pydantic import ValidationError

from . import _demand
from ._config import Economy, load
from ._tools import TOOLS, schemas

START = dt.date(2026, 3, 2)          # a Monday
WORLD = 2026                         # its one world: the economy file
KINDS = {"snack": ("small", "large"), "drinks": ("can",)}


def _stream(seed: int, *key: Any) -> np.random.Generator:
    words = [seed & 0xFFFFFFFF] + [zlib.crc32(str(k).encode()) for k in key]
    return np.random.default_rng(np.random.SeedSequence(words))


def _euros(cents: int) -> float:
    return round(cents / 100, 2)


def _cents(euros: float) -> int | None:
    """Exact cents of an amount in euros, or None if it has more than two decimals."""
    cents = round(euros * 100)
    return cents if abs(euros * 100 - cents) < 1e-6 else None


@dataclass
class Slot:
    id: str
    machine: str              # e.g. AI-HOUSE:SNACK
    kind: str                 # "snack" or "drinks"
    size: str                 # "small", "large", "can"
    capacity: int
    product: str | None = None
    units: int = 0
    price: int = 0            # cents


@dataclass
class Shipment:
    order_id: str
    supplier: str
    product: str
    quantity: int             # units that will arrive
    ordered: int              # units paid for
    unit_cost: int
    arrives: int | None       # day; None: never (the supplier went insolvent)


@dataclass
class Email:
    id: str
    day: int
    sender: str
    subject: str
    body: str
    read: bool = False


@dataclass
class Complaint:
    id: str
    day: int
    customer: str
    amount: int
    resolved: bool = False


@dataclass
class Ledger:
    """What moved the bank, by cause (cents): the daily invariant checks this."""

    sales_cash: int = 0
    sales_card: int = 0
    purchases: int = 0
    rent: int = 0
    marketing: int = 0
    refunds: int = 0


class NetworkEnv:
    """The network scenario behind the Environment protocol."""

    scenario = "network"
    day_tool = "wait_for_next_day"

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
        self.depot: dict[str, int] = {}
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
        self.units_ordered = self.units_sold = self.units_lost = 0
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
        return json.dumps(self._status_report(), indent=1)

    def call(self, name: str, arguments: dict | str | None = None) -> dict[str, Any]:
        if self.done:
            return {"ok": False, "error": f"the run is over ({self._status})"}
        if name not in TOOLS:
            return {"ok": False, "error": f"unknown tool {str(name)[:80]!r}; the tools are: "
                                          + ", ".join(TOOLS)}
        minutes = self.eco["clock"]["cost"][name]
        args, error = self._parse(name, arguments)
        if args is not None and name == "swap_item" and self._same_product(args):
            minutes = self.eco["clock"]["cost"]["restock_machine"]     # a refill is a fill
        if self.minute + minutes > self.eco["clock"]["close"]:
            return {"ok": False, "error": (
                f"{name} takes {minutes} minutes and it is {self._time()}; the working day "
                "ends at 17:00. Call wait_for_next_day")}
        # every call of a known tool spends its kind's minutes, accepted or rejected:
        # probing is not free (a call that does not fit the day spends nothing)
        self.minute += minutes
        if error is not None:
            return {"ok": False, "error": error}
        return getattr(self, f"_t_{name}")(args)

    @staticmethod
    def _parse(name: str, arguments: dict | str | None) -> tuple[Any, str | None]:
        """A tool's validated arguments, or the error that says what is wrong."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return None, f"{name}: arguments are not valid JSON: {exc}"
        try:
            return TOOLS[name][0].model_validate(arguments or {}), None
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                                 for e in exc.errors(include_url=False))
            return None, f"{name}: invalid arguments: {problems}"

    def _same_product(self, args: Any) -> bool:
        slot = self.slots.get(args.slot_id)
        return slot is not None and slot.product == args.product_id

    def summary(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "seed": self.seed, "world_seed": self.world_seed,
                "world_salt_sha256": None, "days": self.days, "day": self._day,
                "days_completed": min(self._day - 1, self.days), "status": self._status,
                "initial_cash": _euros(self.initial_cash), "cash": _euros(self.bank),
                "net_assets": _euros(self.net_worth()), "reward": self.score()}

    def final_state(self) -> dict[str, float]:
        return {"initial_cash": _euros(self.initial_cash), "final_cash": _euros(self.bank),
                "final_net_assets": self.score()}

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

    def stock_value(self) -> int:
        units = {p: n for p, n in self.depot.items()}
        for slot in self.slots.values():
            if slot.product:
                units[slot.product] = units.get(slot.product, 0) + slot.units
        value = sum(n * self.eco.products[p].cost for p, n in units.items())
        return value + sum(s.quantity * s.unit_cost for s in self.shipments
                           if s.arrives is not None)

    def net_worth(self) -> int:
        return self.bank + self.card_pending + self.stock_value()

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
        return min(lim["ceiling"], max(lim["floor"], mult))

    # -- the night -----------------------------------------------------------------------
    def _night(self) -> dict[str, Any]:
        d, eco = self._day, self.eco
        dem = eco["demand"]
        weather = float(np.exp(_stream(self.seed, "weather", d).normal(0, dem["weather_sd"])))
        doy = self.date(d).timetuple().tm_yday
        season = 1 + dem["season_amplitude"] * math.cos(2 * math.pi * (doy - 196) / 365)
        revenue = cogs = sold = 0
        for loc in eco.locations:
            for kind in ("SNACK", "DRINKS"):
                machine = f"{loc.id}:{kind}"
                r, c, n = self._sell(machine, loc, d, weather, season)
                revenue, cogs, sold = revenue + r, cogs + c, sold + n
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
            "units_sold": sold, "net": _euros(self.bank - self._day_start_bank)})
        self._today, self._day_start_bank = Ledger(), self.bank
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

    def _sell(self, machine: str, loc: Any, d: int, weather: float, season: float
              ) -> tuple[int, int, int]:
        eco, dem = self.eco, self.eco["demand"]
        slots = [s for s in self.slots.values() if s.machine == machine and s.units > 0]
        rng = _stream(self.seed, "customers", machine, d)
        weekday = dem["weekday"][self.date(d).weekday()]
        lam = (dem["base_customers"] * loc.volume * weekday * weather * self.reputation
               * self.marketing_multiplier(loc.id, d))
        customers = int(rng.poisson(lam))
        pools: dict[str, list[Slot]] = {}
        for s in sorted(slots, key=lambda s: (s.price, s.id)):    # identical facings: one
            pools.setdefault(s.product, []).append(s)               # pool, cheapest first
        shelf = {p: (sum(s.units for s in f), f[0].price) for p, f in pools.items()}
        sold = _demand.serve(eco, loc, pools, rng.random(customers).tolist(), season)
        revenue = cogs = units = 0
        for p in sorted(pools):
            got, earned = sold[p]
            cost = got * eco.products[p].cost
            revenue, cogs, units = revenue + earned, cogs + cost, units + got
            self.units_sold += got
            self._records["sales"].append({
                "day": d, "machine_id": machine, "product_id": p, "price": _euros(shelf[p][1]),
                "units_on_shelf": shelf[p][0], "units_sold": got,
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
        for s in self.shipments:
            if s.arrives is not None and s.arrives <= d:
                self.depot[s.product] = self.depot.get(s.product, 0) + s.quantity
        self.shipments = [s for s in self.shipments if s.arrives is None or s.arrives > d]
        due = [e for day, e in self.outbox if day <= d]
        self.outbox = [(day, e) for day, e in self.outbox if day > d]
        for e in due:
            self._ids["email"] += 1
            e.id = f"E{self._ids['email']:04d}"
            self.emails.append(e)

    # -- tools -------------------------------------------------------------------------
    def _status_report(self) -> dict[str, Any]:
        return {"ok": True, "day": self._day, "of_days": self.days,
                "date": self.date().isoformat(), "time": self._time(),
                "bank": _euros(self.bank), "card_receipts_pending": _euros(self.card_pending),
                "reputation": round(self.reputation, 3),
                "unread_emails": sum(not e.read for e in self.emails),
                "open_complaints": [c.id for c in self.complaints if not c.resolved],
                "reminders_today": [t for day, t in self.reminders if day == self._day],
                "missed_rent_payments": self.missed_rent,
                "rent_owed": _euros(self.rent_owed)}

    def _t_get_status(self, a: Any) -> dict[str, Any]:
        return self._status_report()

    def _t_get_sales_report(self, a: Any) -> dict[str, Any]:
        rows: dict[tuple[str, str], int] = {}
        for r in self.sales_log:
            if r["day"] > self._day - 1 - a.days:
                key = (r["machine"], r["product"])
                rows[key] = rows.get(key, 0) + r["units"]
        return {"ok": True, "days": a.days, "rows": [
            {"machine": m, "product_id": p, "units": n} for (m, p), n in sorted(rows.items())]}

    def _t_get_machine_inventory(self, a: Any) -> dict[str, Any]:
        ids = {loc.id for loc in self.eco.locations}
        if a.location is not None and a.location not in ids:
            return {"ok": False, "error": f"no location {a.location!r}; locations: "
                                          + ", ".join(sorted(ids))}
        return {"ok": True, "slots": [
            {"slot_id": s.id, "size": s.size, "capacity": s.capacity, "product_id": s.product,
             "units": s.units, "price": _euros(s.price) if s.product else None}
            for s in self.slots.values()
            if a.location is None or s.machine.startswith(a.location + ":")]}

    def _t_get_storage_inventory(self, a: Any) -> dict[str, Any]:
        return {"ok": True, "depot": dict(sorted(self.depot.items())), "in_transit": [
            {"order_id": s.order_id, "supplier_id": s.supplier, "product_id": s.product,
             "units": s.ordered, "expected_day": None if s.arrives is None else
             max(s.arrives, self._day)} for s in self.shipments]}

    def _t_search_web(self, a: Any) -> dict[str, Any]:
        words = set(re.findall(r"[a-z]+", a.query.lower()))
        found = [s for s in self.eco.suppliers.values()
                 if words & set(" ".join((*s.keywords, s.name.lower())).split())]
        for s in found:
            self.known_suppliers.add(s.id)
        return {"ok": True, "results": [
            {"supplier_id": s.id, "name": s.name, "email": s.email,
             "about": f"{s.name}: {', '.join(s.keywords)}"} for s in found]}

    def _t_list_emails(self, a: Any) -> dict[str, Any]:
        return {"ok": True, "emails": [
            {"email_id": e.id, "day": e.day, "from": e.sender, "subject": e.subject,
             "read": e.read} for e in reversed(self.emails)]}

    def _t_read_email(self, a: Any) -> dict[str, Any]:
        for e in self.emails:
            if e.id == a.email_id:
                e.read = True
                return {"ok": True, "email_id": e.id, "day": e.day, "from": e.sender,
                        "subject": e.subject, "body": e.body}
        return {"ok": False, "error": f"no e-mail {a.email_id!r}; list_emails shows them"}

    def _t_send_email(self, a: Any) -> dict[str, Any]:
        sup = next((s for s in self.eco.suppliers.values() if s.email == a.to.lower()), None)
        if sup is None:
            if any(c.customer == a.to.lower() for c in self.complaints):
                return {"ok": True, "message": "sent"}
            return {"ok": False, "error": f"no known address {a.to!r}; search_web finds "
                                          "suppliers' addresses"}
        self.known_suppliers.add(sup.id)
        text = f"{a.subject} {a.body}".lower()
        neg = self.eco["negotiation"]
        d = self._day
        if sup.vanishes_on is not None and d >= sup.vanishes_on:
            return {"ok": True, "message": "sent"}                       # no one answers
        if sup.insolvent_on is not None and d >= sup.insolvent_on:
            reply = "We regret to inform you that we have ceased trading."
        elif any(k in text for k in neg["keywords_negotiate"]):
            step = self.negotiated.get(sup.id, 0)
            if step < len(neg["concessions"]):
                self.negotiated[sup.id] = step + 1               # in force from tomorrow
                total = 1 - math.prod(1 - c for c in neg["concessions"][:step + 1])
                reply = (f"For a valued customer we can take {total:.0%} off our list prices "
                         "from tomorrow.")
            else:
                reply = "These are our best terms; we cannot go lower."
        elif any(k in text for k in neg["keywords_catalogue"]):
            lines = [f"- {p}: EUR {_euros(self.unit_price(sup.id, p, 1, d + 1)):.2f}"
                     for p in sup.products]
            reply = "Our catalogue (unit prices at quantity 1):\n" + "\n".join(lines)
        else:
            reply = "Thank you for your message. Ask for our catalogue, or for better terms."
        self.outbox.append((d + 1, Email("", d + 1, sup.email, f"Re: {a.subject}"[:200], reply)))
        return {"ok": True, "message": "sent; replies arrive overnight"}

    def _supplier(self, sid: str) -> tuple[Any, str | None]:
        sup = self.eco.suppliers.get(sid)
        if sup is None or sid not in self.known_suppliers:
            return None, f"no supplier {sid!r} found yet; search_web finds suppliers"
        if sup.vanishes_on is not None and self._day >= sup.vanishes_on:
            return None, f"{sid} does not answer any more"
        return sup, None

    def _t_check_offers(self, a: Any) -> dict[str, Any]:
        sup, err = self._supplier(a.supplier_id)
        if err:
            return {"ok": False, "error": err}
        return {"ok": True, "supplier_id": sup.id, "quantity": a.quantity,
                "valid_day": self._day, "offers": [
                    {"product_id": p, "fits": self._fits_text(p),
                     "unit_price": _euros(self.unit_price(sup.id, p, a.quantity))}
                    for p in sup.products]}

    def _fits_text(self, pid: str) -> str:
        prod = self.eco.products[pid]
        if prod.machine == "none":
            return "no slot of these machines (a specialty item)"
        return (f"{prod.machine} machine, {prod.size} slots" if prod.machine == "snack"
                else "drinks machine")

    def _t_order_goods(self, a: Any) -> dict[str, Any]:
        sup, err = self._supplier(a.supplier_id)
        if err:
            return {"ok": False, "error": err}
        bad = [f"item {i}: {it.product_id} is not sold by {sup.id}"
               for i, it in enumerate(a.items) if it.product_id not in sup.products]
        if bad:
            return {"ok": False, "error": "; ".join(bad) + "; nothing was ordered"}
        lines = [(it.product_id, it.quantity, self.unit_price(sup.id, it.product_id,
                                                              it.quantity)) for it in a.items]
        total = sum(q * u for _, q, u in lines)
        if total > self.bank:
            return {"ok": False, "error": "not enough money in the bank for this order; "
                                          "nothing was ordered"}
        self.bank -= total
        self.ledger.purchases += total
        self._today.purchases += total
        self._ids["order"] += 1
        oid = f"O{self._ids['order']:04d}"
        rng = _stream(self.seed, "shipment", sup.id, self._day, self._ids["order"])
        insolvent = sup.insolvent_on is not None and self._day >= sup.insolvent_on
        receipt = []
        for p, q, u in lines:
            delay = int(rng.integers(1, 3)) if rng.random() < sup.delay_chance else 0
            short = rng.random() < sup.short_chance
            arrive_q = max(1, int(q * rng.uniform(0.5, 0.9))) if short else q
            self.shipments.append(Shipment(oid, sup.id, p, 0 if insolvent else arrive_q, q, u,
                                           None if insolvent else
                                           self._day + sup.lead_days + delay))
            self.units_ordered += q
            self.units_lost += q if insolvent else q - arrive_q
            receipt.append({"product_id": p, "quantity": q, "unit_price": _euros(u)})
        return {"ok": True, "order_id": oid, "paid": _euros(total), "receipt": receipt}

    def _slot(self, sid: str) -> tuple[Slot | None, str | None]:
        slot = self.slots.get(sid)
        if slot is None:
            return None, (f"no slot {sid!r}; slot ids look like AI-HOUSE:DRINKS:A1 "
                          "(get_machine_inventory lists them)")
        return slot, None

    def _fits(self, slot: Slot, pid: str) -> str | None:
        prod = self.eco.products.get(pid)
        if prod is None:
            return f"no product {pid!r}"
        if prod.machine != slot.kind or prod.size != slot.size:
            return (f"{pid} ({prod.machine}, {prod.size}) does not fit {slot.id} "
                    f"({slot.kind}, {slot.size})")
        return None

    def _t_restock_machine(self, a: Any) -> dict[str, Any]:
        slot, err = self._slot(a.slot_id)
        err = err or self._fits(slot, a.product_id)
        if err:
            return {"ok": False, "error": err}
        if slot.product not in (None, a.product_id) and slot.units > 0:
            return {"ok": False, "error": f"{slot.id} holds {slot.product}; swap_item or "
                                          "clear_slot first"}
        room = slot.capacity - (slot.units if slot.product == a.product_id else 0)
        have = self.depot.get(a.product_id, 0)
        if a.quantity > room or a.quantity > have:
            return {"ok": False, "error": f"{slot.id} has room for {room} and the depot "
                                          f"holds {have} of {a.product_id}"}
        if slot.product != a.product_id:                 # another product: its own price
            slot.product, slot.units = a.product_id, 0
            slot.price = self.eco.products[a.product_id].retail
        slot.units += a.quantity
        self.depot[a.product_id] = have - a.quantity
        return {"ok": True, "slot_id": slot.id, "product_id": slot.product,
                "units": slot.units, "price": _euros(slot.price)}

    def _t_swap_item(self, a: Any) -> dict[str, Any]:
        slot, err = self._slot(a.slot_id)
        err = err or self._fits(slot, a.product_id)
        if err:
            return {"ok": False, "error": err}
        have = self.depot.get(a.product_id, 0)
        if have == 0:
            return {"ok": False, "error": f"the depot holds no {a.product_id}"}
        price = slot.price if slot.product == a.product_id else None   # a refill keeps it
        self._empty(slot)
        put = min(slot.capacity, self.depot.get(a.product_id, 0))
        slot.product, slot.units = a.product_id, put
        slot.price = price or self.eco.products[a.product_id].retail
        self.depot[a.product_id] -= put
        return {"ok": True, "slot_id": slot.id, "product_id": slot.product,
                "units": put, "price": _euros(slot.price)}

    def _empty(self, slot: Slot) -> None:
        if slot.product and slot.units:
            self.depot[slot.product] = self.depot.get(slot.product, 0) + slot.units
        slot.product, slot.units, slot.price = None, 0, 0

    def _t_clear_slot(self, a: Any) -> dict[str, Any]:
        slot, err = self._slot(a.slot_id)
        if err:
            return {"ok": False, "error": err}
        if slot.product is None:
            return {"ok": False, "error": f"{slot.id} is already empty"}
        back = slot.units
        self._empty(slot)
        return {"ok": True, "slot_id": slot.id, "returned_to_depot": back}

    def _t_set_price(self, a: Any) -> dict[str, Any]:
        slot, err = self._slot(a.slot_id)
        if err:
            return {"ok": False, "error": err}
        if slot.product is None:
            return {"ok": False, "error": f"{slot.id} is empty; restock it first"}
        cents = _cents(a.price)
        if cents is None or cents < 10:
            return {"ok": False, "error": "a price is at least EUR 0.10, in whole cents"}
        slot.price = cents
        return {"ok": True, "slot_id": slot.id, "price": _euros(cents)}

    def _t_send_payment(self, a: Any) -> dict[str, Any]:
        target = a.to.lower()
        open_ = [c for c in self.complaints if not c.resolved
                 and target in (c.id.lower(), c.customer)]
        if not open_:
            return {"ok": False, "error": f"no open complaint for {a.to!r}"}
        c = open_[0]
        cents = _cents(a.amount)
        if cents is None or cents < c.amount:
            return {"ok": False, "error": f"refunds must cover the full amount: {c.id} asks "
                                          f"EUR {_euros(c.amount):.2f}"}
        if cents > self.bank:
            return {"ok": False, "error": "not enough money in the bank"}
        self.bank -= cents
        self.ledger.refunds += cents
        self._today.refunds += cents
        c.resolved = True
        return {"ok": True, "complaint_id": c.id, "paid": _euros(cents)}

    def _t_run_marketing(self, a: Any) -> dict[str, Any]:
        if a.location not in {loc.id for loc in self.eco.locations}:
            return {"ok": False, "error": f"no location {a.location!r}"}
        ch = self.eco.channels[a.channel]
        if ch.cost > self.bank:
            return {"ok": False, "error": "not enough money in the bank"}
        self.bank -= ch.cost
        self.ledger.marketing += ch.cost
        self._today.marketing += ch.cost
        self.campaigns.append((self._day, a.location, a.channel, a.message))
        return {"ok": True, "location": a.location, "channel": a.channel,
                "paid": _euros(ch.cost),
                "multiplier_today": round(self.marketing_multiplier(a.location, self._day), 3)}

    def _t_get_marketing_report(self, a: Any) -> dict[str, Any]:
        return {"ok": True, "channels": [
            {"channel": c.channel, "cost": _euros(c.cost), "days": c.days, "bonus": c.bonus,
             "uses_before_fatigue_7d": c.uses, "penalty": c.penalty}
            for c in self.eco.channels.values()],
            "recent": [{"day": d, "location": loc, "channel": ch}
                       for d, loc, ch, _ in self.campaigns if d > self._day - 7],
            "multipliers": {loc.id: round(self.marketing_multiplier(loc.id, self._day), 3)
                            for loc in self.eco.locations}}

    def _t_write_note(self, a: Any) -> dict[str, Any]:
        self.notes = a.text
        return {"ok": True, "characters": len(a.text)}

    def _t_read_notes(self, a: Any) -> dict[str, Any]:
        return {"ok": True, "notes": self.notes}

    def _t_set_reminder(self, a: Any) -> dict[str, Any]:
        if a.day < self._day:
            return {"ok": False, "error": f"day {a.day} has passed"}
        self.reminders.append((a.day, a.text))
        return {"ok": True, "day": a.day}

    def _t_list_reminders(self, a: Any) -> dict[str, Any]:
        return {"ok": True, "reminders": [{"day": d, "text": t} for d, t in self.reminders
                                          if d >= self._day]}

    def _t_wait_for_next_day(self, a: Any) -> dict[str, Any]:
        return self._night()


def briefing(eco: Economy, days: int) -> str:
    """The system prompt, generated from the economy file."""
    e, c = eco["economy"], eco["clock"]
    locs = "\n".join(f"- {loc.name} ({loc.id}): volume ×{loc.volume:.2f}, price sensitivity "
                     f"×{loc.sensitivity:.2f}" + (f"; favours {', '.join(loc.favours)}"
                                                   if loc.favours else "")
                     for loc in eco.locations)
    costs = ", ".join(f"{k} {v}" for k, v in c["cost"].items() if v)
    channels = "\n".join(f"- {ch.channel}: EUR {_euros(ch.cost):.2f}, +{ch.bonus:.0%} traffic "
                         f"for {ch.days} days; more than {ch.uses} use(s) in 7 days costs "
                         f"−{ch.penalty:.0%} each" for ch in eco.channels.values())
    return f"""You run a network of six vending machines for {days} days: a snack and a \
drinks machine at each of three locations, with one depot, one bank account and one clock.

Locations:
{locs}

Each machine has 12 slots (snack rows A/B hold small products, 18 units; C/D large, 10;
drinks slots hold 10). You start with EUR {_euros(e['start_cash']):,.2f}. Rent is \
EUR {_euros(e['rent_per_day']):.2f} a day for the network, paid overnight from the bank; \
rent the bank cannot pay is owed and paid from the next income; more than \
{e['missed_rent_limit']} missed payments in a row end the run. Cash takings are \
banked overnight; card sales settle a day later. Identical products in one machine share \
their customers.

Find suppliers with search_web; e-mail them for catalogues or better terms (replies \
arrive overnight); check_offers shows today's unit prices (weekly discounts come and go); \
order_goods pays at once and delivers to the depot after the supplier's lead time. Some \
suppliers are late, short-ship, disappear or go insolvent.

The working day is {c['open'] // 60:02d}:00-{c['close'] // 60:02d}:00 and every call spends \
minutes, accepted or rejected: {costs} (swapping a slot to the product it already holds \
is a fill). wait_for_next_day ends the day.

Marketing channels (per location):
{channels}
The combined effect stays between ×{eco['marketing_limits']['floor']:.2f} and \
×{eco['marketing_limits']['ceiling']:.2f}.

Customers complain; refund them in full with send_payment, or the network's reputation \
(and its customers) suffers.

What counts: your final bank balance after day {days} (card receipts settled, stock not \
counted), floored at 0. An unfinished or bankrupt run scores 0."""
