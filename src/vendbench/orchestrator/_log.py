"""What a trial writes to the results file, in SPEC §3.2's shapes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from .._secrets import redact
from ..providers import Attempt
from ..results import (COLUMNS, ResultsWriter, RunWarning, SegmentEnded, SegmentReplayed,
                       SegmentStarted, TrialRow, dumps)
from ._context import Message


class TrialLog:
    """Turns a trial's events into rows for the single writer."""

    def __init__(self, writer: ResultsWriter, trial_id: str, model: str) -> None:
        self.writer, self.trial_id, self.model = writer, trial_id, model
        self.tool_seq = 0
        self.last_attempt = 0            # the number of the last attempt logged

    def messages(self, messages: list[Message]) -> None:
        # key order kept, so that a rebuilt request serialises as the one sent
        self.writer.put("messages", [(self.trial_id, m.id, m.body["role"],
                                      dumps(m.body, sort_keys=False), m.tokens)
                                     for m in messages])

    def attempt(self, seq: int, day: int, request: dict[str, Any], attempt: Attempt) -> None:
        c, f = attempt.completion, attempt.failure
        u = c.usage if c else None
        self.last_attempt = attempt.number
        self.writer.put("exchanges", [(
            self.trial_id, seq, day, attempt.number, self.model, dumps(request),
            dumps(c.raw) if c else None,
            *((u.prompt_tokens, u.completion_tokens, u.cache_read_tokens, u.cache_write_tokens,
               u.reasoning_tokens) if u else (None,) * 5),
            attempt.cost, attempt.reserved, round(attempt.latency_ms, 3),
            "ok" if c else f.kind.value, redact(f.message) if f else None,
            dt.datetime.fromtimestamp(attempt.sent_at, dt.timezone.utc).replace(tzinfo=None))])

    def reservation(self, seq: int, attempt: int, day: int, reserved: Decimal,
                    request: dict[str, Any]) -> None:
        """Money held for a request about to be sent (committed before it is)."""
        self.writer.put("reservations", [(
            self.trial_id, seq, attempt, day, reserved, dumps(request),
            dt.datetime.now(dt.timezone.utc).replace(tzinfo=None))])

    def segment_started(self, segment: int, at: dt.datetime) -> None:
        """One run of the trial begins (the first, then each resume)."""
        self.writer.put_row(SegmentStarted(self.trial_id, segment, at))

    def segment_ended(self, segment: int, at: dt.datetime, status: str) -> None:
        self.writer.put_row(SegmentEnded(self.trial_id, segment, at, status))

    def replayed(self, segment: int, from_seq: int, calls: int, seconds: float) -> None:
        """How a resumed segment caught up with the log."""
        self.writer.put_row(SegmentReplayed(self.trial_id, segment, from_seq, calls, seconds))

    def warning(self, run_id: str, kind: str, message: str) -> None:
        """A warning for the run, kept once per model and kind."""
        self.writer.put_row(RunWarning(run_id, self.model, kind, redact(message),
                                       dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)))

    def tool_call(self, exchange_seq: int | None, day: int, call_id: str | None, name: str,
                  args: Any, result: dict[str, Any]) -> None:
        self.tool_seq += 1
        self.writer.put("tool_calls", [(
            self.trial_id, self.tool_seq, exchange_seq, day, call_id, str(name)[:200],
            args if isinstance(args, str) else dumps(args), dumps(result),
            bool(result.get("ok")))])

    def records(self, records: dict[str, list[dict[str, Any]]]) -> None:
        for table, rows in records.items():
            columns = COLUMNS.get(table)
            if columns is None or not rows:
                continue
            self.writer.put(table, [
                (self.trial_id, *[_cell(c, r.get(c)) for c in columns[1:]]) for r in rows])

    def trial_row(self, *, run_id: str, seed: int, repeat: int, attempt: int,
                  world_seed: int, status: str, reason: str | None,
                  final: dict[str, float] | None, cost: Decimal | None,
                  budget: Decimal | None, tokens: tuple[int, ...], exchanges: int,
                  tool_calls: int, days: int, started: dt.datetime,
                  ended: dt.datetime | None) -> None:
        final = final or {}
        self.writer.put_row(TrialRow(
            self.trial_id, run_id, self.model, seed, repeat, attempt, status,
            redact(reason)[:4000] if reason else None, final.get("initial_cash"),
            final.get("final_cash"), final.get("final_net_assets"), cost, budget,
            *tokens, exchanges, tool_calls, days, started, ended,
            (ended - started).total_seconds() if ended else None, world_seed))


def _cell(column: str, value: Any) -> Any:
    if column == "date" and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value
