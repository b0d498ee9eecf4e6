"""The results file's writes, as typed rows.

Appended rows (a message, an exchange, a reservation, a tool call, a provider event)
name their table and are written in batches (``ResultsWriter.add``); the others
(a trial's upsert, a segment, a warning, a run) carry their statement. A trial, the
scheduler, a worker process and ``serve`` build these; only ``results`` turns them into
SQL. A worker sends them to the scheduler as they are (pickled dataclasses), never as
SQL strings.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, ClassVar, Protocol

@dataclass(frozen=True, slots=True)
class MessageRow:
    """A message of a trial's conversation, stored once (its id is its place)."""

    TABLE: ClassVar[str] = "messages"
    trial_id: str
    msg_id: int
    role: str
    content_json: str
    tokens: int
    carried_tokens: int = 0     # of what it carries back to its provider (design §24.1)


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """What the log keeps of a request (design §21), written once as ``request_json`` and
    read back here only: its parameters and the ids of the messages it carried (each
    message is stored once); its tools are the run's (``runs.tools_json``).
    ``providers.rebuild_request`` turns it back into the body that was sent."""

    model: str
    message_ids: tuple[int, ...]
    max_tokens: int
    temperature: float | None = None
    reasoning_effort: str | None = None
    tool_choice: str = "auto"
    cache_points: tuple[int, ...] = ()
    cache_key: str | None = None
    counted_tokens: int = 0               # our count of its prompt
    tools: str = "run"
    thinking_budget: int | None = None    # design §24.2 (stored only when set)
    top_p: float | None = None            # design §35.7 (stored only when set)
    seed: int | None = None               # ... the provider's sampling seed

    def json(self) -> str:
        """As stored: compact, keys sorted (what every file since schema 1 holds; a
        thinking budget, top_p and a sampling seed only when one was sent)."""
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)
                           if f.name not in _WHEN_SET or getattr(self, f.name) is not None},
                          separators=(",", ":"), sort_keys=True)

    @classmethod
    def parse(cls, text: str) -> LoggedRequest:
        """A stored ``request_json`` (keys it does not know are ignored, missing ones take
        their defaults)."""
        raw = json.loads(text)
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in raw.items() if k in known}
        for key in ("message_ids", "cache_points"):
            given[key] = tuple(given.get(key) or ())
        given["counted_tokens"] = given.get("counted_tokens") or 0
        return cls(**given)

    def parameters(self) -> dict[str, Any]:
        """Its sampling and caching parameters (what a request is sent with, beyond its
        messages and tools)."""
        return {"model": self.model, "max_tokens": self.max_tokens,
                "temperature": self.temperature, "reasoning_effort": self.reasoning_effort,
                "tool_choice": self.tool_choice, "cache_points": list(self.cache_points),
                "cache_key": self.cache_key, "thinking_budget": self.thinking_budget,
                "top_p": self.top_p, "seed": self.seed}


# a logged request's parameters kept only when sent (older files, and requests without
# them, hold the same bytes as before)
_WHEN_SET = frozenset({"thinking_budget", "top_p", "seed"})


@dataclass(frozen=True, slots=True)
class ExchangeRow:
    """One attempt of one request: what was sent (message ids and parameters), what came
    back, its tokens, cost, latency and status."""

    TABLE: ClassVar[str] = "exchanges"
    trial_id: str
    seq: int
    day: int
    attempt: int
    model: str
    request_json: str
    response_json: str | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None
    cost_usd: Decimal | None
    reserved_usd: Decimal | None
    latency_ms: float
    status: str
    error: str | None
    sent_at: dt.datetime
    usage_counted: bool | None     # True: the reply had no usage; its tokens are ours
    reply_json: str | None = None  # the reply in vendbench's shape (text, reasoning, calls)
    purpose: str = "act"           # or "compaction": the model summarising its context


@dataclass(frozen=True, slots=True)
class ReservationRow:
    """Money held for a request, committed before the request is sent."""

    TABLE: ClassVar[str] = "reservations"
    trial_id: str
    seq: int
    attempt: int
    day: int
    reserved_usd: Decimal
    request_json: str
    reserved_at: dt.datetime


@dataclass(frozen=True, slots=True)
class ToolCallRow:
    TABLE: ClassVar[str] = "tool_calls"
    trial_id: str
    seq: int
    exchange_seq: int | None
    day: int
    call_id: str | None
    name: str
    args_json: str
    result_json: str
    ok: bool


@dataclass(frozen=True, slots=True)
class ProviderEventRow:
    """A provider's limit moved (a 429, a backoff, a raise)."""

    TABLE: ClassVar[str] = "provider_events"
    run_id: str
    provider: str
    at_seconds: float
    event: str
    concurrency: float
    retry_after: float | None


AppendRow = MessageRow | ExchangeRow | ReservationRow | ToolCallRow | ProviderEventRow
APPENDED = (MessageRow, ExchangeRow, ReservationRow, ToolCallRow, ProviderEventRow)


