"""A trial's plan, its outcome so far, and what the scheduler hands it (design §3): the
types a trial, the agent loop, the scheduler and its workers share."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..budgets import Budget
from ..environment import DEFAULT_WORLD_SEED, Environment, RecordTable
from ..providers import ModelClient
from ..results import ResultsWriter, Tokens, TrialHistory, TrialRecord, TrialStatus
from ._calibration import Calibration
from ._config import ModelConfig
from ._context import Carried


@dataclass(frozen=True, slots=True)
class TrialSpec:
    trial_id: str
    run_id: str
    model: ModelConfig
    seed: int
    repeat: int
    budget_usd: Decimal | None
    world_seed: int = DEFAULT_WORLD_SEED   # the frozen world (RunConfig.world_seeds)
    attempt: int = 1          # > 1 when --resume --restart runs the trial again from day 1
    segment: int = 1          # > 1 when --resume continues the trial (or reruns a policy)
    resume: bool = False      # continue from the log (LLM trials), see ``_replay``
    spent_before: Decimal = Decimal(0)     # what earlier segments spent
    history: TrialHistory | None = field(default=None, compare=False, repr=False)
    match_id: str | None = None   # an arena trial: its match (design §23) and seat in it
    seat: int = 0
    replay_only: bool = False     # a resumed match's operator that had already finished:
                                  # its logged calls are replayed until it left


@dataclass
class TrialOutcome:
    spec: TrialSpec
    status: str = TrialStatus.RUNNING
    reason: str | None = None
    final: dict[str, float] = field(default_factory=dict)
    cost: Decimal = Decimal(0)
    priced: bool = True
    # input, output, cache read, cache write (input counts the cached ones too)
    tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    exchanges: int = 0
    tool_calls: int = 0
    days: int = 0
    resumable: bool = True        # an error that --resume may fix (not a refused request)

    def record(self, started: dt.datetime, ended: dt.datetime | None) -> TrialRecord:
        """The trial as it stands, as its row in the results file."""
        spec, final = self.spec, self.final
        return TrialRecord(
            spec.trial_id, spec.run_id, spec.model.label, spec.world_seed, spec.seed,
            spec.repeat, spec.attempt, self.status, self.reason, final.get("initial_cash"),
            final.get("final_cash"), final.get("final_net_assets"), final.get("score"),
            self.cost if self.priced else None, spec.budget_usd, Tokens(*self.tokens),
            self.exchanges, self.tool_calls, self.days, started, ended,
            final.get("net_transfers"))

    def as_json(self) -> dict[str, Any]:
        started = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)   # not printed
        return self.record(started, None).as_json() | {
            "resumable": self.status == TrialStatus.ERROR and self.resumable}


@dataclass
class TrialContext:
    """What the scheduler hands a trial: never anything about vending."""

    make_env: Callable[[int, int], Environment]      # (seed, world seed) -> a fresh world
    writer: ResultsWriter
    budget: Budget
    client: ModelClient | None            # None for in-process policies
    count_tokens: Callable[[list[dict[str, Any]]], Awaitable[list[int]]] | None
    tools_tokens: int
    calibration: Calibration | None       # the model's, shared with its other trials
    days: int
    timeout_s: float | None
    max_turns: int | None
    on_progress: Callable[[TrialOutcome, Environment], None] = lambda o, e: None
    records: tuple[RecordTable, ...] = ()  # the tables the world's day rows go to
    # in a match: waits, once the trial's day has ended, until every other operator's
    # has and the world's night has run (None: a trial alone never waits)
    turn: Callable[[], Awaitable[None]] | None = None
    carried: Carried | None = None        # how the provider counts what replies carry back
