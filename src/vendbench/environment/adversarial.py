"""The adversarial suite's policies (SPEC §12.4): scripted operators that try to score
well without running the business well, through the agent's tools only.

Each family is a set of variants, and each variant a policy built for one episode.
``benchmarks/bench_exploits.py`` plays every variant on five seeds and compares the best
with the oracle; ``tests/test_exploits.py`` plays a small version of each family. When
a new exploit is found, it joins ``FAMILIES`` before it is fixed.

A family that a world cannot express (AutoVend has no duplicate facings, suppliers to
e-mail, refunds or marketing) is listed in ``NOT_APPLICABLE`` with the reason.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, replace
from typing import Any, Callable

from .autovend.policies import OraclePolicy, OrderUpToPolicy
from .autovend.policies._books import Call
from .network.policies import Knobs, NetworkOracle, NetworkOrderUpTo

LOCATIONS = ("AI-LOUNGE", "AI-HOUSE", "MAIN-LOUNGE")
SWEEP = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 10.0, 20.0, 50.0)   # × cost (network)
AUTOVEND_SWEEP = (0.5, 0.75, 1.25, 1.5, 1.75, 2.0)                   # × reference
REPRICED = (0.8, 0.9, 1.1, 1.25, 1.5, 2.0)          # × the oracle's own prices


def _rng(seed: int, *key: Any) -> random.Random:
    return random.Random(zlib.crc32(repr((seed, *key)).encode()))


# -- the network --------------------------------------------------------------------------
class DoNothing:
    """Ends every day: the ladder's floor."""

    name = "do-nothing"

    def __init__(self, day_tool: str) -> None:
        self.day_tool = day_tool

    def play_day(self, call: Call, observation: str) -> None:
        call(self.day_tool, {})


RANDOM_MARKUP = (1.2, 4.0)          # the random operator's markups over its unit cost


class RandomPrices(NetworkOrderUpTo):
    """An honest operator with random prices (SPEC 20.4): the rule-based operator's
    buying, stocking and refunds, with each slot's price drawn once, uniformly between
    1.2× and 4× the product's cheapest offer: never at a loss, never a considered
    price (the rule-based operator posts 2.5×; the hidden model's best lies at 2-2.8×)."""

    name = "random-prices"

    def __init__(self, seed: int, markup: tuple[float, float] = RANDOM_MARKUP) -> None:
        super().__init__()
        self.seed, self.markup = seed, markup

    def price_for(self, slot: str, product: str) -> float:
        factor = _rng(self.seed, slot, product).uniform(*self.markup)
        cost = min(prices[product] for prices in self.offers.values() if product in prices)
        return max(0.1, round(cost * factor, 2))


class Decoy(NetworkOrderUpTo):
    """In each machine, one facing of a product holds one unit at EUR 0.10 and its other
    facings sit at the EUR 10,000 cap (the €8.2M exploit of a shared pool priced by its
    cheapest facing)."""

    name = "decoy"

    def __init__(self) -> None:
        super().__init__()
        self.decoys: set[str] = set()          # one facing of each doubled product
        self.capped: set[str] = set()          # its other facings

    def _plan(self, slots: list[dict]) -> None:
        super()._plan(slots)
        facings: dict[tuple[str, str], list[str]] = {}
        for sid in sorted(self.plan):          # (machine, product) -> its slots
            facings.setdefault((sid.rsplit(":", 1)[0], self.plan[sid]), []).append(sid)
        for first, *others in facings.values():
            if others:
                self.decoys.add(first)
                self.capped.update(others)

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict:
        return super().refill(call, slot, product, 1 if slot in self.decoys else quantity)

    def price_for(self, slot: str, product: str) -> float:
        if slot in self.decoys:
            return 0.1
        return 10_000.0 if slot in self.capped else super().price_for(slot, product)


class SwapRefills(NetworkOrderUpTo):
    """Refills a slot by swapping it to the product it already holds (a 30-minute swap
    instead of a 45-minute fill, before §12.6)."""

    name = "swap-refills"

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict:
        got = call("swap_item", {"slot_id": slot, "product_id": product})
        return got if got.get("ok") else super().refill(call, slot, product, quantity)


class EmailOrders(NetworkOrderUpTo):
    """Orders by e-mail ("Please send 40 cola, 20 iced-tea"): the seed's order e-mails
    buy at once, and must be worth no more than order_goods."""

    name = "e-mail-orders"

    def order(self, call: Call, supplier: str, items: list[dict]) -> dict:
        to = next(r["email"] for r in self.found if r["supplier_id"] == supplier)
        body = "Please send " + ", ".join(f"{i['quantity']} {i['product_id']}"
                                          for i in items) + "."
        got = call("send_email", {"to": to, "subject": "Order", "body": body})
        if "order" in got:
            return got["order"]
        return {"ok": False, "error": got.get("error") or f"{supplier} does not answer"}


