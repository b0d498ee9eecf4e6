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
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

@dataclass(frozen=True, slots=True)
class MessageRow:
    """A message of a trial's conversation, stored once (its id is its place)."""

    TABLE: ClassVar[str] = "messages"
    trial_id: str
    msg_id: int
    role: str
    content_json: str
    tokens: int


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


def as_append(rows: list[AppendRow]) -> Append:
    """Rows of one type as one append to their table."""
    fields = type(rows[0]).__slots__
    return Append(rows[0].TABLE, [tuple(getattr(r, f) for f in fields) for r in rows],
                  fields)


_TRIAL_UPSERT = """INSERT OR REPLACE INTO trials (trial_id, run_id, model, seed, "repeat",
    attempt, status, reason, initial_cash, final_cash, final_net_assets, cost_usd, budget_usd,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, exchanges, tool_calls,
    days_completed, started_at, ended_at, wall_seconds, world_seed)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


@dataclass(frozen=True, slots=True)
class TrialRow:
    """A trial as it stands (written when it starts, at each day, and when it ends)."""

    trial_id: str
    run_id: str
    model: str
    seed: int
    repeat: int
    attempt: int
    status: str
    reason: str | None
    initial_cash: float | None
    final_cash: float | None
    final_net_assets: float | None
    cost_usd: Decimal | None
    budget_usd: Decimal | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    exchanges: int
    tool_calls: int
    days_completed: int
    started_at: dt.datetime
    ended_at: dt.datetime | None
    wall_seconds: float | None
    world_seed: int

    def statement(self) -> tuple[str, list[Any]]:
        values = [getattr(self, f) for f in self.__slots__]
        values[6] = str(self.status)
        return _TRIAL_UPSERT, values


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
    """What a scenario's oracle scores on one world, seed, salt and horizon: the
    denominator of an oracle share, computed once (it is deterministic) and kept."""

    scenario: str
    world_seed: int
    seed: int
    salt_sha256: str          # "" for a public world
    days: int
    policy: str
    score: float
    computed_at: dt.datetime

    def statement(self) -> tuple[str, list[Any]]:
        columns = ", ".join(self.__slots__)
        return (f"INSERT OR IGNORE INTO ceilings ({columns}) VALUES "
                f"({', '.join('?' * len(self.__slots__))})",
                [getattr(self, f) for f in self.__slots__])


Row = (TrialRow | SegmentStarted | SegmentEnded | SegmentReplayed | RunWarning | RunEnded
       | RunRecord | CeilingRow)


@dataclass(frozen=True, slots=True)
class Append:
    """Rows appended to ``table``, as tuples in ``columns`` order (None: the order of
    ``COLUMNS[table]``, the results file's own tables)."""

    table: str
    rows: list[tuple]
    columns: tuple[str, ...] | None = None
