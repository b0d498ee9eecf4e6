"""The network world's arena (design §23): two to four operators in one market.

Each operator (a ``NetworkEnv`` with the arena's ``Seat``) has its own bank, depot,
machines, notes and inbox at the same three locations, and is scored alone. The night is
shared: each location's customers (the seed's, as alone) buy the cheapest acceptable
unit of what they want from any operator's facings with stock; a location draws its
strongest operator's crowd; ties between operators split at random per customer. A call
that does not fit the working day is refused (it cannot run the night for everyone).
"""

from __future__ import annotations

from typing import Any

from . import _demand
from ._env import WORLD, NetworkEnv
from ._handlers import HANDLERS
from ._state import Email, _euros
from ._tools import TOOLS, schemas
from .. import _market
from .._market import DAY_OVER_MESSAGE, Note, Payments, Seat, band, shown


class Operator(Seat, NetworkEnv):
    """One operator of a ``Market``: the network world behind the Environment protocol,
    with the arena's three tools, whose nights are the market's."""

    PLACE = ("location", "the locations are AI-LOUNGE, AI-HOUSE and MAIN-LOUNGE")
    CURRENCY, MOST = "EUR", 10_000
    crosses_midnight = False

    def __init__(self, market: Market, seat: int, seed: int, days: int | None,
                 world_seed: int, config: str | None, world_salt: str | None) -> None:
        super().__init__(seed, days, world_seed, config, world_salt)
        self.take_seat(market, seat)
        self.tool_specs = dict(TOOLS)
        self.tool_specs.update(self.arena())
        self.handlers = HANDLERS | {"wait_for_next_day": _end_day} | {
            name: _arena_handler(name) for name in self.arena()}
        self.tools = schemas() + self.arena_schemas()
        self.instructions += market.briefing(seat, (
            "Customers buy the cheapest acceptable unit of what they want from any machine "
            "at the location with stock; a call that does not fit what is left of the "
            "working day is refused."))

    def _minutes(self, name: str, args: Any) -> int:
        arena: dict[str, int] = self.eco["arena"]["cost"]
        return arena[name] if name in arena else super()._minutes(name, args)

    def _night(self) -> dict[str, Any]:
        raise AssertionError("an operator's night is the market's")       # never crossed

    def today(self) -> int:
        return self._day

    def held(self) -> int:
        return int(self.bank)

    def paid_out(self, cents: int) -> None:
        self.bank -= cents
        self.ledger.paid_operators += cents



def _arena_handler(name: str) -> Any:
    def run(env: Operator, args: Any) -> dict[str, Any]:
        return env.arena_run(name, args)
    return run


BANK = "payments@bank.example"      # who tells an operator it was paid (no operator is)


def _email(day: int, note: Note | Payments) -> Email:
    """A note as an e-mail in the recipient's inbox, marked by its kind (design §29.1):
    a night's payments from one operator as one notice from the bank, an operator's
    e-mail as written but from its address, its control characters shown."""
    if isinstance(note, Payments):
        text = note.words("EUR", f"{_euros(note.cents):.2f}")
        return Email("", day, BANK, f"Payment of EUR {_euros(note.cents):.2f} from "
                                    f"{note.name}", text, kind="payment")
    return Email("", day, note.address, shown(note.subject), shown(note.body),
                 kind="from another operator")


class Market(_market.Market):
    """``seats`` operators of the network world, one seed, one night (design §23)."""

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
        for to, note in self.delivered():
            payer, payee = self.seats[note.sender], live.get(to)
            if payee is None:
                payer.bank += note.cents
                payer.ledger.paid_operators -= note.cents
                payer.transfers += note.cents
                continue
            payee.bank += note.cents
            payee.ledger.from_operators += note.cents
            payee.transfers += note.cents
            payee.outbox.append((d + 1, _email(d + 1, note)))

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
    return {"ok": True, "ended_day": d, "message": DAY_OVER_MESSAGE}