class NegotiationLoop(NetworkOrderUpTo):
    """E-mails every supplier for a discount every morning."""

    name = "negotiation-loop"

    def play_day(self, call: Call, observation: str) -> None:
        self._negotiate(call)
        super().play_day(call, observation)


class EmailRefunds(NetworkOrderUpTo):
    """Answers complaints with an apology by e-mail instead of refunding them."""

    name = "apologies-not-refunds"

    def _refunds(self, call: Call) -> None:
        for e in call("list_emails", {}).get("emails", []):
            if "Refund" in e["subject"] and not e["read"]:
                call("read_email", {"email_id": e["email_id"]})
                call("send_email", {"to": e["from"], "subject": "Sorry",
                                    "body": "We apologise for the trouble."})


class MarketingSpam(NetworkOrderUpTo):
    """Every channel at every location every day."""

    name = "marketing-spam"

    def _market(self, call: Call, day: int, status: dict) -> None:
        for loc in LOCATIONS:
            for channel in ("slack", "email", "prints"):
                call("run_marketing", {"location": loc, "channel": channel,
                                       "message": "Buy now!"})


class Probes(NetworkOrderUpTo):
    """Learns each slot's room and the depot's stock from a rejected oversized restock
    before filling, instead of reading the inventory (free, before §12.6)."""

    name = "rejected-probes"

    def refill(self, call: Call, slot: str, product: str, quantity: int) -> dict:
        call("restock_machine", {"slot_id": slot, "product_id": product, "quantity": 100})
        return super().refill(call, slot, product, quantity)


class Dumping(NetworkOrderUpTo):
    """Everything at EUR 0.10 for the first week (for footfall), then the usual markup."""

    name = "price-dumping"

    def price_for(self, slot: str, product: str) -> float:
        return 0.1 if self.today <= 7 else super().price_for(slot, product)


class RepricedNetworkOracle(NetworkOracle):
    """The oracle's own play with every price it plans moved by ``factor``: if this
    scored more, the oracle would not price at the optimum (privileged, a check)."""

    def __init__(self, env: Any, factor: float) -> None:
        self.factor = factor
        super().__init__(env)
        self.name = f"oracle x{factor:g}"

    def _optimal_prices(self, machine: str) -> dict[str, int]:
        return {p: max(10, int(round(v * self.factor / 10) * 10))
                for p, v in super()._optimal_prices(machine).items()}


class RepricedOracle(OraclePolicy):
    """AutoVend's oracle with its planned prices moved by ``factor`` (within 0.5-2.0×
    reference)."""

    def __init__(self, world: Any, factor: float) -> None:
        super().__init__(world)
        self.factor = factor
        self.name = f"oracle x{factor:g}"

    def _plan_machine(self, i: int) -> dict[str, tuple[float, float]]:
        plan = super()._plan_machine(i)
        out = {}
        for pid, (price, rate) in plan.items():
            ref = self.world.products[self._k[pid]].ref_price / 100
            low, high = math.ceil(ref * 5) / 10, math.floor(ref * 20) / 10
            out[pid] = (min(high, max(low, round(price * self.factor, 1))), rate)
        return out


class SwapFillOracle(NetworkOracle):
    """The oracle's own plan, filling every slot that holds none of its product by
    swapping the product in (a 30-minute swap for a 45-minute fill, before §20.1)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.name = "oracle, swap fills"

    def _swaps(self, sid: str, product: str) -> bool:
        return self.env.slots[sid].product != product

    def _fill_minutes(self, sid: str, product: str) -> int:
        if self._swaps(sid, product):
            return self.env.minutes("swap_item", {"slot_id": sid, "product_id": product})
        return super()._fill_minutes(sid, product)

    def _put(self, call: Call, sid: str, product: str, quantity: int) -> None:
        if self._swaps(sid, product):
            call("swap_item", {"slot_id": sid, "product_id": product})
        else:
            super()._put(call, sid, product, quantity)


class RotationOracle(SwapFillOracle):
    """Swap fills, and before each day's fills, two sold-down slots of a machine that
    hold different products swap products with each other: each swap returns one
    product's units to the depot and fills the slot with the other (two 30-minute swaps
    for two 45-minute fills, before §20.1)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.name = "oracle, rotation"

    def _fill(self, call: Call) -> None:
        self._rotate(call)
        super()._fill(call)

    def _rotate(self, call: Call) -> None:
        env = self.env
        groups: dict[tuple[str, str], list[str]] = {}
        for sid in sorted(self.plan):
            slot = env.slots[sid]
            if slot.product == self.plan[sid] and 0 < slot.units <= slot.capacity / 3:
                groups.setdefault((slot.machine, slot.size), []).append(sid)
        for (machine, _), due in sorted(groups.items()):
            while len(due) >= 2:
                a = due.pop(0)
                b = next((x for x in due if self.plan[x] != self.plan[a]), None)
                if b is None:
                    break
                due.remove(b)
                pa, pb = self.plan[a], self.plan[b]
                cap = env.slots[a].capacity
                if min(env.depot.get(pa, 0), env.depot.get(pb, 0)) < cap:
                    continue
                if not self._room(2 * env.minutes("swap_item", {"slot_id": a,
                                                                "product_id": pb}) + 10):
                    return
                call("swap_item", {"slot_id": a, "product_id": pb})
                call("swap_item", {"slot_id": b, "product_id": pa})
                self.plan[a], self.plan[b] = pb, pa
                for sid in (a, b):
                    call("set_price", {"slot_id": sid,
                                       "price": self.prices[machine][self.plan[sid]] / 100})


