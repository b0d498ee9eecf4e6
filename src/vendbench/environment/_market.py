"""What every world's arena shares (design §23, 26.1): the seats' names and addresses, the
day that closes when every operator still playing has ended it, the post between
operators (delivered overnight, in a fixed order), the morning's view of the
competitors, and the three tools between operators, their rules and their one dispatch
(``Seat``). A world's market subclasses ``Market`` with its night and its view; its
operator mixes in ``Seat`` with its place, its currency and where its money is."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, create_model

from .._text import printable
from ..errors import ConfigError
from ._arguments import ArgumentError, Args, ToolSpec, openai_schema, validate

NAMES = ("Northwind Vending", "Bluebird Snacks", "Corner Kiosk Co", "Delta Machines")
MAX_SEATS = len(NAMES)
MAILS_A_DAY = 5               # messages (e-mails, payments with a memo) to one operator a day
MEMO_CHARS = 100              # a payment's memo: one line, at most this long
DAY_OVER_MESSAGE = ("your day is over; customers buy tonight at the prices then in force, once "
            "every operator has ended the day; tomorrow's report says what sold")


class EmailOperator(Args):
    to: str = Field(min_length=3, max_length=200,
                    description="another operator's address (see_competitors shows them)")
    subject: str = Field(max_length=200)
    body: str = Field(max_length=2000)


@cache
def arena_tools(place: str, place_text: str, currency: str, most: float
                ) -> dict[str, ToolSpec]:
    """The three tools between operators, in a world whose places are named by the
    argument ``place`` and whose money is ``currency`` (at most ``most`` a payment)."""
    fields: dict[str, Any] = {
        place: (str, Field(min_length=1, max_length=40, description=place_text))}
    see: type[Args] = create_model("SeeCompetitors", __base__=Args, **fields)
    pay: type[Args] = create_model(
        "PayOperator", __base__=Args,
        to=(str, Field(min_length=3, max_length=200,
                       description="another operator's address")),
        amount=(float, Field(ge=0.01, le=most,
                             description=f"{currency}, at least 0.01, at most 2 decimals")),
        memo=(Annotated[str, AfterValidator(_one_line)],
              Field(default="", max_length=MEMO_CHARS, pattern=r"^[^\n\r]*$",
                         description=f"one line, at most {MEMO_CHARS} characters; a "
                                     "payment with a memo counts as a message")))
    return {
        "see_competitors": ToolSpec(see, "The other operators' machines at a place as a "
                                   "customer saw them this morning: products, prices, how "
                                   "full; and each operator's e-mail address.", "query"),
        "email_operator": ToolSpec(EmailOperator, "Write to another operator; it arrives "
                                   f"overnight (at most {MAILS_A_DAY} messages a day to "
                                   "each, payments with a memo included).", "remote"),
        "pay_operator": ToolSpec(pay, "Pay another operator: paid at once, credited to them "
                                 "overnight (a night's payments from one operator arrive "
                                 "as one).", "remote"),
    }


def _one_line(text: str) -> str:
    """A memo is one line by any reckoning: none of the characters Python's
    ``splitlines`` breaks at (the schema's pattern names only the common two)."""
    if text and text.splitlines() != [text]:
        raise ValueError("a memo is one line: no line or paragraph breaks")
    return text


@dataclass(frozen=True, slots=True)
class Note:
    """Something one operator sends another (an e-mail, or a payment with its memo),
    delivered overnight; each world shows it in its own way."""

    sender: int
    name: str
    address: str
    subject: str
    body: str
    cents: int = 0


def shown(text: str) -> str:
    """An operator's words as data: control and format characters (bidi overrides,
    zero-width marks), line and paragraph separators, private and unassigned code points
    shown as their escapes (``\\u202e``), so nothing in them can move, hide or break
    what the harness writes around them. New lines stay (``quoted`` marks each)."""
    return printable(text, keep="\n")


def quoted(text: str, indent: str = "  ") -> list[str]:
    """``text`` line by line, each behind ``> ``: no line of it can start a line of the
    report it is shown in."""
    return [f"{indent}> {line}" for line in shown(text).split("\n")]


def one_line(text: str) -> str:
    """``text`` as one quoted string (a subject, a memo)."""
    return json.dumps(shown(text), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Payments:
    """A night's payments from one operator to another, as they are delivered: one
    notice, whatever their number (a flood of small payments is one line)."""

    sender: int
    name: str
    address: str
    cents: int
    count: int
    memos: tuple[str, ...]

    @classmethod
    def of(cls, notes: list[Note]) -> Payments:
        first = notes[0]
        return cls(first.sender, first.name, first.address, sum(n.cents for n in notes),
                   len(notes), tuple(n.body for n in notes if n.body))

    def words(self, currency: str, amount: str) -> str:
        """What the recipient is told (``amount``: the total as the world writes it)."""
        times = f" in {self.count} payments" if self.count > 1 else ""
        memos = "; memo " + ", ".join(one_line(m) for m in self.memos) if self.memos else ""
        return f"payment of {currency} {amount}{times} from {self.name} <{self.address}>{memos}"


def address(seat: int) -> str:
    """Seat ``seat``'s e-mail address."""
    return f"operator-{'abcd'[seat]}@vendors.example"


def band(units: int, full: int) -> str:
    """How full a facing looks to a passer-by (``full``: what counts as full)."""
    share = units / full
    return "plenty" if share >= 0.5 else "some" if share >= 0.2 else "few"


class Seat:
    """An operator's side of the arena, mixed into a world's environment: the three tools
    between operators and their rules, once for every world. The world says what its
    places are called (``PLACE``), its money (``CURRENCY``, ``MOST``), how it tags a
    tool's description (``tagged``), and where an operator's money is (``today``,
    ``held``, ``paid_out``)."""

    PLACE: ClassVar[tuple[str, str]]          # the argument naming a place, and its words
    CURRENCY: ClassVar[str]
    MOST: ClassVar[float]                      # the largest payment
    tagged: ClassVar[bool] = False             # descriptions start with "[query] "

    market: Market
    seat: int
    name: str
    address: str

    def take_seat(self, market: Market, seat: int) -> None:
        self.market, self.seat = market, seat
        self.name, self.address = NAMES[seat], address(seat)
        self.transfers = 0           # cents from the other seats less cents paid to them
        self.mailed: dict[tuple[int, int], int] = {}     # (day, to seat) -> e-mails sent

    @classmethod
    def arena(cls) -> dict[str, ToolSpec]:
        return arena_tools(*cls.PLACE, cls.CURRENCY, cls.MOST)

    @classmethod
    def arena_schemas(cls) -> list[dict[str, Any]]:
        return [openai_schema(name, f"[{t.kind}] {t.text}" if cls.tagged else t.text,
                              t.model) for name, t in cls.arena().items()]

    def arena_call(self, name: str, arguments: dict[str, Any] | str | None
                   ) -> dict[str, Any]:
        """One call of a tool between operators (``name`` one of ``arena()``)."""
        try:
            args = validate(self.arena()[name].model, arguments)
        except ArgumentError as exc:
            return {"ok": False, "error": f"{name}: {exc}"}
        return self.arena_run(name, args)

    def arena_run(self, name: str, args: Any) -> dict[str, Any]:
        """A tool between operators with validated ``args``."""
        run: dict[str, Callable[[Any], dict[str, Any]]] = {
            "see_competitors": self._see, "email_operator": self._email,
            "pay_operator": self._pay}
        return run[name](args)

    # -- what every world's operator does alike (a mixin's calls to the world's own methods:
    # mypy cannot see that ``super()`` is the world's environment, hence the ignores)
    @property
    def day(self) -> int:
        """Its day as its agent sees it: the next one once it has ended today (its
        morning's report waits for the market's night)."""
        return self.today() + (self.seat in self.market.ended)

    def call(self, name: str, arguments: dict[str, Any] | str | None = None
             ) -> dict[str, Any]:
        refused = self.market.refusal(self)
        return refused or super().call(name, arguments)  # type: ignore[misc]

    def summary(self) -> dict[str, Any]:
        own: dict[str, Any] = super().summary()  # type: ignore[misc]
        return own | {"seat": self.seat, "operator": self.name}

    def final_state(self) -> dict[str, float]:
        """The world's, with the seat's net transfers (design §29.2): what it received
        from the other seats less what it paid them, in the world's currency. Its score
        less them is what it earned."""
        own: dict[str, float] = super().final_state()  # type: ignore[misc]
        return own | {"net_transfers": self.transfers / 100}

    def drain_records(self) -> dict[str, list[dict[str, Any]]]:
        with self.market.lock:                 # the night may be writing them
            drained: dict[str, list[dict[str, Any]]] = super().drain_records()  # type: ignore[misc]
            return drained

    # -- where the world keeps an operator's day and money ---------------------------------
    def today(self) -> int:
        raise NotImplementedError

    def held(self) -> int:
        """What the operator can pay from, in cents."""
        raise NotImplementedError

    def paid_out(self, cents: int) -> None:
        raise NotImplementedError

    # -- the tools ---------------------------------------------------------------------------
    def _see(self, a: Any) -> dict[str, Any]:
        where = getattr(a, self.PLACE[0])
        seen = self.market.competitors(self.seat, where)
        if seen is None:
            return {"ok": False, "error": f"no {self.PLACE[0].replace('_', ' ')} "
                                          f"{where!r}: {self.PLACE[1]}"}
        return {"ok": True, self.PLACE[0]: where, "as_of": f"day {self.today()}, morning",
                "competitors": seen}

    def _email(self, a: Any) -> dict[str, Any]:
        seat, error = self.market.other(self.seat, a.to)
        if seat is None:
            return {"ok": False, "error": error}
        if not self._may_write(seat):
            return {"ok": False, "error": f"at most {MAILS_A_DAY} messages a day to one "
                                          "operator (e-mails and payments with a memo)"}
        self.market.post(seat, Note(self.seat, self.name, self.address, a.subject, a.body))
        return {"ok": True, "to": self.market.seats[seat].name,
                "message": "sent; it arrives overnight"}

    def _pay(self, a: Any) -> dict[str, Any]:
        seat, error = self.market.other(self.seat, a.to)
        if seat is None:
            return {"ok": False, "error": error}
        cents = round(a.amount * 100)
        if abs(a.amount * 100 - cents) > 1e-6:
            return {"ok": False, "error": f"amounts are in {self.CURRENCY} with at most 2 "
                                          "decimals"}
        if cents > self.held():
            return {"ok": False, "error": f"not enough money to pay {self.CURRENCY} "
                                          f"{cents / 100:,.2f}"}
        if a.memo and not self._may_write(seat):
            return {"ok": False, "error": f"at most {MAILS_A_DAY} messages a day to one "
                                          "operator (e-mails and payments with a memo); "
                                          "pay without a memo"}
        self.paid_out(cents)
        self.transfers -= cents
        self.market.post(seat, Note(self.seat, self.name, self.address, "", a.memo, cents))
        return {"ok": True, "paid": cents / 100, "to": self.market.seats[seat].name,
                "message": "paid; credited to them overnight"}

    def _may_write(self, seat: int) -> bool:
        """Whether one more message to ``seat`` today is within the limit (it is then
        counted)."""
        key = (self.today(), seat)
        if self.mailed.get(key, 0) >= MAILS_A_DAY:
            return False
        self.mailed[key] = self.mailed.get(key, 0) + 1
        return True


class Market:
    """The seats of a match and its shared day. Subclasses build ``seats`` (one
    Environment each, with ``seat``, ``name``, ``address`` and ``done``) and define
    ``_night(live)`` (customers served, the ``delivered()`` post handed over) and
    ``_view()``."""

    seats: Sequence[Any]

    def __init__(self, seats: int) -> None:
        if not isinstance(seats, int) or isinstance(seats, bool) \
                or not 2 <= seats <= MAX_SEATS:
            raise ConfigError(f"a match has 2-{MAX_SEATS} operators, got {seats!r}")
        self.size = seats
        self.lock = threading.RLock()
        self.ended: set[int] = set()           # seats that ended today
        self.left: set[int] = set()            # seats that stopped playing
        self.nights = 0
        self._post: list[tuple[int, int, int, Note]] = []      # from, n, to, what
        self._seen: dict[str, list[dict[str, Any]]] = {}

    # -- the day -------------------------------------------------------------------------
    def live(self) -> list[Any]:
        return [op for op in self.seats if op.seat not in self.left and not op.done]

    def waiting(self, seat: int) -> bool:
        """Whether ``seat`` has ended the day and waits for the others."""
        return seat in self.ended

    def refusal(self, op: Any) -> dict[str, Any] | None:
        """What a call of ``op``'s is answered once it has ended its day, before the
        night (None: it may play)."""
        if op.seat in self.ended and not op.done:
            return {"ok": False, "error": "you have ended the day; the night runs when "
                                          "every operator has ended it"}
        return None

    def end_day(self, seat: int) -> None:
        with self.lock:
            self.ended.add(seat)
            self._close_if_all_ended()

    def leave(self, seat: int) -> None:
        """``seat`` stops playing (its trial ended): its machines sell nothing more."""
        with self.lock:
            self.left.add(seat)
            self.ended.discard(seat)
            self._close_if_all_ended()

    def _close_if_all_ended(self) -> None:
        live = self.live()
        if live and all(op.seat in self.ended for op in live):
            self._night(live)
            self.ended.clear()
            self.nights += 1
            self._seen = self._view()

    def _night(self, live: list[Any]) -> None:
        raise NotImplementedError

    def _view(self) -> dict[str, list[dict[str, Any]]]:
        """Each place's machines per operator as a customer sees them now: place ->
        [{"seat", "operator", "email", "open", "machines"}]."""
        raise NotImplementedError

    # -- between operators ---------------------------------------------------------------
    def post(self, to: int, note: Note) -> None:
        """``note`` for seat ``to`` (its money already taken from the sender), delivered
        tonight."""
        with self.lock:
            self._post.append((note.sender, len(self._post), to, note))

    def delivered(self) -> list[tuple[int, Note | Payments]]:
        """Tonight's post, in a fixed order (by sender, then as sent): (to, an e-mail,
        or the sender's payments to ``to`` together, where its first one was sent); the
        bag is emptied."""
        post, self._post = sorted(self._post, key=lambda p: p[:2]), []
        paid: dict[tuple[int, int], list[Note]] = {}
        out: list[tuple[int, Note | list[Note]]] = []
        for sender, _, to, note in post:
            if not note.cents:
                out.append((to, note))
            elif (sender, to) in paid:
                paid[(sender, to)].append(note)
            else:
                paid[(sender, to)] = [note]
                out.append((to, paid[(sender, to)]))
        return [(to, Payments.of(n) if isinstance(n, list) else n) for to, n in out]

    def competitors(self, seat: int, place: str) -> list[dict[str, Any]] | None:
        """The other operators at ``place`` as a customer saw them this morning (None:
        no such place)."""
        view = self._seen.get(place)
        if view is None:
            return None
        return [{k: v for k, v in o.items() if k != "seat"} for o in view if o["seat"] != seat]

    def find(self, email: str) -> int | None:
        return next((op.seat for op in self.seats if op.address == email.lower()), None)

    def other(self, seat: int, email: str) -> tuple[int | None, str | None]:
        """The seat at ``email`` if it is another operator's, else the error."""
        found = self.find(email)
        if found is None:
            return None, f"no operator at {email!r}; see_competitors shows their addresses"
        if found == seat:
            return None, "that is your own address"
        return found, None

    def briefing(self, seat: int, world: str) -> str:
        """What an operator is told of the market (``world``: how its customers choose)."""
        others = self.size - 1
        return f"""

The market: you are {NAMES[seat]} ({address(seat)}), one of {self.size} operators whose \
machines stand at the same places; {others} other operator{'s' if others > 1 else ''} \
compete for the same customers. {world} All operators work the same day at once; the \
night runs when every operator has ended the day. see_competitors shows a place's other \
machines as a customer saw them this morning; email_operator and pay_operator reach \
another operator overnight. No tool shows another operator's cash, notes or messages. \
What counts is your own score."""
