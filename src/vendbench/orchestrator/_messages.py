"""The messages between the scheduler and its worker processes, one type each.

Both ends ``match`` on the type; a message of no known type is a bug (the worker is
stopped and its trials fail loudly).

    scheduler -> worker:  Init, RunTrial, Ack, Cancel, Close
    worker -> scheduler:  Ready, Rows, Started, Progress, Finished, LimitEvents
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..budgets import Price
from ..providers import LimitEvent
from ..results import Append, Row
from ._config import RunConfig
from ._spec import TrialOutcome, TrialSpec


@dataclass(frozen=True, slots=True)
class Init:
    """The worker's share of the run (its config carries its share of the limits)."""

    config: RunConfig
    prices: dict[str, Price | None]


@dataclass(frozen=True, slots=True)
class Ready:
    """Everything a first trial needs is loaded (clients, tokenizers, a world)."""


@dataclass(frozen=True, slots=True)
class RunTrial:
    spec: TrialSpec
    limit: Decimal | None         # the trial's budget, earmarked from the run's pool


@dataclass(frozen=True, slots=True)
class Cancel:
    trial_id: str


@dataclass(frozen=True, slots=True)
class Close:
    """Finish the running trials and exit."""


@dataclass(frozen=True, slots=True)
class Rows:
    """What the worker's trials logged since its last flush; acknowledged (``Ack``) once
    committed when ``flush_id`` is given."""

    flush_id: int | None
    items: list[Append | Row]


@dataclass(frozen=True, slots=True)
class Ack:
    flush_id: int
    failure: str | None           # why the commit failed (None: it is on disk)


@dataclass(frozen=True, slots=True)
class Started:
    trial_id: str


@dataclass(frozen=True, slots=True)
class Progress:
    """A trial's counters after a day; they count rows the worker has yet to send."""

    trial_id: str
    fields: dict[str, Any]        # TrialOutcome attributes
    day: int
    net_assets: float


@dataclass(frozen=True, slots=True)
class Finished:
    trial_id: str
    outcome: TrialOutcome


@dataclass(frozen=True, slots=True)
class LimitEvents:
    events: list[LimitEvent]


ToWorker = Init | RunTrial | Ack | Cancel | Close
FromWorker = Ready | Rows | Started | Progress | Finished | LimitEvents
