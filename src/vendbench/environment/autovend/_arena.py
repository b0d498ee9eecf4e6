"""AutoVend's arena (SPEC 23): two to four operators in one market.

Each operator runs its own 20 machines, warehouse, cash and notebook, at the same 20
sites; each is an ``AutoVendEnv`` and is scored alone (net assets). What they share is
the night: a site's customers (drawn from the seed, as alone: common random numbers)
choose by the world's multinomial logit among every operator's listings there, each
listing's attraction taking its own machine's fill, with the site's one no-purchase
option, so a rival's listings are alternatives the way one's own are.

An operator's ``end_day`` (or its day's last tool call) ends its day; the night runs
when every operator still playing has ended it. Three tools cross between operators:
``see_competitors`` (a site's other machines as a customer saw them this morning),
``email_operator`` and ``pay_operator`` (both arrive overnight and show in the next
daily report). An operator that stops leaves the market: its machines sell nothing.

    >>> market = Market(2, seed=1, days=2)
    >>> a, b = market.seats
    >>> a.call("end_day", {})["ok"], a.day, b.day, market.nights
    (True, 2, 1, 0)
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from .. import _market
from .._arguments import ArgumentError, describe_errors, parse_arguments
from .._market import MAILS_A_DAY, NAMES, EmailOperator, address, band, pay_operator
from . import _demand as demand
from ._env import AutoVendEnv, tool_schemas
from ._operations import fen
from ._schemas import Args, openai_schema
from ._state import Offer
from ._world import DEFAULT_WORLD_SEED, MACHINE_CAPACITY

FULL_LISTING = 20             # units at which a listing looks full to a passer-by


class SeeCompetitors(Args):
    machine_id: str = Field(description="machine id, M01–M20: its site", max_length=32)


ARENA_TOOLS: dict[str, tuple[type[BaseModel], str]] = {
    "see_competitors": (SeeCompetitors, "[query] The other operators' machines at a "
                                        "machine's site as a customer saw them this "
                                        "morning: products, prices, how full; and each "
                                        "operator's e-mail address."),
    "email_operator": (EmailOperator, "[remote] Write to another operator; it arrives "
                                      f"overnight (at most {MAILS_A_DAY} a day to each)."),
    "pay_operator": (pay_operator("CNY", 1_000_000),
                     "[remote] Pay another operator from your cash: paid at once, "
                     "credited to them overnight."),
}


class Operator(AutoVendEnv):
    """One operator of a ``Market``: the AutoVend world with the arena's three tools,
    whose nights are the market's."""

    def __init__(self, market: Market, seat: int, seed: int, days: int, world_seed: int,
                 world_salt: str | None) -> None:
        super().__init__(seed=seed, days=days, world_seed=world_seed, world_salt=world_salt)
        self.market, self.seat = market, seat
        self.name, self.address = NAMES[seat], address(seat)
        self.inbox: list[str] = []            # what arrived overnight (this morning's)
        self.mailed: dict[tuple[int, int], int] = {}
        self.instructions += market.briefing(seat, (
            "Customers at a site choose among every operator's listings there as they "
            "choose among yours: a rival's listing is one more alternative."))

    @cached_property
    def tools(self) -> list[dict[str, Any]]:
        return tool_schemas() + [openai_schema(name, text, model)
                                 for name, (model, text) in ARENA_TOOLS.items()]

    @property
    def day(self) -> int:
        """Its day as its agent sees it: the next one once it has ended today."""
        return self._biz.day + (self.seat in self.market.ended)

    def observe(self) -> str:
        report = super().observe()
        if self.inbox and not self.done:
            report += "\n\nFrom other operators overnight:\n" + "\n".join(
                f"- {line}" for line in self.inbox)
        return report

    def call(self, name: str, arguments: dict[str, Any] | str | None = None
             ) -> dict[str, Any]:
        return self.market.refusal(self) or super().call(name, arguments)

    def _end_day(self) -> None:
        self._calls_today = 0
        self._version += 1
        self.market.end_day(self.seat)

    def _dispatch(self, name: str, arguments: dict[str, Any] | str | None
                  ) -> dict[str, Any]:
        if name == "end_day":
            result = super()._dispatch(name, arguments)
            if result["ok"]:
                result["message"] = ("your day is over; customers buy tonight once every "
                                     "operator has ended the day; tomorrow's report says "
                                     "what sold")
            return result
        spec = ARENA_TOOLS.get(name) if isinstance(name, str) else None
        if spec is None:
            return super()._dispatch(name, arguments)
        try:
            args = spec[0].model_validate(parse_arguments(arguments))
        except ValidationError as exc:
            return {"ok": False, "error": f"{name}: invalid arguments: {describe_errors(exc)}"}
        except ArgumentError as exc:
            return {"ok": False, "error": f"{name}: {exc}"}
        handler = {"see_competitors": self._see, "email_operator": self._email,
                   "pay_operator": self._pay}[name]
        return handler(args)

    def _see(self, a: Any) -> dict[str, Any]:
        seen = self.market.competitors(self.seat, a.machine_id)
        if seen is None:
            return {"ok": False, "error": f"see_competitors: unknown machine_id "
                                         f"{a.machine_id!r}: ids are M01–M20"}
        return {"ok": True, "machine_id": a.machine_id, "as_of": f"day {self._biz.day}, "
                "morning", "competitors": seen}

    def _email(self, a: Any) -> dict[str, Any]:
        seat, error = self.market.other(self.seat, a.to)
        if seat is None:
            return {"ok": False, "error": f"email_operator: {error}"}
        key = (self._biz.day, seat)
        if self.mailed.get(key, 0) >= MAILS_A_DAY:
            return {"ok": False, "error": f"email_operator: at most {MAILS_A_DAY} e-mails a "
                                          "day to one operator"}
        self.mailed[key] = self.mailed.get(key, 0) + 1
        self.market.post(self.seat, seat, f"e-mail from {self.name} ({self.address}): "
                                          f"{a.subject} — {a.body}")
        return {"ok": True, "to": self.market.seats[seat].name,
                "message": "sent; it arrives overnight"}

    def _pay(self, a: Any) -> dict[str, Any]:
        seat, error = self.market.other(self.seat, a.to)
        if seat is None:
            return {"ok": False, "error": f"pay_operator: {error}"}
        cents = round(a.amount * 100)
        if abs(a.amount * 100 - cents) > 1e-6:
            return {"ok": False, "error": "pay_operator: amounts are in CNY with at most 2 "
                                          "decimals"}
        if cents > self._biz.cash:
            return {"ok": False, "error": "pay_operator: not enough cash"}
        self._biz.cash -= cents
        self._biz.today.transfers -= cents
        self.market.post(self.seat, seat, f"payment of CNY {fen(cents):,.2f} from "
                                          f"{self.name}" + (f": {a.memo}" if a.memo else ""),
                         cents)
        return {"ok": True, "paid": fen(cents), "to": self.market.seats[seat].name,
                "message": "paid; credited to them overnight"}

    def summary(self) -> dict[str, Any]:
        return super().summary() | {"seat": self.seat, "operator": self.name}

    def drain_records(self) -> dict[str, list[dict[str, Any]]]:
        with self.market.lock:                 # the night may be writing them
            return super().drain_records()


