"""A trial as screening reads it: its messages once each (with the day and exchange each
belongs to), its tool calls, its days, and its diagnosis (design §32.1)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..environment import Diagnosis, diagnose, record_tables
from ..results import Screening, Store

TOOL_TEXT_CHARS = 1_500     # of a tool result, as the judge reads it (quotes checked whole)


@dataclass(frozen=True, slots=True)
class Message:
    """One stored message: its id, role, day and exchange; ``text`` its words in full (a
    reply's text, a report, a tool's result), ``calls`` a reply's tool calls."""

    msg_id: int
    role: str
    day: int | None
    exchange: int | None
    text: str
    calls: tuple[tuple[str, str], ...] = ()

    def shown(self) -> str:
        """As the judge reads it: ``[M<id>] day D, role: text``, a tool's result cut at
        ``TOOL_TEXT_CHARS``, a reply's calls after its text."""
        text = self.text
        if self.role == "tool" and len(text) > TOOL_TEXT_CHARS:
            text = text[:TOOL_TEXT_CHARS] + f" [... {len(self.text) - TOOL_TEXT_CHARS:,} " \
                                             "characters more]"
        calls = "".join(f"\n  -> {name}({args})" for name, args in self.calls)
        return f"[M{self.msg_id}] day {self.day}, {self.role}: {text}{calls}"

    def holds(self, quote: str) -> bool:
        """Whether ``quote`` occurs in this message (its text or its calls), whitespace
        runs read as one space."""
        whole = " ".join((self.text + " " + " ".join(f"{n}({a})" for n, a in self.calls))
                         .split())
        wanted = " ".join(quote.split())
        return bool(wanted) and wanted in whole


@dataclass
class Transcript:
    """One trial: its row (model, seed, scenario, horizon, ...), messages, tool calls (with
    results), day rows (cash, net assets) and diagnosis (None: its world declares none)."""

    trial: dict[str, Any]
    messages: list[Message]
    calls: list[dict[str, Any]]
    days: dict[int, tuple[float, float]]
    diagnosis: Diagnosis | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def trial_id(self) -> str:
        return str(self.trial["trial_id"])

    @property
    def scenario(self) -> str:
        return str(self.trial["scenario"])

    def said(self) -> list[Message]:
        """The model's own replies that have words."""
        return [m for m in self.messages if m.role == "assistant" and m.text.strip()]

    def cash_before(self, day: int) -> float | None:
        """Cash at the start of ``day``: the end of the day before (day 1: the start)."""
        if day - 1 in self.days:
            return self.days[day - 1][0]
        return self.trial.get("initial_cash") if day <= 1 else None


def text_of(body: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A stored message's words and its tool calls (name, arguments as sent)."""
    content = body.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    calls = tuple((str((c.get("function") or {}).get("name", "")),
                   str((c.get("function") or {}).get("arguments", "")))
                  for c in body.get("tool_calls") or [] if isinstance(c, dict))
    return (content if isinstance(content, str) else ""), calls


def load(store: Store, trial: dict[str, Any], *, salt: str | None = None,
         diagnosed: bool = True) -> Transcript:
    """``trial`` (a row of ``Screening.trials``) as screening reads it; ``diagnosed``:
    with its diagnosis (the world replayed, no model; a private world needs ``salt``)."""
    reads = Screening(store)
    messages = []
    for m in reads.messages(trial["trial_id"]):
        text, made = text_of(m["body"])
        messages.append(Message(m["msg_id"], m["role"], m["day"], m["exchange"], text, made))
    calls = reads.calls(trial["trial_id"])
    found = None
    if diagnosed:
        found = diagnose(trial["scenario"],
                         store.trial_records(trial["trial_id"],
                                             record_tables(trial["scenario"])),
                         [{k: c[k] for k in ("seq", "exchange_seq", "day", "name",
                                             "args_json", "result_json")} for c in calls],
                         seed=trial["seed"], world_seed=trial["world_seed"],
                         days=trial["horizon"], initial=float(trial["initial_cash"] or 0.0),
                         world_salt=salt, private=bool(trial.get("private")))
    return Transcript(trial, messages, calls, reads.days(trial["trial_id"]), found)


def arguments(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as a dict ({} when they are not an object)."""
    try:
        args = json.loads(call.get("args_json") or "{}")
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}
