"""What screening reads of a results file and writes to it (design §32.2): a trial's
messages with the day and exchange each belongs to, its tool calls and days; findings,
the judge's answers cached by chunk, and each screen as it goes.

A message is stored once per trial (``messages``); it belongs to the exchange whose
request first carried it, or, for a reply and its tool results, to the exchange that
made the reply (the one before). A message no request carried (the last reply) belongs
to the trial's last exchange.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from decimal import Decimal
from typing import Any

from ._store import Store

# what a finding's severity is, in order; a flag is one of ``FLAG_SEVERITIES``
SEVERITIES = ("info", "warning", "high")
FLAG_SEVERITIES = ("warning", "high")


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One finding: where (trial, day, exchange, message or tool call), what (category,
    severity, the quote, why), and who found it (scanner, version, judge model)."""

    trial_id: str
    scanner: str
    scanner_version: str
    judge: str | None
    day: int | None
    exchange: int | None
    msg_id: int | None
    call: int | None
    category: str
    severity: str
    quote: str
    explanation: str
    screen_id: str
    found_at: dt.datetime


class Screening:
    """The screening reads and writes of ``store``."""

    def __init__(self, store: Store) -> None:
        self.store, self.con = store, store.con
        self._dicts = store._dicts

    # -- what is screened ------------------------------------------------------------------
    def trials(self, run_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The trials of ``run_ids`` (all: None) with their run's scenario and horizon,
        in the order they were run."""
        where, params = ("WHERE t.run_id IN (SELECT unnest($r))", {"r": list(run_ids)}) \
            if run_ids is not None else ("", {})
        return self._dicts(f"""
            SELECT t.trial_id, t.run_id, t.model, t.seed, t.world_seed, t.status, t.reason,
                   t.initial_cash, t.days_completed, r.scenario, r.days AS horizon,
                   json_extract_string(r.config_json, '$.seats') IS NOT NULL AS arena,
                   r.world_salt_sha256 IS NOT NULL AS private
            FROM trials t JOIN runs r USING (run_id) {where}
            ORDER BY r.created_at, t.started_at, t.trial_id""", params)

    def messages(self, trial_id: str) -> list[dict[str, Any]]:
        """A trial's messages in order, each with its body, tokens, day and exchange."""
        first = {m: s for m, s in self.con.execute("""
            WITH sent AS (SELECT seq, unnest(CAST(json_extract(request_json, '$.message_ids')
                                               AS INTEGER[])) AS msg_id
                          FROM exchanges WHERE trial_id = ?)
            SELECT msg_id, min(seq) FROM sent GROUP BY msg_id""", [trial_id]).fetchall()}
        days = dict(self.con.execute("SELECT seq, max(day) FROM exchanges WHERE trial_id = ? "
                                     "GROUP BY seq", [trial_id]).fetchall())
        last = max(days, default=None)
        out = []
        for msg_id, role, content, tokens in self.con.execute(
                "SELECT DISTINCT ON (msg_id) msg_id, role, content_json, tokens FROM "
                "messages WHERE trial_id = ? ORDER BY msg_id", [trial_id]).fetchall():
            seq = first.get(msg_id)
            if seq is None:
                seq = last
            elif role in ("assistant", "tool") and seq - 1 in days:
                seq -= 1                        # the reply (and its results) of the one before
            out.append({"msg_id": msg_id, "role": role, "body": json.loads(content),
                        "tokens": tokens or 0, "exchange": seq,
                        "day": days.get(seq) if seq is not None else None})
        return out

    def calls(self, trial_id: str) -> list[dict[str, Any]]:
        """A trial's tool calls in order, with their results parsed."""
        rows = self._dicts("SELECT seq, exchange_seq, day, name, args_json, result_json, ok "
                           "FROM tool_calls WHERE trial_id = ? ORDER BY seq", [trial_id])
        for r in rows:
            try:
                r["result"] = json.loads(r["result_json"] or "{}")
            except ValueError:
                r["result"] = {}
        return rows

    def days(self, trial_id: str) -> dict[int, tuple[float, float]]:
        """Day -> (cash, net assets) at its end."""
        return {d: (c, n) for d, c, n in self.con.execute(
            "SELECT day, cash, net_assets FROM days WHERE trial_id = ? ORDER BY day",
            [trial_id]).fetchall()}

    def seats(self, run_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The arena matches of ``run_ids``, seat by seat (latest attempts)."""
        return self.store.match_seats(run_ids)

    # -- findings --------------------------------------------------------------------------
    def replace(self, trial_id: str, scanner: str, version: str, judge: str | None,
                screen_id: str, rows: Sequence[FindingRow]) -> None:
        """``scanner``'s findings of ``trial_id``, in place of any it made before (of any
        version), and that it screened the trial, in one transaction."""
        with self.store.transaction():
            self.con.execute("DELETE FROM findings WHERE trial_id = ? AND scanner = ?",
                             [trial_id, scanner])
            self.con.execute("INSERT OR REPLACE INTO screened VALUES (?, ?, ?, ?, ?, "
                             "now()::TIMESTAMP)", [trial_id, scanner, version, judge,
                                                   screen_id])
            if rows:
                self.con.executemany("INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                                     "?, ?, ?, ?, ?, ?)", [astuple(r) for r in rows])

    def findings(self, trial_ids: Sequence[str] | None = None,
                 severities: Sequence[str] = SEVERITIES) -> list[dict[str, Any]]:
        """Findings of ``trial_ids`` (all: None) of the given severities, in order of
        trial, day and exchange, with each trial's model, seed and run."""
        where = "AND f.trial_id IN (SELECT unnest($t))" if trial_ids is not None else ""
        return self._dicts(f"""
            SELECT f.*, t.model, t.seed, t.world_seed, t.run_id
            FROM findings f JOIN trials t USING (trial_id)
            WHERE f.severity IN (SELECT unnest($s)) {where}
            ORDER BY t.run_id, t.model, t.seed, f.trial_id, f.day NULLS FIRST, f.exchange,
                     f.call, f.scanner""",
            {"s": list(severities), **({"t": list(trial_ids)} if trial_ids is not None
                                        else {})})

    def flags(self) -> dict[str, int]:
        """Trial id -> its findings that are flags (severity warning or high)."""
        return dict(self.con.execute(
            "SELECT trial_id, count(*) FROM findings WHERE severity IN (SELECT unnest(?)) "
            "GROUP BY trial_id", [list(FLAG_SEVERITIES)]).fetchall())

    def screened(self) -> dict[str, list[str]]:
        """Trial id -> the scanners that have screened it (with findings or without)."""
        out: dict[str, list[str]] = {}
        for trial, scanner in self.con.execute(
                "SELECT trial_id, scanner FROM screened ORDER BY trial_id, scanner").fetchall():
            out.setdefault(trial, []).append(scanner)
        return out

    def versions(self, trial_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Which scanners, at which version and with which judge, screened any of
        ``trial_ids``, and how many of them (where a flag came from)."""
        return self._dicts("""
            SELECT scanner, scanner_version, judge, count(*) AS trials FROM screened
            WHERE trial_id IN (SELECT unnest($t)) GROUP BY ALL
            ORDER BY scanner, scanner_version, judge""", {"t": list(trial_ids)})

    # -- the judge's answers, by chunk -----------------------------------------------------
    def cached(self, scanner: str, version: str, judge: str, sha256: str
               ) -> dict[str, Any] | None:
        """The judge's answer to a chunk, if it has read one with this content."""
        rows = self._dicts("SELECT findings_json, dropped, cost_usd FROM screen_chunks WHERE "
                           "scanner = ? AND scanner_version = ? AND judge = ? AND "
                           "chunk_sha256 = ?", [scanner, version, judge, sha256])
        return rows[0] if rows else None

    def keep_chunk(self, scanner: str, version: str, judge: str, sha256: str,
                   trial_id: str, days: tuple[int, int], findings: list[dict[str, Any]],
                   dropped: int, cost: Decimal, screen_id: str) -> None:
        """The judge's answer to a chunk, committed at once (a killed screen keeps it)."""
        self.con.execute("INSERT OR REPLACE INTO screen_chunks VALUES (?, ?, ?, ?, ?, ?, ?, "
                         "?, ?, ?, ?, now()::TIMESTAMP)",
                         [scanner, version, judge, sha256, trial_id, days[0], days[1],
                          json.dumps(findings, ensure_ascii=False), dropped, cost, screen_id])

    # -- screens ---------------------------------------------------------------------------
    def begin(self, screen_id: str, judge: str | None, budget: Decimal | None,
              config: dict[str, Any]) -> None:
        self.con.execute("INSERT INTO screens VALUES (?, now()::TIMESTAMP, NULL, ?, ?, 0, "
                         "'running', ?)", [screen_id, judge, budget, json.dumps(config)])

    def end(self, screen_id: str, status: str) -> None:
        self.con.execute("UPDATE screens SET finished_at = now()::TIMESTAMP, status = ?, "
                         "spent_usd = ? WHERE screen_id = ?",
                         [status, self.spent(screen_id), screen_id])

    def spent(self, screen_id: str) -> Decimal:
        """What a screen's judge was charged: its exchanges, and any request in flight
        when it was killed at its full reservation."""
        log = f"screen:{screen_id}"
        return self.store.trial_spent(log) + sum(
            (Decimal(r["reserved_usd"]) for r in self.store.in_flight(log)), Decimal(0))

    def screens(self) -> list[dict[str, Any]]:
        return self._dicts("SELECT * FROM screens ORDER BY started_at")
