"""AutoVend's arena (design §23): two to four operators in one market.

Each operator (an ``AutoVendEnv`` with the arena's ``Seat``) runs its own 20 machines,
warehouse, cash and notebook at the same 20 sites, and is scored alone (net assets). The
night is shared: a site's customers (the seed's, as alone) choose by the world's logit
among every operator's listings there, each with its own machine's fill, and the site's
one no-purchase option. Mail and payments between operators show in the next report.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from .. import _market
from .._market import DAY_OVER_MESSAGE, Note, Payments, Seat, band, one_line, quoted
from . import _demand as demand
from ._env import AutoVendEnv, tool_schemas
from ._operations import fen
from ._state import Offer
from .._registry import DEFAULT_WORLD_SEED
from ._world import MACHINE_CAPACITY

FULL_LISTING = 20             # units at which a listing looks full to a passer-by


class Operator(Seat, AutoVendEnv):
    """One operator of a ``Market``: the AutoVend world with the arena's three tools,
    whose nights are the market's."""

    PLACE = ("machine_id", "machine ids are M01–M20 (a machine stands for its site)")
    CURRENCY, MOST, tagged = "CNY", 1_000_000, True

    def __init__(self, market: Market, seat: int, seed: int, days: int, world_seed: int,
                 world_salt: str | None) -> None:
        super().__init__(seed=seed, days=days, world_seed=world_seed, world_salt=world_salt)
        self.take_seat(market, seat)
        self.inbox: list[str] = []            # what arrived overnight (this morning's)
        self.instructions += market.briefing(seat, (
            "Customers at a site choose among every operator's listings there as they "
            "choose among yours: a rival's listing is one more alternative."))

    @cached_property
    def tools(self) -> list[dict[str, Any]]:
        return tool_schemas() + self.arena_schemas()

    def observe(self) -> str:
        report = super().observe()
        if self.inbox and not self.done:
            report += ("\n\nFrom other operators overnight (what they wrote is quoted, "
                       "behind >; none of it comes from vendbench):\n" + "\n".join(self.inbox))
        return report

    def _end_day(self) -> None:
        self._calls_today = 0
        self._version += 1
        self.market.end_day(self.seat)

    def _dispatch(self, name: str, arguments: dict[str, Any] | str | None
                  ) -> dict[str, Any]:
        if isinstance(name, str) and name in self.arena():
            return self.arena_call(name, arguments)
        result = super()._dispatch(name, arguments)
        return result | {"message": DAY_OVER_MESSAGE} if name == "end_day" and result["ok"] else result

    def today(self) -> int:
        return self._biz.day

    def held(self) -> int:
        return self._biz.cash

    def paid_out(self, cents: int) -> None:
        self._biz.cash -= cents
        self._biz.today.transfers -= cents



def _lines(note: Note | Payments) -> str:
    """A note as the next daily report shows it: a payment in one line, its memo a
    quoted string; an e-mail's sender and subject in one line, its text quoted line by
    line (design §29.1: no byte of an operator's can start a line of the report)."""
    if isinstance(note, Payments):
        return "- " + note.words("CNY", f"{fen(note.cents):,.2f}")
    return "\n".join([f"- e-mail from {note.name} <{note.address}>, subject "
                      f"{one_line(note.subject)}:", *quoted(note.body)])


class Market(_market.Market):
    """``seats`` operators of the AutoVend world, one seed, one night (design §23)."""

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
        for to, note in self.delivered():
            payee = next((op for op in live if op.seat == to), None)
            if payee is None:                  # it stopped: the payment goes back
                payer = self.seats[note.sender]
                payer.business.cash += note.cents
                payer.business.today.transfers += note.cents
                payer.transfers += note.cents
                continue
            payee.business.cash += note.cents
            payee.business.today.transfers += note.cents
            payee.transfers += note.cents
            payee.inbox.append(_lines(note))
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
