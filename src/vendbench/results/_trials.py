"""What a trial is, once: its statuses and the sets they fall in, its key, and which of
its attempts counts.

Resume, the leaderboard and trends all ask "the latest attempt of each trial"; they
ask it here, with one key (model, world, seed, repeat). The leaderboard, the trend, the
viewer and ``compare`` pair trials of different models on one key too (world, seed,
repeat). Two keys written apart once made resume skip a failed trial of a second world.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar


class TrialStatus(StrEnum):
    """How a trial stands or ended (stored as its string)."""

    RUNNING = "running"
    COMPLETED = "completed"
    BUDGET_EXHAUSTED = "budget_exhausted"     # the model spent its budget
    TIMEOUT = "timeout"
    MAX_TURNS = "max_turns"
    AGENT_STOPPED = "agent_stopped"           # replies without a tool call, in a row
    BANKRUPT = "bankrupt"
    CONTEXT_OVERFLOW = "context_overflow"     # a prompt the server cannot hold
    ERROR = "error"                           # the harness's or the provider's failure
    INTERRUPTED = "interrupted"               # Ctrl-C, SIGTERM, a client that left
    NOT_STARTED = "not_started"               # the run's pool could not promise it


# ended by the model's play (scored; kept by --resume): every end but the set-apart ones
FINISHED = frozenset({TrialStatus.COMPLETED, TrialStatus.BUDGET_EXHAUSTED,
                      TrialStatus.TIMEOUT, TrialStatus.MAX_TURNS, TrialStatus.AGENT_STOPPED,
                      TrialStatus.BANKRUPT, TrialStatus.CONTEXT_OVERFLOW})
# never ranked: harness failures, trials still running, trials never started (none of
# them the model's doing); --resume runs the ones that ended again
SET_APART = frozenset(TrialStatus) - FINISHED
RANKED = FINISHED


@dataclass(frozen=True, order=True, slots=True)
class PairKey:
    """What trials of different models are compared on: the same world, seed and repeat."""

    world_seed: int
    seed: int
    repeat: int

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> PairKey:
        return cls(row["world_seed"], row["seed"], row["repeat"])

    @property
    def world(self) -> tuple[int, int]:
        """The world and seed whose oracle score is the ceiling (one for every repeat)."""
        return self.world_seed, self.seed


@dataclass(frozen=True, order=True, slots=True)
class TrialKey:
    """Which trial of a panel a row is an attempt at."""

    model: str
    world_seed: int
    seed: int
    repeat: int

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> TrialKey:
        return cls(row["model"], row["world_seed"], row["seed"], row["repeat"])

    @property
    def pair(self) -> PairKey:
        return PairKey(self.world_seed, self.seed, self.repeat)


Trial = TypeVar("Trial", bound=Mapping[str, Any])


def latest_attempts(rows: Iterable[Trial]) -> dict[TrialKey, Trial]:
    """Each trial's latest attempt (never its best): the one started last, then the
    highest attempt number."""
    latest: dict[TrialKey, Trial] = {}
    for row in rows:
        key = TrialKey.of(row)
        if key not in latest or _order(row) > _order(latest[key]):
            latest[key] = row
    return latest


def _order(row: Mapping[str, Any]) -> tuple[dt.datetime, int]:
    return (row.get("started_at") or dt.datetime.min, row.get("attempt") or 1)