def as_append(rows: Sequence[AppendRow]) -> Append:
    """Rows of one type as one append to their table."""
    fields = type(rows[0]).__slots__
    return Append(rows[0].TABLE, [tuple(getattr(r, f) for f in fields) for r in rows],
                  fields)


def cached_share(input_tokens: int | None, cache_read_tokens: int | None) -> float | None:
    """The share of input tokens read from the provider's prompt cache (None: no input)."""
    if not input_tokens:
        return None
    return (cache_read_tokens or 0) / input_tokens


@dataclass(frozen=True, slots=True)
class Tokens:
    """A trial's tokens so far (input counts the cached ones too)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def cached_share(self) -> float | None:
        return cached_share(self.input, self.cache_read)


_TOKEN_COLUMNS = {"input_tokens": "input", "output_tokens": "output",
                  "cache_read_tokens": "cache_read", "cache_write_tokens": "cache_write"}


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """A trial as it stands, in one shape (design §21): written when it starts, at each day
    and when it ends, read back by ``Store.trials`` (``TrialInfo``, the same columns),
    printed by ``as_json``. Its upsert is built from its fields: a field added here is a
    column written, read and printed."""

    TABLE: ClassVar[str] = "trials"
    trial_id: str
    run_id: str
    model: str
    world_seed: int
    seed: int
    repeat: int
    attempt: int
    status: str
    reason: str | None
    initial_cash: float | None
    final_cash: float | None
    final_net_assets: float | None    # cash plus stock
    score: float | None               # what the scenario scores (net assets, a bank balance)
    cost_usd: Decimal | None          # None: the model has no price (never guessed)
    budget_usd: Decimal | None
    tokens: Tokens
    exchanges: int
    tool_calls: int
    days_completed: int
    started_at: dt.datetime
    ended_at: dt.datetime | None
    # an arena seat's money from the other seats less its payments to them, in the
    # world's currency (design §29.2); None alone
    net_transfers: float | None = None

    @property
    def wall_seconds(self) -> float | None:
        return (self.ended_at - self.started_at).total_seconds() if self.ended_at else None

    @classmethod
    def columns(cls) -> list[str]:
        """The table's columns, in the order ``statement`` writes them."""
        return [c for f in fields(cls) for c in
                (_TOKEN_COLUMNS if f.name == "tokens" else [f.name])] + ["wall_seconds"]

    @classmethod
    def column_types(cls) -> dict[str, Any]:
        """Each column and its Python type (what ``Store.trials`` returns)."""
        types = {f.name: f.type for f in fields(cls)}
        return {c: "int" if c in _TOKEN_COLUMNS else
                "float | None" if c == "wall_seconds" else types[c] for c in cls.columns()}

    @classmethod
    def of(cls, row: dict[str, Any]) -> TrialRecord:
        """A record from a row of the table (``Store.trials``)."""
        own = {f.name for f in fields(cls)} - {"tokens"}
        return cls(**{k: row[k] for k in own}, tokens=Tokens(
            **{attr: row[c] or 0 for c, attr in _TOKEN_COLUMNS.items()}))

    def _values(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "tokens"}
        values |= {c: getattr(self.tokens, attr) for c, attr in _TOKEN_COLUMNS.items()}
        return values | {"status": str(self.status), "wall_seconds": self.wall_seconds}

    def statement(self) -> tuple[str, list[Any]]:
        columns = self.columns()
        values = self._values()
        sql = (f"INSERT OR REPLACE INTO {self.TABLE} ("
               + ", ".join(f'"{c}"' for c in columns)
               + ") VALUES (" + ", ".join("?" * len(columns)) + ")")
        return sql, [values[c] for c in columns]

    def as_json(self, times: bool = False) -> dict[str, Any]:
        """The record as ``vendbench run --json`` prints each trial (design §3.1): the
        columns but the run's, the budget and the cash; the cost as a number; the cached
        share; with ``times``, when it started and ended."""
        values = self._values()
        keep = [c for c in self.columns() if c not in _NOT_PRINTED
                and (times or c not in _TIMES)]
        out = {c: values[c] for c in keep}
        out["cost_usd"] = float(self.cost_usd) if self.cost_usd is not None else None
        if self.net_transfers is None:
            del out["net_transfers"]                   # a trial alone has none
        if times:
            out |= {c: values[c].isoformat() if values[c] is not None and c != "wall_seconds"
                    else values[c] for c in _TIMES}
        return out | {"cached_share": self.tokens.cached_share}


_NOT_PRINTED = {"run_id", "initial_cash", "final_cash", "budget_usd"}
_TIMES = ("started_at", "ended_at", "wall_seconds")


@dataclass(frozen=True, slots=True)
class SegmentStarted:
    """One run of a trial begins (the first, then each resume)."""

    trial_id: str
    segment: int
    at: dt.datetime

    def statement(self) -> tuple[str, list[Any]]:
        return ("INSERT OR REPLACE INTO segments (trial_id, segment, started_at, status) "
                "VALUES (?, ?, ?, 'running')", [self.trial_id, self.segment, self.at])


