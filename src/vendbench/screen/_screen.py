"""``vendbench screen``: every trial through the scanners, then (with a judge) through a
model that reads each chunk once, within a budget it cannot pass (design §32.2).

Findings replace what the same scanner found before in that trial. The judge's answer to
each chunk is committed as it comes, keyed by the rubric's version, the chunk's content
and the judge: a killed screen resumes where it stopped and a second screen of the same
trials asks nothing (both pay nothing twice). Before the judge spends anything, the
forecast says what the chunks still unread are expected to cost and what they reserve
at most; ``max_forecast`` refuses a screen expected to cost more."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..budgets import Budget
from ..errors import BudgetExceeded, ConfigError, ProviderError
from ..results import FindingRow, Screening, Store
from . import _match, _world_checks  # noqa: F401  (their scanners register)
from ._ask import Judge, JudgeLog
from ._judge import NAME, RUBRIC_VERSION, Chunk, UnreadableReply, chunks, verdicts
from ._match import Seat
from ._scanners import SCANNERS, Found, Scanner
from ._transcript import Transcript, load

Progress = Callable[[str, int, int], None]


@dataclass
class JudgePlan:
    """A judge for a screen: its model, the budget it cannot pass, the forecast it may
    not exceed (None: any) and the tokens of a chunk at most."""

    judge: Judge
    budget: Decimal
    max_forecast: Decimal | None = None
    chunk_tokens: int = 24_000


@dataclass
class Forecast:
    """What the judge's unread chunks are expected to cost, and reserve at most."""

    chunks: int = 0
    cached: int = 0
    tokens: int = 0
    expected: Decimal = Decimal(0)
    at_most: Decimal = Decimal(0)
    per_trial: dict[str, int] = field(default_factory=dict)     # chunks of each trial

    def as_json(self) -> dict[str, Any]:
        return {"chunks": self.chunks, "cached": self.cached, "to_read": self.chunks -
                self.cached, "prompt_tokens": self.tokens,
                "expected_usd": float(self.expected), "at_most_usd": float(self.at_most)}


@dataclass
class Screened:
    """What a screen did: the trials it read, findings per scanner and severity, and the
    judge's account (chunks read, cached, unread; quotes dropped; money)."""

    screen_id: str
    trials: int = 0
    found: dict[str, dict[str, int]] = field(default_factory=dict)
    judge: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"screen_id": self.screen_id, "trials": self.trials, "findings": self.found,
                "judge": self.judge, "notes": self.notes, "seconds": round(self.seconds, 2)}


def scanners(names: Sequence[str] | None = None) -> list[Scanner]:
    """The scanners called ``names`` (all: None); ConfigError names an unknown one."""
    if names is None:
        return list(SCANNERS.values())
    unknown = [n for n in names if n not in SCANNERS and n != NAME]
    if unknown:
        raise ConfigError(f"no scanner {', '.join(unknown)}; scanners: "
                          f"{', '.join(SCANNERS)} (and {NAME}, with --judge)")
    return [SCANNERS[n] for n in names if n in SCANNERS]


def _rows(trial_id: str, s: Scanner, found: list[Found], screen_id: str,
          judge: str | None = None) -> list[FindingRow]:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    return [FindingRow(trial_id, s.name, s.version, judge, f.day, f.exchange, f.msg_id,
                       f.call, f.category, f.severity, f.quote, f.explanation, screen_id, now)
            for f in found]


def new_screen_id() -> str:
    return f"screen-{dt.datetime.now(dt.timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


async def screen(store: Store, run_ids: Sequence[str] | None, *,
                 only: Sequence[str] | None = None, plan: JudgePlan | None = None,
                 salt: str | None = None, progress: Progress | None = None,
                 on_forecast: Callable[[Forecast], None] | None = None) -> Screened:
    """Screen the trials of ``run_ids`` (all: None) with the scanners ``only`` names (all:
    None), then with ``plan``'s judge. ``on_forecast`` hears the judge's forecast before
    it spends anything."""
    start = time.perf_counter()
    reads = Screening(store)
    trials = reads.trials(run_ids)
    chosen = scanners(only)
    out = Screened(new_screen_id(), len(trials))
    reads.begin(out.screen_id, plan.judge.model.label if plan else None,
                plan.budget if plan else None,
                {"runs": list(run_ids) if run_ids is not None else None,
                 "scanners": [f"{s.name}:{s.version}" for s in chosen]})
    status = "interrupted"
    try:
        _scan(store, reads, trials, chosen, out, salt, progress)
        if plan is not None:
            out.judge = await _judge_all(store, reads, trials, plan, out, progress,
                                         on_forecast)
        status = "done"
    finally:
        reads.end(out.screen_id, status)
        out.seconds = time.perf_counter() - start
    return out