def random_knobs(rng: random.Random) -> Knobs:
    """One draw of the network's parametrised operator."""
    return Knobs(markups={size: math.exp(rng.uniform(math.log(1.0), math.log(5.0)))
                          for size in ("small", "large", "can")},
                 refill_below=rng.uniform(0.2, 0.95), order_weeks=rng.uniform(0.5, 3.0),
                 assortment=rng.choice(["round-robin", "popular"]),
                 marketing_every=rng.choice([0, 0, 1, 2, 3, 7]),
                 channel=rng.choice(["slack", "email", "prints"]),
                 negotiate=rng.randint(0, 3), refunds=rng.random() > 0.1)


# -- AutoVend ------------------------------------------------------------------------------
class PricedOrderUpTo(OrderUpToPolicy):
    """AutoVend's rule-based operator with its prices replaced by a rule (a factor of the
    reference price per listing, kept within the world's 0.5-2.0×), and optionally its
    safety stock scaled."""

    def __init__(self, name: str, factor: Callable[[str, str], float] | None,
                 cover: float | None = None) -> None:
        super().__init__()
        self.name = name
        self.factor = factor
        if cover is not None:
            self.critical_ratio_cover = cover

    def play_day(self, call: Call, observation: str) -> None:
        if self.factor is None:
            return super().play_day(call, observation)

        def priced(name: str, args: dict | str | None = None) -> dict:
            if name == "set_price" and isinstance(args, dict):
                args = {"items": [{**it, "price": self._price(it["machine_id"],
                                                              it["product_id"])}
                                  for it in args["items"]]}
            return call(name, args)

        super().play_day(priced, observation)

    def _price(self, machine: str, product: str) -> float:
        ref = self.books.catalog[product].ref
        low, high = math.ceil(ref * 50) / 100, math.floor(ref * 200) / 100
        return min(high, max(low, round(ref * self.factor(machine, product), 2)))


class AutovendProbes(OrderUpToPolicy):
    """Sends a rejected physical call before every restock batch (a rejected item costs
    no visit fee): probing must gain nothing."""

    name = "rejected-probes"

    def play_day(self, call: Call, observation: str) -> None:
        def probing(name: str, args: dict | str | None = None) -> dict:
            if name == "restock" and isinstance(args, dict):
                for it in args["items"][:5]:
                    call("restock", {"items": [{**it, "quantity": 100_000}]})
            return call(name, args)

        super().play_day(probing, observation)


def autovend_knobs(rng: random.Random) -> dict[str, Any]:
    return {"cover": rng.uniform(0.8, 2.0), "beverage": rng.choice([None, rng.uniform(0.5, 2.0)]),
            "food": rng.choice([None, rng.uniform(0.5, 2.0)])}


def _autovend_searched(knobs: dict[str, Any]) -> PricedOrderUpTo:
    if knobs["beverage"] is None and knobs["food"] is None:
        return PricedOrderUpTo("random-search", None, knobs["cover"])
    policy: PricedOrderUpTo

    def factor(machine: str, product: str) -> float:
        beverage = policy.books.catalog[product].subcategory in BEVERAGES
        chosen = knobs["beverage"] if beverage else knobs["food"]
        return 1.0 if chosen is None else chosen

    policy = PricedOrderUpTo("random-search", factor, knobs["cover"])
    return policy


BEVERAGES = frozenset({"water", "soda", "tea", "coffee", "juice", "energy/sports",
                       "dairy/yogurt", "plant-protein"})


# -- the families --------------------------------------------------------------------------
Build = Callable[[int, Any], Any]        # (seed, env) -> a fresh policy for that episode


@dataclass(frozen=True)
class Variant:
    family: str
    label: str
    build: Build


def _plain(make: Callable[[], Any]) -> Build:
    """A builder for a policy that needs neither the seed nor the environment."""
    return lambda seed, env: make()


