"""What every world's arena shares (SPEC 23): the seats' names and addresses, the day
that closes when every operator still playing has ended it, the post between
operators (delivered overnight, in a fixed order), and the morning's view of the
competitors. A world's market subclasses ``Market`` with its night and its view."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..errors import ConfigError

NAMES = ("Northwind Vending", "Bluebird Snacks", "Corner Kiosk Co", "Delta Machines")
MAX_SEATS = len(NAMES)
MAILS_A_DAY = 5               # e-mails one operator may send another in a day


class Message(BaseModel):
    """The arguments of a tool between operators (strict, no unknown keys)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class EmailOperator(Message):
    to: str = Field(min_length=3, max_length=200,
                    description="another operator's address (see_competitors shows them)")
    subject: str = Field(max_length=200)
    body: str = Field(max_length=2000)


def pay_operator(currency: str, most: float) -> type[Message]:
    """``pay_operator``'s arguments in a world's ``currency``, at most ``most``."""
    model: type[Message] = create_model(
        "PayOperator", __base__=Message,
        to=(str, Field(min_length=3, max_length=200,
                       description="another operator's address")),
        amount=(float, Field(gt=0, le=most, description=f"{currency}, at most 2 decimals")),
        memo=(str, Field(default="", max_length=200)))
    return model


def address(seat: int) -> str:
    """Seat ``seat``'s e-mail address."""
    return f"operator-{'abcd'[seat]}@vendors.example"


def band(units: int, full: int) -> str:
    """How full a facing looks to a passer-by (``full``: what counts as full)."""
    share = units / full
    return "plenty" if share >= 0.5 else "some" if share >= 0.2 else "few"


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
        self._post: list[tuple[int, int, int, Any, int]] = []  # from, n, to, what, money
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
    def post(self, sender: int, to: int, what: Any, money: int = 0) -> None:
        """Something for seat ``to`` (and ``money`` already taken from the sender),
        delivered tonight."""
        with self.lock:
            self._post.append((sender, len(self._post), to, what, money))

    def delivered(self) -> list[tuple[int, int, Any, int]]:
        """Tonight's post, in a fixed order (by sender, then as sent): (sender, to,
        what, money); the bag is emptied."""
        post, self._post = sorted(self._post, key=lambda p: p[:2]), []
        return [(sender, to, what, money) for sender, _, to, what, money in post]

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