def _count(out: Screened, scanner: str, found: Sequence[Found | FindingRow]) -> None:
    mine = out.found.setdefault(scanner, {})
    for f in found:
        mine[f.severity] = mine.get(f.severity, 0) + 1


def _scan(store: Store, reads: Screening, trials: list[dict[str, Any]],
          chosen: list[Scanner], out: Screened, salt: str | None,
          progress: Progress | None) -> None:
    per_trial = [s for s in chosen if s.scope == "trial"]
    per_match = [s for s in chosen if s.scope == "match"]
    loaded: dict[str, Transcript] = {}
    for n, trial in enumerate(trials, 1):
        t = load(store, trial, salt=salt,
                 diagnosed=any(s.name in ("failure_modes", "derailment") for s in per_trial))
        for s in per_trial:
            found = s.run(t)
            reads.replace(t.trial_id, s.name, s.version, None, out.screen_id,
                          _rows(t.trial_id, s, found, out.screen_id))
            _count(out, s.name, found)
        if per_match and trial["arena"]:
            loaded[t.trial_id] = t
        if progress is not None:
            progress("scanning trials", n, len(trials))
    if per_match and loaded:
        _scan_matches(reads, loaded, per_match, out)


def _scan_matches(reads: Screening, loaded: dict[str, Transcript], per_match: list[Scanner],
                  out: Screened) -> None:
    runs = sorted({str(t.trial["run_id"]) for t in loaded.values()})
    matches: dict[str, list[Seat]] = defaultdict(list)
    for row in reads.seats(runs):
        if row["trial_id"] in loaded:
            matches[row["match_id"]].append(Seat(row["seat"], loaded[row["trial_id"]]))
    for seats in matches.values():
        for s in per_match:
            found = s.run(sorted(seats, key=lambda x: x.seat))
            for seat in seats:
                mine = [f for f in found if f.trial == seat.transcript.trial_id]
                reads.replace(seat.transcript.trial_id, s.name, s.version, None,
                              out.screen_id, _rows(seat.transcript.trial_id, s, mine,
                                                   out.screen_id))
                _count(out, s.name, mine)


def judge_forecast(store: Store, trials: list[dict[str, Any]], plan: JudgePlan,
                   progress: Progress | None = None) -> Forecast:
    """What the judge's chunks of ``trials`` (rows of ``Screening.trials``) not yet read
    are expected to cost, and reserve at most (counted; nothing is sent or kept)."""
    reads, judge, forecast = Screening(store), plan.judge, Forecast()
    for n, trial in enumerate(trials, 1):
        pieces = _chunks_of(store, trial, plan)
        forecast.per_trial[trial["trial_id"]] = len(pieces)
        for c in pieces:
            forecast.chunks += 1
            if reads.cached(NAME, RUBRIC_VERSION, judge.model.label, c.sha256) is not None:
                forecast.cached += 1
                continue
            forecast.tokens += judge.prompt_tokens(c)
            forecast.expected += judge.expected(c)
            forecast.at_most += judge.at_most(c)
        if progress is not None:
            progress("counting chunks", n, len(trials))
    return forecast


def _chunks_of(store: Store, trial: dict[str, Any], plan: JudgePlan) -> list[Chunk]:
    t = load(store, trial, diagnosed=False)
    return chunks(t, plan.chunk_tokens, plan.judge.count)


