"""The network scenario's privileged scripted operator (its ``baseline/oracle``).

It knows the economy file and the hidden demand model and plans with them, but acts
only through the 22 tools, within the working day:
- it buys each product where a received unit costs least today (suppliers' list
  prices, negotiated terms, volume tiers, this week's discounts, expected short
  shipments), from suppliers that will deliver, in lots that earn the volume tier,
  and never more than the rest of the horizon will sell; on a day a product that keeps
  is cheaper than in a week without discounts, what sells until it is as cheap again
  (the weekly discounts come from the seed), at most what sells before it expires; a
  fresh product (one that keeps under 30 days) just in time, in lots that sell by their
  sell-by day;
- it negotiates every supplier it buys from down to its best terms;
- it stocks every slot, all of a machine's products at least once and the extra
  slots to those that sell most among the products that keep, and prices each
  machine's products jointly at the optimum of the hidden model (a coordinate search
  over prices, at today's expected footfall, with each unit's cost and the fill time
  it takes, a minute valued more each day its fills run out of day and less each day
  they fit), re-pricing when the optimum moves;
- it refills the slots with the fewest days of sales left first (a fresh product's
  with what sells by its sell-by day), and lets the day's last fill cross midnight
  rather than leave the day's last minutes unspent;
- it markets on a weekly schedule that meets no fatigue or excess penalty
  (``weekly_schedule``), running each campaign of the day when the hidden model says
  its extra sales over its days pay for it;
- it refunds every complaint.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import _demand as demand

Call = Callable[[str, dict[str, Any]], dict[str, Any]]
PRICE_STEPS = [round(0.50 + 0.02 * i, 2) for i in range(76)]   # ×0.50 … ×2.00 reference
LOT = 100                                                  # the best volume tier
REPRICE = 0.04                                             # re-price when it moves this much
MINUTE_VALUE = 0.6              # cents a working minute is worth while the day has room
MINUTE_VALUE_MOST = 20.0        # ... and at most, when fills run out of day day after day
MINUTE_STEP = 1.3               # how far a day moves it
FRESH = 30                           # shelf lives under this many days are ordered to last
GROWTH = 1.25                        # a fresh product's sales may outgrow last week's by this
SLACK = 1.5                          # a fresh fill: this times what should sell by sell-by
SETTLED = 0.9                        # from this reputation on, once footfall has settled
UNDERCUT_FLOOR = 1.05                # in a market: undercut a rival down to this × unit cost


class NetworkOracle:
    name = "baseline/oracle"

    def __init__(self, env: Any) -> None:
        self.env = env
        self.eco = env.eco
        self.locs = {loc.id: loc for loc in self.eco.locations}
        self.machines = sorted({s.machine for s in env.slots.values()})
        self.plan = self._assortment()
        self.prices: dict[str, dict[str, int]] = {}           # machine -> product -> cents
        self.negotiated: set[str] = set()
        self._memo: dict[tuple[Any, ...], Any] = {}          # today's model figures
        self._carry: tuple[str, str, int] | None = None      # the fill that crosses midnight
        self.schedule = weekly_schedule(self.eco)             # day of the week -> channels
        self.minute_value = MINUTE_VALUE                      # cents; what a minute earns

    # -- the hidden model ------------------------------------------------------------
    def _loc(self, machine: str) -> Any:
        return self.locs[machine.split(":")[0]]

    def _customers(self, machine: str) -> float:
        """Expected customers of ``machine`` a day, at today's reputation and campaigns."""
        key = ("customers", machine, self.env.day, len(self.env.campaigns))
        if key not in self._memo:
            dem = self.eco["demand"]
            loc = self._loc(machine)
            self._memo[key] = (dem["base_customers"] * loc.volume * sum(dem["weekday"]) / 7
                               * self.env.reputation
                               * self.env.marketing_multiplier(loc.id, self.env.day))
        customers: float = self._memo[key]
        return customers

    def _shares(self, machine: str) -> dict[str, float]:
        """Each product's expected share of ``machine``'s customers at its prices."""
        offer = self.prices.get(machine, {})
        key = ("shares", machine, tuple(sorted(offer.items())))
        if key not in self._memo:
            self._memo[key] = demand.shares(self.eco, self._loc(machine), offer)
        shares: dict[str, float] = self._memo[key]
        return shares

    def _products(self, machine: str) -> list[str]:
        return sorted({p for s, p in self.plan.items() if self.env.slots[s].machine == machine})

    def _unit_cost(self, product: str) -> float:
        """What a received unit costs at the best live supplier today (cents)."""
        best = self._supplier(product, LOT)
        return best[1] if best else self.eco.products[product].cost * 1.2

    def _supplier(self, product: str, quantity: int) -> tuple[str, float] | None:
        """The live supplier whose received unit of ``product`` costs least today, and that
        cost (expected short shipments priced in)."""
        env, best = self.env, None
        for sup in self.eco.suppliers.values():
            if product not in sup.products or not self._delivers(sup):
                continue
            received = 1 - sup.short_chance * 0.3                 # short: 50-90 % arrives
            cost = env.unit_price(sup.id, product, quantity) / received
            cost *= 1 + 0.1 * sup.delay_chance                     # late stock sells less
            if best is None or cost < best[1]:
                best = (sup.id, cost)
        return best

    def _delivers(self, sup: Any, day: int | None = None) -> bool:
        d = self.env.day if day is None else day
        if sup.vanishes_on is not None and d >= sup.vanishes_on:
            return False
        arrives = d + sup.lead_days + 2
        return sup.insolvent_on is None or (d < sup.insolvent_on
                                            and arrives <= self.env.days)

    def _optimal_prices(self, machine: str) -> dict[str, int]:
        """The prices that maximise the machine's expected daily profit under the hidden
        model: each unit's cost plus the fill minutes it takes, by coordinate search."""
        loc, eco = self._loc(machine), self.eco
        products = self._products(machine)
        cap = {p: min(self.env.slots[s].capacity for s, q in self.plan.items()
                      if q == p and self.env.slots[s].machine == machine) for p in products}
        fill = eco["clock"]["cost"]["restock_machine"] * self.minute_value
        margin_cost = {p: self._unit_cost(p) + fill / cap[p] for p in products}
        steps = {p: [m * eco.products[p].retail for m in PRICE_STEPS] for p in products}
        weight = {p: [demand.attraction(eco, eco.products[p], loc, x) for x in steps[p]]
                  for p in products}
        pick = {p: PRICE_STEPS.index(1.0) for p in products}       # start at reference
        for _ in range(6):
            moved = False
            for p in products:
                rest = [q for q in products if q != p]
                w_rest = eco["demand"]["no_purchase"] + sum(weight[q][pick[q]] for q in rest)
                earn_rest = sum(weight[q][pick[q]] * (steps[q][pick[q]] - margin_cost[q])
                                for q in rest)
                best = max(range(len(PRICE_STEPS)), key=lambda i: (
                    (earn_rest + weight[p][i] * (steps[p][i] - margin_cost[p]))
                    / (w_rest + weight[p][i])))
                moved |= best != pick[p]
                pick[p] = best
            if not moved:
                break
        prices = {p: steps[p][pick[p]] for p in products}
        offer = {p: int(round(v / 10) * 10) for p, v in prices.items()}
        for p, rival in self._rivals(machine).items():
            # in a market the cheapest unit sells first: a rival at or below the
            # optimum is undercut by ten cents, while that still earns a margin
            under = rival - 10
            if p in offer and rival <= offer[p] and under >= margin_cost[p] * UNDERCUT_FLOOR:
                offer[p] = under
        return offer

    def _rivals(self, machine: str) -> dict[str, int]:
        """In an arena (design §23): the lowest price (cents) another operator offered each
        product at ``machine``'s location this morning, from the market itself (what
        see_competitors shows, read without spending minutes). Alone: nothing."""
        market = getattr(self.env, "market", None)
        if market is None:
            return {}
        location, kind = machine.split(":")
        out: dict[str, int] = {}
        for rival in market.competitors(self.env.seat, location) or []:
            for m in rival["machines"]:
                if m["machine"].endswith(f":{kind}"):
                    for f in m["facings"]:
                        cents = round(f["price"] * 100)
                        out[f["product"]] = min(out.get(f["product"], cents), cents)
        return out

    def _sold(self, product: str, days: int = 7) -> float:
        """Units of ``product`` sold a night over the last ``days`` (0 before any)."""
        env = self.env
        if env.day <= days:
            return 0.0
        key = ("sold", env.day)
        if key not in self._memo:
            units: dict[str, int] = {}
            for r in reversed(env.sales_log):
                if r["day"] < env.day - days:
                    break
                units[r["product"]] = units.get(r["product"], 0) + r["units"]
            nights = self._nights(env.day - days, days)
            self._memo[key] = {p: n / nights for p, n in units.items()}
        rate: float = self._memo[key].get(product, 0.0)
        return rate

    def _nights(self, first: int, count: int) -> float:
        """Nights ``first`` … ``first + count - 1`` in average nights' sales (weekdays
        sell more than weekends)."""
        week = self.eco["demand"]["weekday"]
        mean = sum(week) / 7
        nights: float = sum(week[self.env.date(d).weekday()]
                            for d in range(first, first + count)) / mean
        return nights

    def _daily_units(self, product: str) -> float:
        """Expected units of ``product`` sold a day over the whole network."""
        return sum(self._customers(m) * self._shares(m)[product] for m in self.machines
                   if product in self.prices.get(m, {}))

    def _assortment(self) -> dict[str, str]:
        """slot id -> product: every product a machine's slots fit and a supplier sells
        reliably once, the extra slots to the most attractive ones that keep."""
        plan: dict[str, str] = {}
        slots = self.env.slots
        for machine in self.machines:
            loc = self._loc(machine)
            for size in ("small", "large", "can"):
                ids = sorted(s.id for s in slots.values()
                             if s.machine == machine and s.size == size)
                prods = [p for p in self.eco.products.values()
                         if ids and p.machine == slots[ids[0]].kind and p.size == size
                         and self._reliable(p.id)]
                prods.sort(key=lambda p: (-demand.attraction(self.eco, p, loc, p.retail)
                                          * (p.retail - p.cost), p.id))
                # the extra facings hold stock that lasts: more fresh units on a shelf
                # only expire
                lasting = [p for p in prods if p.shelf_life >= FRESH] or prods
                for i, sid in enumerate(ids):
                    plan[sid] = (prods[i] if i < len(prods)
                                 else lasting[(i - len(prods)) % len(lasting)]).id
        return plan

    def _reliable(self, product: str) -> bool:
        return any(product in s.products and s.vanishes_on is None and s.insolvent_on is None
                   for s in self.eco.suppliers.values())

    # -- a day -------------------------------------------------------------------------
    def play_day(self, call: Call, observation: str) -> None:
        env = self.env
        self._memo = {k: v for k, v in self._memo.items() if k[0] == "shares"}
        if env.day == 1:
            call("search_web", {"query": "snacks drinks coffee sweets food wholesale cheap"})
            self.prices = {m: self._optimal_prices(m) for m in self.machines}
        self._negotiate(call)
        for c in list(env.complaints):                  # privileged: it knows who waits
            if not c.resolved and c.day < env.day and env.bank >= c.amount \
                    and self._room(10):
                call("send_payment", {"to": c.id, "amount": c.amount / 100})
        self._reorder(call)
        self._market(call)
        self._carry = None
        self._fill(call)
        self._reprice(call)
        if self._carry and env.day < env.days and env.crosses_midnight:
            # the next fill does not fit what is left of today: it crosses midnight and
            # finishes tomorrow morning, so today's last minutes are not lost
            sid, product, quantity = self._carry
            self._put(call, sid, product, quantity)
            price = self.prices[env.slots[sid].machine][product]
            if env.slots[sid].price != price:
                call("set_price", {"slot_id": sid, "price": price / 100})
            return
        call("wait_for_next_day", {})

    def _room(self, minutes: int) -> bool:
        fits: bool = self.env.minute + minutes <= self.eco["clock"]["close"]
        return fits

    def _negotiate(self, call: Call) -> None:
        env = self.env
        steps = len(self.eco["negotiation"]["concessions"])
        for sup in self.eco.suppliers.values():
            if (sup.id in self.negotiated or not self._delivers(sup)
                    or env.days - env.day < 7):
                continue
            for _ in range(steps - env.negotiated.get(sup.id, 0)):
                if self._room(15):
                    call("send_email", {"to": sup.email, "subject": "Better terms",
                                        "body": "We order every week: can you offer a "
                                                "discount?"})
            if env.negotiated.get(sup.id, 0) >= steps:
                self.negotiated.add(sup.id)

    def _reorder(self, call: Call) -> None:
        env = self.env
        left = env.days - env.day                              # days that can still sell
        coming: dict[str, int] = {}
        for s in env.shipments:
            if s.arrives is not None:
                coming[s.product] = coming.get(s.product, 0) + s.quantity
        shelf: dict[str, int] = {}
        for s in env.slots.values():
            if s.product:
                shelf[s.product] = shelf.get(s.product, 0) + s.units
        orders: dict[str, list[dict[str, Any]]] = {}
        for p in sorted(set(self.plan.values())):
            rate = self._daily_units(p)
            have = env.depot.get(p, 0) + coming.get(p, 0)
            best = self._supplier(p, LOT)
            if best is None or rate <= 0:
                continue
            lead = self.eco.suppliers[best[0]].lead_days
            life = self.eco.products[p].shelf_life
            if life < FRESH:
                # perishable: ordered just in time, a lot no bigger than sells by its
                # sell-by day (once footfall has settled, at most a little over what
                # sold last week: the shelves' own limits show there)
                if env.reputation > SETTLED:
                    rate = min(rate, GROWTH * self._sold(p) or rate)
                arrives = env.day + lead
                left_then = have + shelf.get(p, 0) - rate * self._nights(env.day, lead)
                if left_then >= rate * self._nights(arrives, 2):
                    continue
                cover = rate * self._nights(arrives, life) - max(left_then, 0)
            else:
                held = have + shelf.get(p, 0)
                # cheap today (a weekly discount): buy what sells until a unit costs as
                # little again, while it keeps (the buy-ahead family, design §30)
                ahead = rate * (self._as_cheap_in(p, best[1]) + lead + 3)
                ahead = min(ahead, rate * (life - lead - 2))
                if have < rate * (lead + 3):
                    cover = max(LOT, rate * 10, ahead - held)
                elif ahead - held >= LOT:
                    cover = ahead - held
                else:
                    continue
            wanted = rate * max(left - 1, 0) - have - shelf.get(p, 0)   # all it can sell
            qty = int(min(cover, wanted))
            if qty > 0:
                sup = self._supplier(p, qty)
                if sup is None:                 # nobody delivers it now
                    continue
                orders.setdefault(sup[0], []).append({"product_id": p, "quantity": qty})
        reserve = 3 * self.eco["economy"]["rent_per_day"]
        for sid, items in sorted(orders.items()):
            if not self._room(15):
                break
            cost = sum(env.unit_price(sid, i["product_id"], i["quantity"]) * i["quantity"]
                       for i in items)
            while items and cost > env.bank - reserve:
                items[-1]["quantity"] //= 2
                if items[-1]["quantity"] < 10:
                    items.pop()
                cost = sum(env.unit_price(sid, i["product_id"], i["quantity"])
                           * i["quantity"] for i in items)
            if items:
                call("order_goods", {"supplier_id": sid, "items": items})

    def _as_cheap_in(self, product: str, today: float) -> int:
        """Days until a unit of ``product`` costs no more than ``today`` again (weekly
        discounts come from the seed), at most the days left; 1 if today is no deal."""
        env = self.env
        week = self.eco["offers"]["week_days"]
        plain = min((self._received(sup, product, 0.0) for sup in self.eco.suppliers.values()
                     if product in sup.products and self._delivers(sup)), default=today)
        if today >= plain * (1 - 1e-9):
            return 1
        now: int = env.day
        first = now + week - (now - 1) % week                 # the next week's first day
        for day in range(first, env.days + 1, week):
            costs = [self._received(sup, product, env.weekly_discount(sup.id, product, day))
                     for sup in self.eco.suppliers.values()
                     if product in sup.products and self._delivers(sup, day)]
            if costs and min(costs) <= today * (1 + 1e-9):
                return day - now
        return int(env.days) - now

    def _received(self, sup: Any, product: str, discount: float) -> float:
        """What a received unit from ``sup`` costs in a lot, at ``discount`` this week."""
        price = self.env.unit_price(sup.id, product, LOT)
        price = price / (1 - self.env.weekly_discount(sup.id, product, self.env.day)) \
            * (1 - discount)
        received: float = price / (1 - sup.short_chance * 0.3) * (1 + 0.1 * sup.delay_chance)
        return received

    def _market(self, call: Call) -> None:
        """Today's campaigns of the weekly schedule, each where the hidden model says its
        extra sales over its days pay for it (design §29.3: a schedule that meets no
        penalty reaches more than single campaigns chosen day by day)."""
        env = self.env
        week = self.eco["marketing_limits"]["window_days"]
        today = self.schedule.get((env.day - 1) % week, [])
        for loc in self.eco.locations:
            machines = [m for m in self.machines if m.startswith(loc.id + ":")]
            profit = sum(self._machine_profit(m) for m in machines) / max(
                self.env.marketing_multiplier(loc.id, env.day), 1e-9)
            for channel in today:
                ch = self.eco.channels[channel]
                if not self._room(20) or ch.cost > env.bank - 5000:
                    return
                days = range(env.day, min(env.day + ch.days, env.days + 1))
                gain = sum(self._lift(loc.id, ch.channel, d) for d in days) * profit
                if gain > ch.cost:
                    call("run_marketing", {"location": loc.id, "channel": ch.channel,
                                           "message": "Fresh snacks and cold drinks here!"})

    def _lift(self, location: str, channel: str, day: int) -> float:
        """How much one more campaign moves ``location``'s multiplier on ``day``."""
        env = self.env
        extra = ((env.day, location, channel, ""),)
        lift: float = (env.marketing_multiplier(location, day, extra)
                       - env.marketing_multiplier(location, day))
        return lift

    def _machine_profit(self, machine: str) -> float:
        """Expected gross profit of a machine a day (cents), at its prices."""
        offer = self.prices.get(machine, {})
        share = self._shares(machine)
        return self._customers(machine) * sum(
            share[p] * (offer[p] - self._unit_cost(p)) for p in offer)

    def _fill(self, call: Call) -> None:
        env = self.env
        rate: dict[str, float] = {}
        for m in self.machines:
            offer = self.prices[m]
            share = self._shares(m)
            n = self._customers(m)
            for p in offer:
                facings = sum(1 for s, q in self.plan.items()
                              if q == p and env.slots[s].machine == m)
                rate[f"{m}|{p}"] = n * share[p] / facings

        def cover(sid: str) -> float:          # days of sales the slot holds
            slot, p = env.slots[sid], self.plan[sid]
            units = slot.units if slot.product == p else 0
            return units / max(rate[f"{slot.machine}|{p}"], 1e-9)

        for sid in sorted(self.plan, key=lambda s: (cover(s), s)):
            slot, p = env.slots[sid], self.plan[sid]
            units = slot.units if slot.product == p else 0
            qty = min(slot.capacity - units, env.depot.get(p, 0))
            if qty > 0 and self.eco.products[p].shelf_life < FRESH:   # no more than sells
                nights = env.stock[p][0][0] - env.day + 1                # by its sell-by day
                sells = rate[f"{slot.machine}|{p}"] * self._nights(env.day, nights) * SLACK
                qty = min(qty, math.ceil(sells) - units)
            if cover(sid) > 1.5 and units > slot.capacity / 3 or qty <= 0:
                continue
            price = self.prices[slot.machine][p]
            needs_price = slot.product != p or slot.price != price
            if not self._room(self._fill_minutes(sid, p) + 5 * needs_price):
                keeps = sum(n for day, n in env.stock[p] if day > env.day)  # after tonight
                if min(qty, keeps) > 0:
                    self._carry = (sid, p, min(qty, keeps))
                self.minute_value = min(MINUTE_VALUE_MOST, self.minute_value * MINUTE_STEP)
                return
            self._put(call, sid, p, qty)
            if needs_price:
                call("set_price", {"slot_id": sid, "price": price / 100})
        # every fill due fitted the day: minutes are worth less
        self.minute_value = max(MINUTE_VALUE, self.minute_value / MINUTE_STEP)

    def _fill_minutes(self, sid: str, product: str) -> int:
        """The minutes filling ``sid`` with ``product`` takes (clearing it first when it
        holds another product's units)."""
        slot, env = self.env.slots[sid], self.env
        fill: int = env.minutes("restock_machine", {"slot_id": sid, "product_id": product,
                                                    "quantity": 1})
        if slot.product not in (None, product) and slot.units > 0:
            cleared: int = fill + env.minutes("clear_slot", {"slot_id": sid})
            return cleared
        return fill

    def _put(self, call: Call, sid: str, product: str, quantity: int) -> None:
        slot = self.env.slots[sid]
        if slot.product not in (None, product) and slot.units:
            call("clear_slot", {"slot_id": sid})
        call("restock_machine", {"slot_id": sid, "product_id": product, "quantity": quantity})

    def _reprice(self, call: Call) -> None:
        """Weekly, move prices to where the optimum has gone (footfall grows with
        reputation); a slot whose price is off by more than ``REPRICE`` is re-set."""
        env = self.env
        if env.day % 7 and getattr(env, "market", None) is None:     # in a market: daily
            return
        for m in self.machines:
            self.prices[m] = self._optimal_prices(m)
        for sid, p in sorted(self.plan.items()):
            slot = env.slots[sid]
            want = self.prices[slot.machine][p]
            if slot.product == p and abs(slot.price - want) > REPRICE * want and self._room(5):
                call("set_price", {"slot_id": sid, "price": want / 100})


def weekly_schedule(eco: Any) -> dict[int, list[str]]:
    """A week of campaigns at one location that never meets a penalty (design §29.3):
    each channel as often as its fatigue allows and its bonus can still cover days not
    covered yet (at most ``uses`` a window, at most window / days), spaced evenly; the
    week at most the location's limit (the channels whose covered day costs most give
    up a run first). Day of the window -> channels."""
    lim = eco["marketing_limits"]
    week = lim["window_days"]
    runs = {c.channel: min(c.uses, math.ceil(week / c.days)) for c in eco.channels.values()}
    by_value = sorted(eco.channels.values(), key=lambda c: c.cost / (c.bonus * c.days))
    while sum(runs.values()) > lim["location_campaigns"]:
        worst = next(c.channel for c in reversed(by_value) if runs[c.channel])
        runs[worst] -= 1
    schedule: dict[int, list[str]] = {}
    for channel, n in runs.items():
        for k in range(n):
            schedule.setdefault(k * week // n, []).append(channel)
    return schedule

