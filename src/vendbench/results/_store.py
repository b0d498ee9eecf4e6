"""Opening a results file and reading it back: runs, trials, rebuilt requests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import duckdb

from ..errors import ResultsError
from ._schema import DDL, SCHEMA_VERSION

DEFAULT_DB = "vendbench.duckdb"


def open_error(path: str, exc: BaseException) -> str:
    """One line on why a results file cannot be used, with the hint that fits."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if re.search(r"\b(could not set|conflicting) lock\b", first, re.I):
        return (f"cannot open {path}: another process holds it (a run still writing to "
                f"it?): {first}")
    if "not a valid DuckDB database" in first:
        return f"{path} is not a results database (not a DuckDB file); pass another --db"
    return (f"{path} cannot be read, it looks damaged ({first}); restore it from a copy, "
            "or pass another --db")


def cached_share(input_tokens: int | None, cache_read_tokens: int | None) -> float | None:
    """The share of input tokens read from the provider's prompt cache (None: no input)."""
    if not input_tokens:
        return None
    return (cache_read_tokens or 0) / input_tokens


class Store:
    """A results database. The orchestrator is its only writer while a run is live."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, read_only: bool = False) -> None:
        self.path = str(path)
        if read_only and not Path(self.path).exists():
            raise ResultsError(f"no results database at {self.path}; run `vendbench run` "
                               "first, or pass --db")
        if Path(self.path).is_dir():
            raise ResultsError(f"{self.path} is a directory; --db takes a results file")
        try:
            self.con = duckdb.connect(self.path, read_only=read_only)
        except duckdb.Error as exc:
            raise ResultsError(open_error(self.path, exc)) from None
        try:
            self._prepare(read_only)
        except duckdb.Error as exc:
            self.con.close()
            raise ResultsError(open_error(self.path, exc)) from None
        except ResultsError:
            self.con.close()
            raise

    def _prepare(self, read_only: bool) -> None:
        version = self._version()
        if version == 0:
            raise ResultsError(f"{self.path} is a DuckDB file but not a vendbench results "
                               "file; pass another --db")
        if version is not None and version != SCHEMA_VERSION:
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
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------
    def _dicts(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def runs(self) -> list[dict[str, Any]]:
        return self._dicts("""
            SELECT r.run_id, r.name, r.created_at, r.scenario, r.days, r.status,
                   count(t.trial_id) AS trials,
                   count(t.trial_id) FILTER (WHERE t.status = 'completed') AS completed,
                   coalesce(sum(t.cost_usd), 0) AS cost_usd
            FROM runs r LEFT JOIN trials t USING (run_id)
            GROUP BY ALL ORDER BY r.created_at""")

    def run(self, run_id: str) -> dict[str, Any]:
        if run_id == "latest":
            rows = self._dicts("SELECT * FROM runs ORDER BY created_at DESC LIMIT 1")
        else:
            rows = self._dicts("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if not rows:
            known = [r["run_id"] for r in self._dicts("SELECT run_id FROM runs")]
            raise ResultsError(f"no run {run_id!r} in {self.path}; runs here: "
                               f"{', '.join(known) or 'none'}")
        return rows[0]

    def trials(self, run_id: str) -> list[dict[str, Any]]:
        return self._dicts("""SELECT * FROM trials WHERE run_id = ?
                              ORDER BY model, seed, "repeat", attempt""", [run_id])

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
        request = json.loads(row[0])
        ids = request.pop("message_ids")
        found = dict(self.con.execute(
            "SELECT msg_id, content_json FROM messages WHERE trial_id = ? AND list_contains(?, "
            "msg_id)", [trial_id, ids]).fetchall())
        request["messages"] = [json.loads(found[i]) for i in ids]
        if request.get("tools") == "run":
            request["tools"] = json.loads(row[1])
        return request

    def rebuild_request(self, trial_id: str, seq: int, attempt: int = 1) -> dict[str, Any]:
        """The JSON body an exchange sent, as its provider received it: model, messages
        (with any cache markers), tool schemas and parameters. Posting it again to the
        provider's endpoint reproduces the request. litellm renders it from the stored
        request with the same transformation that sent it (nothing is sent here)."""
        from ..providers import render_body

        return render_body(self.stored_request(trial_id, seq, attempt))