async def _judge_all(store: Store, reads: Screening, trials: list[dict[str, Any]],
                     plan: JudgePlan, out: Screened, progress: Progress | None,
                     on_forecast: Callable[[Forecast], None] | None) -> dict[str, Any]:
    judge, label = plan.judge, plan.judge.model.label
    forecast = judge_forecast(store, trials, plan, progress)
    if on_forecast is not None:
        on_forecast(forecast)
    if plan.max_forecast is not None and forecast.expected > plan.max_forecast:
        raise ConfigError(f"the judge's forecast ${forecast.expected:.4f} (at most "
                          f"${forecast.at_most:.4f}) for {forecast.chunks - forecast.cached} "
                          f"chunk(s) is above --max-forecast ${plan.max_forecast}; nothing "
                          "was sent")
    account: dict[str, Any] = {"model": label, "rubric_version": RUBRIC_VERSION,
                               "forecast": forecast.as_json(), "budget_usd": float(plan.budget),
                               "asked": 0, "cached": 0, "unread": 0, "unreadable": 0,
                               "dropped_quotes": 0, "findings": 0, "stopped": None}
    budget = Budget("screen", plan.budget)
    log = JudgeLog(store, out.screen_id, judge)
    partly = 0
    for n, trial in enumerate(trials, 1):
        if account["stopped"] is None:
            done = await _judge_trial(store, reads, trial, plan, log, budget, out, account)
            partly += not done
        else:
            account["unread"] += forecast.per_trial[trial["trial_id"]]
            partly += 1
        if progress is not None:
            progress("judging trials", n, len(trials))
    account["spent_usd"] = float(reads.spent(out.screen_id))
    if partly:
        out.notes.append(f"{partly} trial(s) not wholly read by the judge; screen again to "
                         "finish them (what was read is kept and not paid for again)")
    return account


async def _judge_trial(store: Store, reads: Screening, trial: dict[str, Any],
                       plan: JudgePlan, log: JudgeLog, budget: Budget, out: Screened,
                       account: dict[str, Any]) -> bool:
    """Read one trial's chunks (those not cached), then keep its findings if every chunk
    was read. False: some were not (the budget, the provider, an unreadable reply)."""
    label = plan.judge.model.label
    pieces = _chunks_of(store, trial, plan)
    answers: dict[str, list[dict[str, Any]]] = {}
    todo = []
    for c in pieces:
        hit = reads.cached(NAME, RUBRIC_VERSION, label, c.sha256)
        if hit is None:
            todo.append(c)
        else:
            answers[c.sha256] = json.loads(hit["findings_json"])
            account["cached"] += 1
    slots = asyncio.Semaphore(plan.judge.model.max_concurrency)

    async def read(c: Chunk) -> None:
        async with slots:
            if account["stopped"] is not None:
                account["unread"] += 1
                return
            try:
                text, cost = await log.ask(c, budget)
            except BudgetExceeded as exc:
                account["stopped"] = f"the budget: {exc}"
                account["unread"] += 1
                return
            except ProviderError as exc:
                account["stopped"] = f"the provider: {exc}"
                account["unread"] += 1
                return
            account["asked"] += 1
            try:
                kept, dropped = verdicts(text, c)
            except UnreadableReply as exc:
                account["unreadable"] += 1
                out.notes.append(f"{c.trial_id} days {c.days[0]}-{c.days[1]}: {exc}")
                return
            account["dropped_quotes"] += dropped
            reads.keep_chunk(NAME, RUBRIC_VERSION, label, c.sha256, c.trial_id, c.days, kept,
                             dropped, cost, out.screen_id)
            answers[c.sha256] = kept

    await asyncio.gather(*(read(c) for c in todo))
    if len(answers) < len(pieces):
        return False
    found = [Found(f["category"], f["severity"], f["quote"], f["explanation"], f["day"],
                   f["exchange"], msg_id=f["msg_id"]) for c in pieces for f in answers[c.sha256]]
    judge = Scanner(NAME, RUBRIC_VERSION, "the judge", lambda _: [])
    reads.replace(trial["trial_id"], NAME, RUBRIC_VERSION, label, out.screen_id,
                  _rows(trial["trial_id"], judge, found, out.screen_id, label))
    _count(out, NAME, found)
    account["findings"] += len(found)
    return True
