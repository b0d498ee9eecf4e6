"""Reading one trial as a transcript: its days, a day's exchanges and tool calls, the
window a request carried, a search, and two trials side by side (the viewer's reads).

Every read is bounded by a day, an exchange or a result limit, so a page of the
biggest trial reads a small part of it.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any

from ._rows import LoggedRequest
from ._store import Store

SEARCH_LIMIT = 200           # hits a search returns at most
HEAD = 2                     # a conversation's first messages: the system prompt and the
                             # note that stands for evicted ones (the rolling context's)
PREVIEW_CHARS = 240          # of a message, in a window's list
MAX_ID_BYTES = 160           # an id in a page's path (a file name has at most 255 bytes)
ID_PREFIX = 100              # what a shortened id keeps of the id, before its hash


def path_id(value: str) -> str:
    """A run or trial id as it appears in a page's path: whole when short, else its first
    ``ID_PREFIX`` characters, ``~`` and a hash (a trial id named after a long MCP client
    name can pass the 255 bytes a file name may have)."""
    if len(value.encode()) <= MAX_ID_BYTES:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:16]
    return f"{value[:ID_PREFIX]}~{digest}"


class Transcripts:
    """The transcript reads of ``store`` (read-only)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._dicts = store._dicts

    def trial(self, trial_id: str) -> dict[str, Any] | None:
        """A trial's row with its run's scenario and horizon (None: no such trial)."""
        rows = self._dicts("""
            SELECT t.*, r.scenario, r.days AS horizon, r.name AS run_name
            FROM trials t JOIN runs r USING (run_id) WHERE t.trial_id = ?""", [trial_id])
        return rows[0] if rows else None

    def match(self, match_id: str) -> list[dict[str, Any]]:
        """An arena match's latest attempt, seat by seat, with each operator's trial."""
        return self._dicts("""
            SELECT m.match_id, m.attempt, m.seat, m.operator, m.world_seed, m.seed,
                   m."repeat", t.*, r.scenario, r.days AS horizon
            FROM match_seats m JOIN trials t USING (trial_id) JOIN runs r ON r.run_id = m.run_id
            WHERE m.match_id = $m AND m.attempt = (SELECT max(attempt) FROM match_seats
                                                  WHERE match_id = $m)
            ORDER BY m.seat""", {"m": match_id})

    def matches(self, run_id: str) -> list[dict[str, Any]]:
        """An arena run's matches (their latest attempts), one row each."""
        return self._dicts("""
            SELECT match_id, max(attempt) AS attempt, any_value(world_seed) AS world_seed,
                   any_value(seed) AS seed, any_value("repeat") AS "repeat"
            FROM match_seats WHERE run_id = ? GROUP BY match_id
            ORDER BY 3, 4, 5""", [run_id])

    def calls_named(self, trial_ids: list[str], names: tuple[str, ...]
                    ) -> list[dict[str, Any]]:
        """The calls of ``trial_ids`` to the tools ``names``, day by day."""
        return self._dicts("""
            SELECT trial_id, seq, day, name, args_json, result_json, ok FROM tool_calls
            WHERE list_contains($t, trial_id) AND list_contains($n, name)
            ORDER BY day, trial_id, seq""", {"t": trial_ids, "n": list(names)})

    def ids_starting(self, prefix: str, limit: int = 100) -> list[str]:
        """Run and trial ids that start with ``prefix`` (a shortened id's first part)."""
        rows = self.store.con.execute("""
            SELECT run_id FROM runs WHERE starts_with(run_id, $p)
            UNION SELECT trial_id FROM trials WHERE starts_with(trial_id, $p)
            LIMIT $n""", {"p": prefix, "n": limit}).fetchall()
        return [r[0] for r in rows]

    def days(self, trial_id: str, only: int | None = None) -> list[dict[str, Any]]:
        """The trial's day rows (``only``: that day's), with each day's exchanges, cost,
        tokens and tool calls (rejected ones apart)."""
        where = "trial_id = $t AND ($d IS NULL OR day = $d)"
        given = {"t": trial_id, "d": only}
        days = self._dicts(f"SELECT * FROM days WHERE {where} ORDER BY day", given)
        spend = {r["day"]: r for r in self._dicts(f"""
            SELECT day, count(DISTINCT seq) AS exchanges, sum(cost_usd) AS cost_usd,
                   sum(input_tokens) AS input_tokens, sum(cache_read_tokens) AS cached
            FROM exchanges WHERE {where} GROUP BY day""", given)}
        calls = {r["day"]: r for r in self._dicts(f"""
            SELECT day, count(*) AS calls, count(*) FILTER (WHERE NOT ok) AS rejected
            FROM tool_calls WHERE {where} GROUP BY day""", given)}
        for d in days:
            d.update({k: v for k, v in spend.get(d["day"], {}).items() if k != "day"})
            d.update({k: v for k, v in calls.get(d["day"], {}).items() if k != "day"})
        return days

    def series(self, trial_ids: list[str], column: str) -> dict[str, list[float]]:
        """Each trial's ``column`` of ``days``, day by day (for sparklines)."""
        if column not in {c[0] for c in self.store.con.execute("DESCRIBE days").fetchall()}:
            raise ValueError(f"days has no column {column!r}")
        out: dict[str, list[float]] = defaultdict(list)
        for trial_id, value in self.store.con.execute(
                f"SELECT trial_id, {column} FROM days WHERE list_contains(?, trial_id) "
                "ORDER BY trial_id, day", [trial_ids]).fetchall():
            out[trial_id].append(float(value) if value is not None else 0.0)
        return dict(out)

    def day(self, trial_id: str, day: int) -> dict[str, Any]:
        """What happened on ``day``: its exchanges (each attempt: status, tokens, cost,
        latency, the reply), its tool calls with their results, and the daily report
        the model read (the day's first request's newest user message)."""
        exchanges = self._dicts("""
            SELECT seq, attempt, status, error, reply_json, input_tokens, output_tokens,
                   cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
                   reserved_usd, latency_ms, sent_at, coalesce(purpose, 'act') AS purpose,
                   json_array_length(json_extract(request_json, '$.message_ids')) AS carried
            FROM exchanges WHERE trial_id = ? AND day = ? ORDER BY seq, attempt""",
            [trial_id, day])
        for e in exchanges:
            reply = json.loads(e.pop("reply_json")) if e.get("reply_json") else {}
            e["text"] = reply.get("text") or ""
            e["reasoning"] = reply.get("reasoning") or ""
        calls = self._dicts("""
            SELECT seq, exchange_seq, call_id, name, args_json, result_json, ok
            FROM tool_calls WHERE trial_id = ? AND day = ? ORDER BY seq""", [trial_id, day])
        return {"exchanges": exchanges, "calls": calls,
                "report": self._report(trial_id, day)}

    def _report(self, trial_id: str, day: int) -> str | None:
        row = self.store.con.execute("""
            SELECT request_json FROM exchanges WHERE trial_id = ? AND day = ?
            ORDER BY seq, attempt LIMIT 1""", [trial_id, day]).fetchone()
        if row is None:
            return None
        ids = list(LoggedRequest.parse(row[0]).message_ids)
        found = self.store.con.execute("""
            SELECT content_json FROM messages WHERE trial_id = ? AND role = 'user'
            AND list_contains(?, msg_id) ORDER BY msg_id DESC LIMIT 1""",
            [trial_id, ids]).fetchone()
        return json.loads(found[0]).get("content") if found else None

    def notes(self, trial_id: str, day: int, tool: str | None) -> str | None:
        """The notes as they stood at the end of ``day``: the last accepted call of the
        scenario's note-writing ``tool`` up to then (None: none written)."""
        if tool is None:
            return None
        row = self.store.con.execute("""
            SELECT args_json FROM tool_calls WHERE trial_id = ? AND name = ? AND ok
            AND day <= ? ORDER BY seq DESC LIMIT 1""", [trial_id, tool, day]).fetchone()
        if row is None:
            return None
        try:
            args = json.loads(row[0])
        except ValueError:
            return str(row[0])
        if not isinstance(args, dict):
            return str(args)
        text = args.get("text")
        return None if text is None else str(text)

    def window(self, trial_id: str, seq: int, attempt: int) -> dict[str, Any] | None:
        """The messages request ``seq`` (attempt ``attempt``) carried, in order, each
        with its role, tokens and the start of its text; the ones stored before its
        newest that it left out (evicted); its parameters."""
        row = self.store.con.execute("""
            SELECT request_json, day, status FROM exchanges WHERE trial_id = ? AND seq = ?
            AND attempt = ?""", [trial_id, seq, attempt]).fetchone()
        if row is None:
            return None
        logged = LoggedRequest.parse(row[0])
        ids = list(logged.message_ids)
        request = {**logged.parameters(), "tools": logged.tools,
                   "counted_tokens": logged.counted_tokens}
        top = max(ids, default=0)
        rows = self.store.con.execute("""
            SELECT msg_id, role, tokens, content_json FROM messages WHERE trial_id = ?
            AND msg_id <= ? ORDER BY msg_id""", [trial_id, top]).fetchall()
        carried, evicted = [], []
        chosen = set(ids)
        oldest = min((i for i in ids if i >= HEAD), default=top + 1)
        for msg_id, role, tokens, content in rows:
            entry = {"msg_id": msg_id, "role": role, "tokens": tokens,
                     "preview": _preview(json.loads(content))}
            if msg_id in chosen:
                carried.append(entry)
            elif HEAD <= msg_id < oldest:
                evicted.append(entry)
        order = {m: i for i, m in enumerate(ids)}
        carried.sort(key=lambda m: order[m["msg_id"]])
        return {"day": row[1], "status": row[2], "request": request, "carried": carried,
                "evicted": evicted, "tokens": sum(m["tokens"] or 0 for m in carried)}

    def requests(self, trial_id: str) -> list[tuple[int, int]]:
        """Every request of the trial: (number, attempt), in order."""
        return [tuple(r) for r in self.store.con.execute(
            "SELECT seq, attempt FROM exchanges WHERE trial_id = ? ORDER BY seq, attempt",
            [trial_id]).fetchall()]

    def message(self, trial_id: str, msg_id: int) -> dict[str, Any] | None:
        row = self.store.con.execute(
            "SELECT role, tokens, content_json FROM messages WHERE trial_id = ? AND "
            "msg_id = ?", [trial_id, msg_id]).fetchone()
        return None if row is None else {"msg_id": msg_id, "role": row[0], "tokens": row[1],
                                         "body": json.loads(row[2])}

    def search(self, trial_id: str, text: str, limit: int = SEARCH_LIMIT
               ) -> list[dict[str, Any]]:
        """Where ``text`` occurs (case-insensitive): tool calls (name, arguments,
        result) and replies, by day, at most ``limit``."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        hits = self._dicts("""
            SELECT day, seq, 'call' AS kind, name AS what, args_json || ' ' || result_json
                   AS body
            FROM tool_calls WHERE trial_id = $t AND (name ILIKE $p ESCAPE '\\'
                 OR args_json ILIKE $p ESCAPE '\\' OR result_json ILIKE $p ESCAPE '\\')
            UNION ALL
            SELECT day, seq, 'reply' AS kind, 'reply' AS what, reply_json AS body
            FROM exchanges WHERE trial_id = $t AND status = 'ok'
                 AND reply_json ILIKE $p ESCAPE '\\'
            ORDER BY day, seq LIMIT $n""", {"t": trial_id, "p": pattern, "n": limit})
        for h in hits:
            h["snippet"] = _snippet(h.pop("body") or "", text)
        return hits


def readable(content: Any) -> Any:
    """A tool message's content as UTF-8 text: older trials sent JSON with ``\u00b0C``
    escapes, shown as the ``°C`` they stand for."""
    if isinstance(content, str) and "\\u" in content:
        try:
            return json.dumps(json.loads(content), ensure_ascii=False,
                              separators=(",", ":"))
        except ValueError:
            return content
    return content


def _preview(body: dict[str, Any]) -> str:
    content = body.get("content")
    if isinstance(content, list):          # content parts (cache markers)
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    text = readable(content) or ""
    if body.get("tool_calls"):
        names = [(c.get("function") or {}).get("name", "?") for c in body["tool_calls"]]
        text = (text + " " if text else "") + "→ " + ", ".join(names)
    text = " ".join(str(text).split())
    return text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else "")


def _snippet(body: str, text: str, width: int = 80) -> str:
    at = body.lower().find(text.lower())
    if at < 0:
        return body[:2 * width]
    start = max(0, at - width)
    return ("…" if start else "") + body[start:at + len(text) + width] + \
        ("…" if at + len(text) + width < len(body) else "")