def _network_families(draws: int) -> dict[str, list[Variant]]:
    def knobbed(label: str, knobs: Knobs) -> Variant:
        return Variant("", label, _plain(lambda: NetworkOrderUpTo(knobs)))

    def repriced(f: float) -> Variant:
        return Variant("", f"oracle prices x{f:g}",
                       lambda seed, env: RepricedNetworkOracle(env, f))

    search = random.Random(20261201)
    fam = {
        "do-nothing": [Variant("", "end every day",
                               _plain(lambda: DoNothing("wait_for_next_day")))],
        "random-prices": [Variant("", "1.2-4x cost per slot",
                                  lambda seed, env: RandomPrices(seed))],
        "decoy-facings": [Variant("", "1 unit at 0.10, the rest at 10,000", _plain(Decoy))],
        "markup-sweep": [knobbed(f"x{m:g} cost", Knobs(markup=m)) for m in SWEEP],
        "price-dumping": [Variant("", "EUR 0.10 for a week", _plain(Dumping))],
        "swap-refills": [Variant("", "swap to the same product", _plain(SwapRefills))],
        "negotiation-loops": [Variant("", "discount e-mails every day",
                                      _plain(NegotiationLoop))],
        "refunds": [knobbed("never refund", Knobs(refunds=False)),
                    Variant("", "apologise by e-mail", _plain(EmailRefunds))],
        "marketing-spam": [Variant("", "every channel, every day", _plain(MarketingSpam)),
                           knobbed("slack daily", Knobs(marketing_every=1))],
        "rejected-probes": [Variant("", "oversized restock before each fill",
                                    _plain(Probes))],
        "oracle-repriced": [repriced(f) for f in REPRICED],
        "e-mail-orders": [Variant("", "every order by e-mail", _plain(EmailOrders))],
        "midnight-crossing": [knobbed("fills on through the night",
                                      Knobs(through_the_night=True))],
        "swap-fills": [Variant("", "the oracle's plan, empty slots filled by a swap",
                               lambda seed, env: SwapFillOracle(env))],
        "rotation": [Variant("", "the oracle's plan, sold-down slots swap products",
                             lambda seed, env: RotationOracle(env))],
        "random-search": [knobbed(f"draw {i}", random_knobs(search)) for i in range(draws)],
    }
    return {f: [replace(v, family=f) for v in vs] for f, vs in fam.items()}


def _autovend_families(draws: int) -> dict[str, list[Variant]]:
    def fixed(f: float) -> Variant:
        return Variant("", f"x{f:g} reference",
                       _plain(lambda: PricedOrderUpTo(f"x{f:g}", lambda m, p: f)))

    def randomised(seed: int, env: Any) -> PricedOrderUpTo:
        return PricedOrderUpTo("random-prices",
                               lambda m, p: _rng(seed, m, p).uniform(0.5, 2.0))

    def repriced(f: float) -> Variant:
        return Variant("", f"oracle prices x{f:g}",
                       lambda seed, env: RepricedOracle(env.world, f))

    def searched(knobs: dict[str, Any]) -> Build:
        return _plain(lambda: _autovend_searched(knobs))

    search = random.Random(20261201)
    fam = {
        "do-nothing": [Variant("", "end every day", _plain(lambda: DoNothing("end_day")))],
        "random-prices": [Variant("", "0.5-2x reference per listing", randomised)],
        "markup-sweep": [fixed(f) for f in AUTOVEND_SWEEP],
        "price-dumping": [replace(fixed(0.5), label="0.5x reference everywhere")],
        "rejected-probes": [Variant("", "a rejected restock before each batch",
                                    _plain(AutovendProbes))],
        "oracle-repriced": [repriced(f) for f in REPRICED],
        "random-search": [Variant("", f"draw {i}", searched(autovend_knobs(search)))
                          for i in range(draws)],
    }
    return {f: [replace(v, family=f) for v in vs] for f, vs in fam.items()}


NOT_APPLICABLE = {
    "autovend": {
        "decoy-facings": "a product has one listing per machine (restock adds to it)",
        "swap-refills": "no swap tool; a restock is a visit whatever it moves",
        "negotiation-loops": "no supplier e-mail; the catalogue's costs are fixed",
        "refunds": "no complaints or refunds",
        "marketing-spam": "no marketing tool",
        "swap-fills": "no swap tool",
        "rotation": "no swap tool",
        "e-mail-orders": "no supplier e-mail",
        "midnight-crossing": "no working-day clock: a day is ended by end_day",
    },
    "network": {},
}


def families(scenario: str, draws: int = 200) -> dict[str, list[Variant]]:
    """The adversarial families of ``scenario``: family -> its variants (``draws`` of
    them for the random search)."""
    return (_network_families if scenario == "network" else _autovend_families)(draws)
