"""The network world's records: slots, shipments, e-mails, complaints, the bank's ledger,
and the helpers every part of it uses (money in cents, seeded random streams)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _stream(seed: int, *key: Any) -> np.random.Generator:
    words = [seed & 0xFFFFFFFF] + [zlib.crc32(str(k).encode()) for k in key]
    return np.random.default_rng(np.random.SeedSequence(words))


def _euros(cents: int) -> float:
    """Cents to euros for display. For an int the division is already the two-decimal
    amount (correctly rounded, so rounding it again to cents changes nothing)."""
    return cents / 100 if type(cents) is int else round(cents / 100, 2)


def _cents(euros: float) -> int | None:
    """Exact cents of an amount in euros, or None if it has more than two decimals."""
    cents = round(euros * 100)
    return cents if abs(euros * 100 - cents) < 1e-6 else None


Lots = list[list[int]]        # [sell-by day, units], oldest first (one product's stock)


def take(lots: Lots, units: int) -> Lots:
    """Take ``units`` from ``lots``, oldest first (in place); returns the lots taken."""
    out: Lots = []
    while units > 0 and lots:
        sell_by, have = lots[0]
        n = min(have, units)
        out.append([sell_by, n])
        units -= n
        if n == have:
            lots.pop(0)
        else:
            lots[0][1] = have - n
    return out


def put(lots: Lots, more: Lots) -> None:
    """Add ``more`` to ``lots`` (in place), keeping them oldest first, one per day."""
    for sell_by, n in more:
        for lot in lots:
            if lot[0] == sell_by:
                lot[1] += n
                break
        else:
            lots.append([sell_by, n])
    lots.sort()


def expire(lots: Lots, day: int) -> int:
    """Remove the units whose sell-by day is before ``day`` (in place); how many."""
    gone = sum(n for sell_by, n in lots if sell_by < day)
    lots[:] = [lot for lot in lots if lot[0] >= day]
    return gone


def count(lots: Lots) -> int:
    return sum(n for _, n in lots)


@dataclass
class Slot:
    id: str
    machine: str              # e.g. AI-HOUSE:SNACK
    kind: str                 # "snack" or "drinks"
    size: str                 # "small", "large", "can"
    capacity: int
    product: str | None = None
    price: int = 0            # cents
    lots: Lots = field(default_factory=list)

    @property
    def units(self) -> int:
        return count(self.lots)

    @property
    def sell_by(self) -> int | None:
        """The day its oldest units must sell by (None when it is empty)."""
        return self.lots[0][0] if self.lots else None


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
    kind: str = ""             # the arena's: "payment", "from another operator"


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
    paid_operators: int = 0          # the arena: payments to other operators
    from_operators: int = 0          # and from them (credited overnight)
