"""A trial's record in the results file: what a recording session, a trial's
segments and its outcome become, as rows for the single writer (design §3.2)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from .._secrets import redact
from ..environment import RecordTable, ToolCall
from ._rows import (AppendRow, Row, RunWarning, SegmentEnded, SegmentReplayed,
                    SegmentStarted, ToolCallRow, TrialRecord, as_append)
from ._store import Store
from ._writer import append, dumps


class Sink(Protocol):
    """What a log writes through: the run's ``ResultsWriter``, or a ``DirectWriter``."""

    def put(self, table: str, rows: list[tuple[Any, ...]],
            columns: tuple[str, ...] | None = None) -> None: ...

    def add(self, rows: Sequence[AppendRow]) -> None: ...

    def put_row(self, row: Row) -> None: ...


class DirectWriter:
    """A sink that writes at once, on the caller's connection (``serve``'s MCP sessions,
    one call at a time, nothing in flight to protect; ``import-inspect``, in one
    transaction)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def put(self, table: str, rows: list[tuple[Any, ...]],
            columns: tuple[str, ...] | None = None) -> None:
        if rows:
            append(self.store.con, table, rows, columns)

    def add(self, rows: Sequence[AppendRow]) -> None:
        if rows:
            batch = as_append(rows)
            self.put(batch.table, batch.rows, batch.columns)

    def put_row(self, row: Row) -> None:
        self.store.write(row)


def now() -> dt.datetime:
    """Now, as the results file keeps times (UTC, naive)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class TrialLog:
    """Turns a trial's events into rows; the recorder of its recording session.
    ``records`` are the tables its scenario records (day rows of others are dropped)."""

    def __init__(self, writer: Sink, trial_id: str, model: str,
                 records: tuple[RecordTable, ...] = ()) -> None:
        self.writer, self.trial_id, self.model = writer, trial_id, model
        self.tables = {t.name: t.names for t in records}
        self._warned: set[str] = set()

    def tool_call(self, call: ToolCall) -> None:
        args = call.arguments
        self.writer.add([ToolCallRow(
            self.trial_id, call.seq, call.exchange, call.day, call.call_id,
            str(call.name)[:200], args if isinstance(args, str) else dumps(args),
            dumps(call.result), bool(call.result.get("ok")))])

    def records(self, records: dict[str, list[dict[str, Any]]]) -> None:
        for table, rows in records.items():
            columns = self.tables.get(table)
            if columns is None or not rows:
                continue
            self.writer.put(table, [
                (self.trial_id, *[_cell(c, r.get(c)) for c in columns[1:]]) for r in rows],
                columns)

    def segment_started(self, segment: int, at: dt.datetime) -> None:
        """One run of the trial begins (the first, then each resume)."""
        self.writer.put_row(SegmentStarted(self.trial_id, segment, at))

    def segment_ended(self, segment: int, at: dt.datetime, status: str) -> None:
        self.writer.put_row(SegmentEnded(self.trial_id, segment, at, status))

    def replayed(self, segment: int, from_seq: int, calls: int, seconds: float) -> None:
        """How a resumed segment caught up with the log."""
        self.writer.put_row(SegmentReplayed(self.trial_id, segment, from_seq, calls, seconds))

    def warning(self, run_id: str, kind: str, message: str) -> None:
        """A warning for the run, kept once per model and kind (the first)."""
        if kind in self._warned:
            return
        self._warned.add(kind)
        self.writer.put_row(RunWarning(run_id, self.model, kind, redact(message), now()))

    def trial(self, record: TrialRecord) -> None:
        """The trial as it stands (its reason redacted: a provider's error can quote a
        key)."""
        reason = redact(record.reason)[:4000] if record.reason else None
        self.writer.put_row(replace(record, reason=reason))


def _cell(column: str, value: Any) -> Any:
    if column == "date" and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value