class Market(_market.Market):
    """``seats`` operators of the AutoVend world, one seed, one night (SPEC 23)."""

    scenario = "autovend"

    def __init__(self, seats: int, seed: int = 1, days: int = 180,
                 world_seed: int = DEFAULT_WORLD_SEED, world_salt: str | None = None) -> None:
        super().__init__(seats)
        self.seats: list[Operator] = []
        self.seats = [Operator(self, i, seed, days, world_seed, world_salt)
                      for i in range(seats)]
        self._seen = self._view()

    def _night(self, live: list[Any]) -> None:
        offers: list[Offer] = [op.business.offer() for op in live]
        sold = joint_sales(live[0], offers)
        for op in live:
            op.inbox = []
        for sender, to, note, cents in self.delivered():
            payee = next((op for op in live if op.seat == to), None)
            if payee is None:                  # it stopped: the payment goes back
                payer = self.seats[sender].business
                payer.cash += cents
                payer.today.transfers += cents
                continue
            payee.business.cash += cents
            payee.business.today.transfers += cents
            payee.inbox.append(note)
        for op, offer, units in zip(live, offers, sold):
            op.business.end_day((offer, units))

    def _view(self) -> dict[str, list[dict[str, Any]]]:
        view: dict[str, list[dict[str, Any]]] = {}
        for op in self.seats:
            biz, open_ = op.business, op.seat not in self.left and not op.done
            for m, machine in enumerate(biz.world.machines):
                listings = [{"product_id": biz.world.products[k].id,
                             "product": biz.world.products[k].name,
                             "price": fen(lst.price), "stock": band(lst.units, FULL_LISTING)}
                            for k, lst in sorted(biz.shelves[m].items()) if lst.units > 0]
                view.setdefault(machine.id, []).append({
                    "seat": op.seat, "operator": op.name, "email": op.address,
                    "open": open_, "site_type": machine.site_type, "listings": listings})
        return view


def joint_sales(first: Operator, offers: list[Offer]) -> list[np.ndarray]:
    """What each operator's stocked listings sell tonight when each site's customers
    (the same for all: ``offers[0]``'s) choose among every operator's listings there,
    each with its own machine's fill."""
    biz = first.business
    sizes = [len(o.listed[0]) for o in offers]
    if not sum(sizes):
        return [np.zeros(0, np.int64) for _ in offers]
    listed = np.concatenate([o.listed for o in offers], axis=1)
    owner = np.repeat(np.arange(len(offers)), sizes)
    n_m = len(offers[0].attempts)
    fill = np.concatenate([np.minimum(1.0, np.bincount(
        o.listed[0], weights=o.listed[3], minlength=n_m) / MACHINE_CAPACITY)[o.listed[0]]
        for o in offers])
    order = np.lexsort((owner, listed[0]))       # by site, each operator's in its order
    ms, ks, prices, units = listed[:, order]
    head = offers[0]
    sold = np.empty(len(order), np.int64)
    sold[order] = demand.day_sales(biz.world.hidden, ms, ks, units, prices.astype(float),
                                   biz.ref_price_f[ks], head.heat, head.attempts, head.draws,
                                   fill[order])
    return np.split(sold, np.cumsum(sizes)[:-1])
