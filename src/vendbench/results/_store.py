"""Opening a results file and reading it back: runs, trials, rebuilt requests."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

import duckdb

from ..environment import RecordTable
from ..errors import ResultsError
from . import _live
from ._rows import LoggedRequest, RunRecord, Statement
from ._live import LiveServer
from ._live_wire import LiveError
from ._open_errors import _held, _kind, open_error
from ._reads import COMPARISON, PLANNED, RunInfo, RunSummary, TrialInfo
from ._schema import DDL, SCHEMA_VERSION, UPGRADE, UPGRADE_FROM

log = logging.getLogger(__name__)

DEFAULT_DB = "vendbench.duckdb"
HOLD_WAIT_S = 5.0          # how long an open waits for a reader's lock to go
CLOSE_WAIT_S = 30.0        # how long a close waits for a reader's query to stop


def _writing(path: str, about: dict[str, Any]) -> str:
    run = about.get("run_id", "?")
    return (f"{path} is being written by run {run} (pid {about.get('pid', '?')}); one run "
            f"writes a file at a time. Watch it with `vendbench runs --db {path} --run "
            f"{run}`, wait for it to finish, or pass another --db")


def being_written(path: str) -> str | None:
    """Why a run cannot write ``path`` now, in one line: another run is writing it (None
    when none is). Cheap (a socket's answer), so a run asks before its checks print
    anything (design §35.6: a run refused a busy file after printing its forecast)."""
    if not os.path.exists(path):
        return None
    live = _live.connect(path, wait_s=0)
    if live is None:
        return None
    try:
        return _writing(path, live.about)
    finally:
        live.close()


@dataclass(frozen=True, slots=True)
class TrialHistory:
    """What the results file holds of a trial, in the order it happened."""

    trial_id: str
    messages: list[tuple[int, str, int, int]]     # msg_id, content_json, tokens, carried
    # seq, exchange_seq, day, call_id, name, args_json, result
    tool_calls: list[tuple[Any, ...]]
    days: dict[int, tuple[float, float]]          # day -> (cash, net assets) at its end
    exchanges: list[dict[str, Any]]               # every logged attempt
    in_flight: list[dict[str, Any]]               # reservations without an attempt row
    segments: int                                 # runs of the trial so far
    started_at: Any                               # when its first segment started


class Store:
    """A results database. The orchestrator is its only writer while a run is live;
    opened read-only while a run writes it, a Store reads through that run's process
    (``live`` then says who writes; see ``_live``)."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, read_only: bool = False) -> None:
        self.path = str(path)
        self.live: dict[str, Any] | None = None
        self._server: LiveServer | None = None
        if read_only and not Path(self.path).exists():
            raise ResultsError(f"no results database at {self.path}; run `vendbench run` "
                               "first, or pass --db")
        if Path(self.path).is_dir():
            raise ResultsError(f"{self.path} is a directory; --db takes a results file")
        if os.path.exists(self.path) and not os.path.isfile(self.path):
            # a named pipe would hang the open (deaf to Ctrl-C), a device read without end
            raise ResultsError(f"{self.path} is not a regular file ({_kind(self.path)}); --db "
                               "takes a results file")
        self.con = self._connect(read_only)
        try:
            self._prepare(read_only)
        except duckdb.Error as exc:
            self.con.close()
            raise ResultsError(open_error(self.path, exc)) from None
        except ResultsError:
            self.con.close()
            raise

    def _connect(self, read_only: bool) -> Any:
        """A connection to the file; while another process writes it, reads go through
        that process, and a second writer is refused with who holds it. A lock held by
        a reader (briefly, as ``vendbench runs`` does) is waited out for a few seconds."""
        deadline = time.monotonic() + HOLD_WAIT_S
        while True:
            try:
                return duckdb.connect(self.path, read_only=read_only)
            except duckdb.Error as exc:
                if not _held(exc):
                    raise ResultsError(open_error(self.path, exc)) from None
                live = _live.connect(self.path, wait_s=0 if read_only else 0.3)
                if live is not None and read_only:
                    self.live = live.about
                    return live
                if live is not None:
                    live.close()
                    raise ResultsError(_writing(self.path, live.about)) from None
                if time.monotonic() >= deadline:
                    raise ResultsError(open_error(self.path, exc)) from None
                time.sleep(0.1)

    def serve_readers(self, about: dict[str, Any]) -> None:
        """Answer other processes' reads of this file until it is closed (``about``:
        what they are told of the writer, e.g. the run id)."""
        try:
            self._server = LiveServer(self.con, self.path, about)
        except (OSError, LiveError) as exc:  # no socket here: the run goes on, unwatched
            log.warning("%s: other processes cannot read this file while the run writes it "
                        "(%s)", self.path, exc)

    def _whole(self) -> None:
        """Refuse a file shorter than its own index says (cut short by a copy that did
        not finish, a full disk): DuckDB opens it, and fails only when a read reaches the
        missing blocks, which for a run would be mid-way, after it had started. (Beside
        a write-ahead log, blocks may still be on their way into the file: not judged.)"""
        if os.path.exists(self.path + ".wal"):   # blocks not yet checkpointed into the file
            return
        row = self.con.execute("SELECT block_size, used_blocks FROM pragma_database_size() "
                               "LIMIT 1").fetchone()
        size = os.path.getsize(self.path)
        if row and row[0] and size < row[0] * row[1]:
            raise ResultsError(
                f"{self.path} is cut short: {size:,} bytes where its index needs at least "
                f"{row[0] * row[1]:,} (a copy that did not finish, or a full disk); restore "
                "it from a copy, or pass another --db. Nothing was written")

    def _prepare(self, read_only: bool) -> None:
        if self.live is None:
            self._whole()
        version = self._version()
        if self.live is not None:              # the writing process has prepared it
            if version != SCHEMA_VERSION:
                raise ResultsError(f"{self.path} is being written with results schema "
                                   f"{version}; this vendbench reads schema "
                                   f"{SCHEMA_VERSION}")
            return
        if version == 0:
            raise ResultsError(f"{self.path} is a DuckDB file but not a vendbench results "
                               "file; pass another --db")
        if version in UPGRADE_FROM:
            if read_only:                 # upgrade in place once, then read
                self.con.close()
                Store(self.path).close()
                self.con = duckdb.connect(self.path, read_only=True)
                return
            self.con.execute(DDL)
            self.con.execute(UPGRADE)
            log.info("%s: results schema %s upgraded to %s", self.path, version,
                     SCHEMA_VERSION)
        elif version is not None and version != SCHEMA_VERSION:
            raise ResultsError(f"{self.path} was written with results schema {version}; this "
                               f"vendbench reads and writes schema {SCHEMA_VERSION}. Use a new "
                               "--db file (or the vendbench version that wrote it)")
        if not read_only:
            self.con.execute(DDL)
            self.con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                             [str(SCHEMA_VERSION)])

    def _version(self) -> int | None:
        try:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                                   ).fetchone()
        except duckdb.CatalogException:
            tables = self.con.execute("SELECT count(*) FROM information_schema.tables"
                                      ).fetchone()[0]
            return None if tables == 0 else 0        # not a vendbench results file
        return int(row[0]) if row else 0

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        deadline = time.monotonic() + CLOSE_WAIT_S
        while True:
            try:
                self.con.close()
                return
            except duckdb.ResourceInUseException:
                # a reader's query DuckDB has not yet stopped holds the connection: every
                # row is committed by now, so the run never fails on it; the connection
                # goes when the query (or the process) ends
                if time.monotonic() >= deadline:
                    log.warning("%s: a reader's query is still running; the file is "
                                "complete, its connection closes when the query ends",
                                self.path)
                    return
                time.sleep(0.05)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------
    def _dicts(self, sql: str, params: list[Any] | dict[str, Any] | None = None
               ) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def insert_run(self, run: RunRecord) -> None:
        """Record a run as it starts."""
        self.con.execute(*run.statement())
        if not self.con.execute("SELECT 1 FROM runs WHERE run_id = ?",
                                [run.run_id]).fetchall():
            raise ResultsError(f"could not record run {run.run_id}")

    def has_run(self, run_id: str) -> bool:
        return self.con.execute("SELECT 1 FROM runs WHERE run_id = ?",
                                [run_id]).fetchone() is not None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All that is written inside, or nothing (rolled back on any exception)."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def write(self, row: Statement) -> None:
        """Write one typed row at once, outside the writer (a run's status on resume,
        ``serve``'s rows: one call at a time, nothing in flight to protect)."""
        self.con.execute(*row.statement())

    def initial_cash_by_run(self) -> dict[str, float]:
        """Each run's starting cash, from its trials."""
        return dict(self.con.execute(
            "SELECT run_id, any_value(initial_cash) FROM trials WHERE initial_cash IS NOT "
            "NULL GROUP BY run_id").fetchall())

    def ensure_records(self, tables: tuple[RecordTable, ...]) -> None:
        """Create a scenario's record tables, or add the columns a table shared with
        another scenario lacks (a column's first type stands)."""
        for table in tables:
            self.con.execute(f"CREATE TABLE IF NOT EXISTS {table.name}(trial_id VARCHAR)")
            for column, kind in table.columns:
                self.con.execute(f"ALTER TABLE {table.name} ADD COLUMN IF NOT EXISTS "
                                 f"{column} {kind}")

    def trial_records(self, trial_id: str, tables: tuple[RecordTable, ...]
                      ) -> dict[str, list[dict[str, Any]]]:
        """A trial's rows of its scenario's record ``tables`` (by day) and its tool calls
        (by number), as plain rows, in order."""
        out = {}
        reads = [(t.name, t.names[1:], "day") for t in tables]
        for table, cols, order in [*reads, ("tool_calls", ("day", "name", "ok",
                                                           "result_json"), "seq")]:
            cur = self.con.execute(f"SELECT {', '.join(cols)} FROM {table} WHERE trial_id = ? "
                                   f"ORDER BY {order}", [trial_id])
            out[table] = [dict(zip(cols, r)) for r in cur.fetchall()]
        return out

    def trial_calls(self, trial_id: str) -> list[dict[str, Any]]:
        """A trial's tool calls in full, by number: what its diagnostics replay."""
        return self._dicts("SELECT seq, exchange_seq, day, name, args_json, result_json "
                           "FROM tool_calls WHERE trial_id = ? ORDER BY seq", [trial_id])

    def runs(self) -> list[RunSummary]:
        """Every run with its trials counted: ``trials`` all it plans (models or seats ×
        worlds × seeds × repeats, from its config; those started when it plans none, as a
        served run), ``started`` those begun. A trial still marked running (its run live,
        or killed) costs what its exchanges were charged, as ``trials`` counts it."""
        return cast("list[RunSummary]", self._dicts(f"""
            WITH spent AS (SELECT trial_id, sum(cost_usd) AS cost FROM exchanges
                           GROUP BY trial_id)
            SELECT r.run_id, r.name, r.created_at, r.scenario, r.days, r.status,
                   json_extract_string(r.config_json, '$.harness') AS harness,
                   json_array_length(json_extract(r.config_json, '$.seats'))::INTEGER
                       AS arena,
                   {COMPARISON} AS comparison,
                   greatest(count(t.trial_id), coalesce(any_value({PLANNED}), 0))
                       ::INTEGER AS trials,
                   count(t.trial_id) AS started,
                   count(t.trial_id) FILTER (WHERE t.status = 'completed') AS completed,
                   sum(CASE WHEN t.status = 'running' AND t.cost_usd IS NOT NULL
                            THEN coalesce(s.cost, 0) ELSE t.cost_usd END) AS cost_usd
            FROM runs r LEFT JOIN trials t USING (run_id) LEFT JOIN spent s USING (trial_id)
            GROUP BY ALL ORDER BY r.created_at"""))

    def match_seats(self, run_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The arena matches of ``run_ids``, seat by seat, each match's latest attempt,
        with its trials' outcomes (design §23.5)."""
        if not run_ids:
            return []
        return self._dicts("""
            WITH latest AS (SELECT match_id, max(attempt) AS attempt FROM match_seats
                            GROUP BY match_id)
            SELECT m.match_id, m.attempt, m.seat, m.trial_id, m.run_id, m.model,
                   m.world_seed, m.seed, m."repeat", m.operator, t.status, t.reason,
                   t.score, t.cost_usd, t.days_completed, t.net_transfers
            FROM match_seats m JOIN latest USING (match_id, attempt)
                 JOIN trials t USING (trial_id)
            WHERE list_contains($runs, m.run_id)
            ORDER BY m.run_id, m.world_seed, m.seed, m."repeat", m.seat""",
                            {"runs": list(run_ids)})

    def run(self, run_id: str) -> RunInfo:
        if run_id == "latest":
            rows = self._dicts("SELECT * FROM runs ORDER BY created_at DESC LIMIT 1")
        else:
            rows = self._dicts("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if not rows:
            known = [r["run_id"] for r in self._dicts("SELECT run_id FROM runs")]
            raise ResultsError(f"no run {run_id!r} in {self.path}; runs here: "
                               f"{', '.join(known) or 'none'}")
        return rows[0]

    def trials(self, run_id: str) -> list[TrialInfo]:
        """A run's trials. A trial still running has its row written when it started;
        its days, tool calls, exchanges and cost so far are counted from what it has
        committed since (what a live view shows)."""
        return self._dicts("""
            WITH live AS (SELECT trial_id FROM trials WHERE run_id = $run
                          AND status = 'running'),
                 e AS (SELECT trial_id, count(DISTINCT seq) AS n, sum(cost_usd) AS cost
                       FROM exchanges SEMI JOIN live USING (trial_id) GROUP BY trial_id),
                 c AS (SELECT trial_id, count(*) AS n FROM tool_calls SEMI JOIN live
                       USING (trial_id) GROUP BY trial_id),
                 d AS (SELECT trial_id, count(*) AS n FROM days SEMI JOIN live
                       USING (trial_id) GROUP BY trial_id)
            SELECT t.* REPLACE (
                CASE WHEN l.trial_id IS NULL THEN t.days_completed ELSE coalesce(d.n, 0) END
                    AS days_completed,
                CASE WHEN l.trial_id IS NULL THEN t.tool_calls ELSE coalesce(c.n, 0) END
                    AS tool_calls,
                CASE WHEN l.trial_id IS NULL THEN t.exchanges ELSE coalesce(e.n, 0) END
                    AS exchanges,
                CASE WHEN l.trial_id IS NULL OR t.cost_usd IS NULL THEN t.cost_usd
                    ELSE coalesce(e.cost, 0) END AS cost_usd)
            FROM trials t LEFT JOIN live l USING (trial_id) LEFT JOIN e USING (trial_id)
                 LEFT JOIN c USING (trial_id) LEFT JOIN d USING (trial_id)
            WHERE t.run_id = $run
            ORDER BY model, seed, "repeat", attempt""", {"run": run_id})

    def run_spend(self, run_id: str) -> Decimal:
        """What a run has spent, as its provider may have billed it: every attempt's
        charged cost (the reservation when the outcome was unknown) and the full
        reservation of every request in flight when the process died."""
        row = self.con.execute("""
            SELECT coalesce(sum(e.cost_usd), 0) FROM exchanges e JOIN trials t USING (trial_id)
            WHERE t.run_id = ?""", [run_id]).fetchone()
        orphans = sum((r["reserved_usd"] for t in self.trials(run_id)
                       for r in self.in_flight(t["trial_id"])), Decimal(0))
        return Decimal(row[0]) + orphans

    def close_interrupted(self, run_id: str) -> int:
        """Settle what a process that died left open (before a resume): each request in
        flight becomes an attempt of unknown outcome charged its reservation (it may have
        been billed), each trial row takes the cost of its attempts, and trials left
        ``running`` become ``interrupted``. Returns the requests settled."""
        settled = 0
        for trial in self.trials(run_id):
            for r in self.in_flight(trial["trial_id"]):
                self.con.execute(
                    "INSERT INTO exchanges (trial_id, seq, day, attempt, model, request_json, "
                    "cost_usd, reserved_usd, status, error, sent_at) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, 'unknown', ?, ?)",
                    [trial["trial_id"], r["seq"], r["day"], r["attempt"], trial["model"],
                     r["request_json"], r["reserved_usd"], r["reserved_usd"],
                     "in flight when the run stopped; charged its reservation (it may have "
                     "been billed)", r["reserved_at"]])
                settled += 1
        self.con.execute("""
            UPDATE trials SET cost_usd = CASE WHEN cost_usd IS NULL THEN NULL ELSE coalesce(
                (SELECT sum(e.cost_usd) FROM exchanges e WHERE e.trial_id = trials.trial_id),
                0) END,
              status = CASE WHEN status = 'running' THEN 'interrupted' ELSE status END,
              reason = CASE WHEN status = 'running' THEN 'the process running it stopped '
                  '(killed, or the machine went down)' ELSE reason END
            WHERE run_id = ?""", [run_id])
        self.con.execute("UPDATE segments SET status = 'interrupted' WHERE status = 'running' "
                         "AND trial_id IN (SELECT trial_id FROM trials WHERE run_id = ?)",
                         [run_id])
        return settled

    def trial_spent(self, trial_id: str) -> Decimal:
        """Every attempt's charge so far (after ``close_interrupted``)."""
        row = self.con.execute("SELECT coalesce(sum(cost_usd), 0) FROM exchanges WHERE "
                               "trial_id = ?", [trial_id]).fetchone()
        return Decimal(row[0])

    def segments(self, trial_id: str) -> int:
        return int(self.con.execute("SELECT count(*) FROM segments WHERE trial_id = ?",
                                    [trial_id]).fetchone()[0])

    def forget_progress(self, trial_id: str, tables: tuple[RecordTable, ...]) -> None:
        """Drop a trial's record rows and tool calls, before it runs again from day 1
        under the same id (an in-process policy: it costs nothing to run again)."""
        for table in (*(t.name for t in tables), "tool_calls"):
            self.con.execute(f"DELETE FROM {table} WHERE trial_id = ?", [trial_id])

    def in_flight(self, trial_id: str) -> list[dict[str, Any]]:
        """Reservations without an exchange row: requests that were in flight (or whose
        reply was not yet committed) when the process died."""
        return self._dicts("""
            SELECT r.seq, r.attempt, r.day, r.reserved_usd, r.request_json, r.reserved_at
            FROM reservations r ANTI JOIN exchanges e USING (trial_id, seq, attempt)
            WHERE r.trial_id = ? ORDER BY r.seq, r.attempt""", [trial_id])

    def history(self, trial_id: str) -> TrialHistory:
        """Everything committed of a trial that a resume needs (see ``TrialHistory``)."""
        messages = self.con.execute(
            "SELECT msg_id, content_json, tokens, coalesce(carried_tokens, 0) FROM messages "
            "WHERE trial_id = ? ORDER BY msg_id", [trial_id]).fetchall()
        calls = self.con.execute(
            "SELECT seq, exchange_seq, day, call_id, name, args_json, result_json FROM "
            "tool_calls WHERE trial_id = ? ORDER BY seq", [trial_id]).fetchall()
        days = {d: (cash, na) for d, cash, na in self.con.execute(
            "SELECT day, cash, net_assets FROM days WHERE trial_id = ?", [trial_id]).fetchall()}
        exchanges = self._dicts("""
            SELECT seq, attempt, status, request_json, input_tokens, output_tokens,
                   cache_read_tokens, cache_write_tokens, cost_usd, reserved_usd, error,
                   coalesce(purpose, 'act') AS purpose, reply_json
            FROM exchanges WHERE trial_id = ? ORDER BY seq, attempt""", [trial_id])
        segments, started = self.con.execute(
            "SELECT count(*), min(started_at) FROM segments WHERE trial_id = ?",
            [trial_id]).fetchone()
        return TrialHistory(trial_id, messages, calls, days, exchanges,
                            self.in_flight(trial_id), segments, started)

    def ceilings(self, scenario: str, days: int, salt_sha256: str | None,
                 policy: str | None = None, *, floors: bool = False
                 ) -> dict[tuple[int, int], float]:
        """The oracle scores (``floors``: doing nothing's) kept for ``scenario`` at
        ``days`` in the worlds of that salt (None: public), by (world seed, seed);
        ``policy``: only those its revision kept (``Scenario.ceiling_key``)."""
        rows = self.con.execute(
            f"SELECT world_seed, seed, score FROM {'floors' if floors else 'ceilings'} "
            "WHERE scenario = ? AND days = ? AND salt_sha256 = ? AND (? IS NULL OR "
            "policy = ?)", [scenario, days, salt_sha256 or "", policy, policy]).fetchall()
        return {(w, s): float(v) for w, s, v in rows}

    def warnings(self, run_id: str) -> list[dict[str, Any]]:
        """What a run warned about (once per model and kind)."""
        return self._dicts("SELECT model, kind, message, warned_at FROM run_warnings "
                           "WHERE run_id = ? ORDER BY warned_at", [run_id])

    def stored_request(self, trial_id: str, seq: int, attempt: int = 1) -> dict[str, Any]:
        """An exchange's request as logged, provider-neutral: its parameters, its
        messages (each stored once per trial) and the run's tool schemas."""
        row = self.con.execute(
            "SELECT e.request_json, r.tools_json FROM exchanges e JOIN trials t USING "
            "(trial_id) JOIN runs r ON r.run_id = t.run_id WHERE e.trial_id = ? AND e.seq = ? "
            "AND e.attempt = ?", [trial_id, seq, attempt]).fetchone()
        if row is None:
            raise ResultsError(f"no exchange {seq} (attempt {attempt}) in trial {trial_id}")
        logged = LoggedRequest.parse(row[0])
        ids = list(logged.message_ids)
        found = dict(self.con.execute(
            "SELECT msg_id, content_json FROM messages WHERE trial_id = ? AND list_contains(?, "
            "msg_id)", [trial_id, ids]).fetchall())
        return {**logged.parameters(), "messages": [json.loads(found[i]) for i in ids],
                "tools": json.loads(row[1]) if logged.tools == "run" else logged.tools,
                "counted_tokens": logged.counted_tokens}