@dataclass(frozen=True, slots=True)
class SegmentEnded:
    trial_id: str
    segment: int
    at: dt.datetime
    status: str

    def statement(self) -> tuple[str, list[Any]]:
        return ("UPDATE segments SET ended_at = ?, status = ? WHERE trial_id = ? AND "
                "segment = ?", [self.at, str(self.status), self.trial_id, self.segment])


@dataclass(frozen=True, slots=True)
class SegmentReplayed:
    """How a resumed segment caught up with the log."""

    trial_id: str
    segment: int
    from_seq: int
    calls: int
    seconds: float

    def statement(self) -> tuple[str, list[Any]]:
        return ("UPDATE segments SET from_seq = ?, replayed_calls = ?, replay_seconds = ? "
                "WHERE trial_id = ? AND segment = ?",
                [self.from_seq, self.calls, round(self.seconds, 4), self.trial_id,
                 self.segment])


@dataclass(frozen=True, slots=True)
class RunWarning:
    """A warning for a run, kept once per model and kind."""

    run_id: str
    model: str
    kind: str
    message: str
    at: dt.datetime

    def statement(self) -> tuple[str, list[Any]]:
        return ("INSERT OR IGNORE INTO run_warnings (run_id, model, kind, message, "
                "warned_at) VALUES (?, ?, ?, ?, ?)",
                [self.run_id, self.model, self.kind, self.message, self.at])


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What was run: a run's row, written once when it starts."""

    run_id: str
    name: str | None
    created_at: dt.datetime
    scenario: str
    days: int
    config_json: str
    code_version: str
    prompt_sha256: str
    tools_sha256: str
    prompts_json: str
    tools_json: str
    prices_json: str
    total_budget_usd: Decimal | None
    status: str
    finished_at: dt.datetime | None
    world_seeds: str
    world_salt_sha256: str | None

    def statement(self) -> tuple[str, list[Any]]:
        values = [getattr(self, f) for f in self.__slots__]
        values[13] = str(self.status)
        columns = ", ".join(self.__slots__)
        return (f"INSERT INTO runs ({columns}) VALUES ({', '.join('?' * len(values))})",
                values)


@dataclass(frozen=True, slots=True)
class RunEnded:
    """A run's status when it stops."""

    run_id: str
    status: str
    at: dt.datetime | None

    def statement(self) -> tuple[str, list[Any]]:
        return ("UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?",
                [str(self.status), self.at, self.run_id])


@dataclass(frozen=True, slots=True)
class CeilingRow:
    """What a scenario's oracle scores on one world, seed, salt and horizon: a share's
    100 % (design §34), computed once (it is deterministic) and kept."""

    TABLE: ClassVar[str] = "ceilings"
    scenario: str
    world_seed: int
    seed: int
    salt_sha256: str          # "" for a public world
    days: int
    policy: str
    score: float
    computed_at: dt.datetime

    def statement(self) -> tuple[str, list[Any]]:
        names = [f.name for f in fields(self)]
        return (f"INSERT OR REPLACE INTO {self.TABLE} ({', '.join(names)}) VALUES "
                f"({', '.join('?' * len(names))})", [getattr(self, n) for n in names])


@dataclass(frozen=True, slots=True)
class FloorRow(CeilingRow):
    """What a scenario's floor policy (doing nothing) scores on one world, seed, salt and
    horizon: a share's 0 (design §34), kept as the oracle's score is."""

    TABLE: ClassVar[str] = "floors"


@dataclass(frozen=True, slots=True)
class MatchSeat:
    """One operator of an arena match (design §23): which trial sat in which seat of which
    match, written when the match's turn comes (before its budgets are earmarked). A match played again from day 1 (``--resume``)
    is a new attempt with new trials."""

    match_id: str
    attempt: int
    seat: int
    trial_id: str
    run_id: str
    model: str
    world_seed: int
    seed: int
    repeat: int
    operator: str             # the seat's name in the world

    def statement(self) -> tuple[str, list[Any]]:
        columns = ", ".join(f'"{c}"' for c in self.__slots__)
        return (f"INSERT OR REPLACE INTO match_seats ({columns}) VALUES "
                f"({', '.join('?' * len(self.__slots__))})",
                [getattr(self, f) for f in self.__slots__])


class Statement(Protocol):
    """A row written by one SQL statement (``Row``, a comparison's rows)."""

    def statement(self) -> tuple[str, list[Any]]: ...


Row = (TrialRecord | SegmentStarted | SegmentEnded | SegmentReplayed | RunWarning | RunEnded
       | RunRecord | CeilingRow | MatchSeat)


@dataclass(frozen=True, slots=True)
class Append:
    """Rows appended to ``table``, as tuples in ``columns`` order (None: the order of
    ``COLUMNS[table]``, the results file's own tables)."""

    table: str
    rows: list[tuple[Any, ...]]
    columns: tuple[str, ...] | None = None
