"""The network world's arena (SPEC 23): two to four operators in one market.

Each operator has its own bank, depot, machines, notes and inbox, at the same three
locations; each is a ``NetworkEnv`` and is scored alone. What they share is the night:
each location's customers (drawn from the seed, as in a single-agent episode: common
random numbers) choose among every operator's facings with stock by the world's own
demand rule, so each buys the cheapest acceptable unit of what they want, whoever sells
it. A location draws the crowd of its strongest operator (reputation times campaigns).
A customer facing several operators at the same price picks one at random, so no seat is
favoured.

Operators act in the same day at once; an operator's ``wait_for_next_day`` ends its day
and the night runs when every operator still playing has ended it. Only three tools
cross between operators: ``see_competitors`` (a location's other machines as a
customer sees them this morning), ``email_operator`` and ``pay_operator`` (both arrive
overnight). A call that does not fit the working day is refused (it cannot run the
night for everyone). An operator that stops leaves the market: its machines sell
nothing, and the match goes on.

    >>> market = Market(2, seed=1, days=2)
    >>> a, b = market.seats
    >>> a.call("wait_for_next_day", {})["ok"], a.day, b.day, market.nights
    (True, 2, 1, 0)
    >>> b.call("wait_for_next_day", {})["ok"], a.day, b.day, market.nights
    (True, 2, 2, 1)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from . import _demand
from ._env import WORLD, NetworkEnv
from ._handlers import HANDLERS
from ._state import Email, _cents, _euros
from ._tools import TOOLS, _Args, schemas
from .. import _market
from .._market import MAILS_A_DAY, NAMES, EmailOperator, address, band, pay_operator


class SeeCompetitors(_Args):
    location: str = Field(min_length=1, max_length=40, description="a location id")


ARENA_TOOLS: dict[str, tuple[type[BaseModel], str]] = {
    "see_competitors": (SeeCompetitors, "The other operators' machines at a location as a "
                                        "customer sees them this morning: products, "
                                        "prices, how full; and each operator's e-mail "
                                        "address."),
    "email_operator": (EmailOperator, "Write to another operator; it arrives overnight "
                                      f"(at most {MAILS_A_DAY} a day to each)."),
    "pay_operator": (pay_operator("euros", 10_000),
                     "Pay another operator from your bank: paid at once, credited to them "
                     "overnight."),
}


class Operator(NetworkEnv):
    """One operator of a ``Market``: the network world behind the Environment protocol,
    with the arena's three tools, whose nights are the market's."""

    tool_specs = TOOLS | ARENA_TOOLS
    crosses_midnight = False

    def __init__(self, market: Market, seat: int, seed: int, days: int | None,
                 world_seed: int, config: str | None, world_salt: str | None) -> None:
        super().__init__(seed, days, world_seed, config, world_salt)
        self.market, self.seat = market, seat
        self.name, self.address = NAMES[seat], address(seat)
        self.handlers = HANDLERS | {"wait_for_next_day": _end_day,
                                    "see_competitors": _see_competitors,
                                    "email_operator": _email_operator,
                                    "pay_operator": _pay_operator}
        self.tools = schemas() + [
            {"type": "function", "function": {"name": name, "description": text,
                                              "parameters": _schema(model)}}
            for name, (model, text) in ARENA_TOOLS.items()]
        self.instructions += market.briefing(seat, (
            "Customers buy the cheapest acceptable unit of what they want from any machine "
            "at the location with stock; a call that does not fit what is left of the "
            "working day is refused."))
        self.mailed: dict[tuple[int, int], int] = {}    # (day, to seat) -> e-mails sent

    @property
    def day(self) -> int:
        """Its day as its agent sees it: the next one once it has ended today (its
        morning's report waits for the market's night)."""
        return self._day + (self.seat in self.market.ended)

    def call(self, name: str, arguments: dict[str, Any] | str | None = None
             ) -> dict[str, Any]:
        return self.market.refusal(self) or super().call(name, arguments)

    def _minutes(self, name: str, args: Any) -> int:
        arena: dict[str, int] = self.eco["arena"]["cost"]
        return arena[name] if name in arena else super()._minutes(name, args)

    def _night(self) -> dict[str, Any]:
        raise AssertionError("an operator's night is the market's")       # never crossed

    def summary(self) -> dict[str, Any]:
        return super().summary() | {"seat": self.seat, "operator": self.name}

    def drain_records(self) -> dict[str, list[dict[str, Any]]]:
        with self.market.lock:                 # the night may be writing them
            return super().drain_records()


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return schema


class Market(_market.Market):
    """``seats`` operators of the network world, one seed, one night (SPEC 23)."""

    scenario = "network"

    def __init__(self, seats: int, seed: int = 1, days: int | None = None,
                 world_seed: int = WORLD, config: str | None = None,
                 world_salt: str | None = None) -> None:
        super().__init__(seats)
        self.seats: list[Operator] = []
        self.seats = [Operator(self, i, seed, days, world_seed, config, world_salt)
                      for i in range(seats)]
        self._seen = self._view()

    def _night(self, live: list[Any]) -> None:
        first = live[0]
        d = first._day
        totals = {op.seat: [0, 0, 0] for op in live}
        pull = lambda loc, day: max(op.pull(loc, day) for op in live)   # noqa: E731
        for loc, machine, draws, season in first.customers(d, pull):
            mine = [(op, op.facings(machine)) for op in live]
            for op, fs in mine:
                for _, f in fs:
                    f.owner = op.seat
            shelf = sorted(((s, f) for _, fs in mine for s, f in fs),
                           key=lambda sf: (sf[1].price, sf[1].owner, sf[0].id))
            _demand.serve(first.eco, loc, _demand.pools(shelf), draws, season)
            for op, fs in mine:
                for i, n in enumerate(op.book(machine, d, fs)):
                    totals[op.seat][i] += n
        self._deliver(d, {op.seat: op for op in live})
        for op in live:
            op.settle(d, *totals[op.seat])

    def _deliver(self, d: int, live: dict[int, Operator]) -> None:
        """Tonight's e-mails and payments between operators; a payment to an operator
        that stopped goes back to its payer."""
        for sender, to, mail, cents in self.delivered():
            payer, payee = self.seats[sender], live.get(to)
            if payee is None:
                payer.bank += cents
                payer.ledger.paid_operators -= cents
                continue
            payee.bank += cents
            payee.ledger.from_operators += cents
            payee.outbox.append((d + 1, mail))

    def _view(self) -> dict[str, list[dict[str, Any]]]:
        view: dict[str, list[dict[str, Any]]] = {}
        for op in self.seats:
            for loc in op.eco.locations:
                machines = [{"machine": m, "facings": [
                    {"product": s.product, "price": _euros(s.price),
                     "stock": band(s.units, s.capacity)}
                    for s in sorted(op.slots.values(), key=lambda s: s.id)
                    if s.machine == m and s.units > 0]}
                    for m in (f"{loc.id}:SNACK", f"{loc.id}:DRINKS")]
                view.setdefault(loc.id, []).append({
                    "seat": op.seat, "operator": op.name, "email": op.address,
                    "open": op.seat not in self.left and not op.done, "machines": machines})
        return view


def _end_day(env: Any, a: Any) -> dict[str, Any]:
    d = env._day
    env.market.end_day(env.seat)
    return {"ok": True, "ended_day": d, "message": (
        "your day is over; customers buy tonight at the prices then in force, once every "
        "operator has ended the day; tomorrow's report says what sold")}


def _see_competitors(env: Any, a: Any) -> dict[str, Any]:
    seen = env.market.competitors(env.seat, a.location)
    if seen is None:
        return {"ok": False, "error": f"no location {a.location!r}"}
    return {"ok": True, "location": a.location, "as_of": f"day {env._day}, morning",
            "competitors": seen}


def _email_operator(env: Any, a: Any) -> dict[str, Any]:
    seat, error = env.market.other(env.seat, a.to)
    if error is not None:
        return {"ok": False, "error": error}
    key = (env._day, seat)
    if env.mailed.get(key, 0) >= MAILS_A_DAY:
        return {"ok": False, "error": f"at most {MAILS_A_DAY} e-mails a day to one operator"}
    env.mailed[key] = env.mailed.get(key, 0) + 1
    env.market.post(env.seat, seat, Email("", env._day + 1, env.address, a.subject, a.body))
    return {"ok": True, "to": env.market.seats[seat].name,
            "message": "sent; it arrives overnight"}


def _pay_operator(env: Any, a: Any) -> dict[str, Any]:
    seat, error = env.market.other(env.seat, a.to)
    if error is not None:
        return {"ok": False, "error": error}
    cents = _cents(a.amount)
    if cents is None:
        return {"ok": False, "error": "amounts are in euros with at most 2 decimals"}
    if cents > env.bank:
        return {"ok": False, "error": "not enough money in the bank"}
    env.bank -= cents
    env.ledger.paid_operators += cents
    note = f"Payment of EUR {_euros(cents):.2f} from {env.name}" + (
        f": {a.memo}" if a.memo else "")
    env.market.post(env.seat, seat, Email("", env._day + 1, env.address, note[:200], note),
                    cents)
    return {"ok": True, "paid": _euros(cents), "to": env.market.seats[seat].name,
            "message": "paid; credited to them overnight"}
