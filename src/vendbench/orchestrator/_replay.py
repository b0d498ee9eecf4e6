"""Resume a trial mid-way (design §7): rebuild, from what the results file committed, the
state the agent loop had reached just before the request that was cut off.

1. The world: a fresh environment (same world, same seed) runs the trial's logged tool
   calls in order, with the loop's rule for calls made after their day ended. Each
   result must equal the logged one, and each day's cash and net assets the logged
   day's, to the fen; anything else means the world or the code changed, and the trial
   cannot be resumed (``ReplayMismatch``: run it again with ``--restart``).
2. The conversation: the stored messages, grouped into units as the loop made them (a
   user message alone, an assistant message with its tool results).
3. The window: the messages of the last request sent (from its reservation, committed
   before it was sent), so it is sent again as it was and a cached prefix still holds.
4. The loop's counters, the money spent (every attempt's charge, in-flight requests at
   their reservation), the tokens, and the model's token calibration.

Nothing is sent and nothing is logged again: it was all logged the first time.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from decimal import Decimal
from collections.abc import Awaitable, Callable
from typing import Any

from ..environment import DAY_OVER, Environment, RecordingSession, Repeats, ToolCall
from ..errors import VendbenchError
from ..providers import ContextLimit, context_limit
from ..results import LoggedRequest, TrialHistory, dumps
from ._calibration import Calibration
from ._context import Message, RollingContext
from ._replies import nudge


_DAY_OVER = json.loads(dumps(DAY_OVER))      # the refusal as logged


class ReplayMismatch(VendbenchError):
    """The logged tool calls do not reproduce the logged trial."""


@dataclass(frozen=True, slots=True)
class Resumed:
    """Where the agent loop goes on from."""

    silent: int              # replies in a row without a tool call, before the cut
    repeats: Repeats         # the same failing call in a row, before the cut (design §35.0)
    next_attempt: int        # the attempt number the interrupted request is sent again as
    summary: str | None      # compact: the answer of the last request, a compaction
    replayed_calls: int
    seconds: float


@dataclass
class Counters:
    exchanges: int
    tool_calls: int
    cost: Decimal
    tokens: list[int]        # input, output, cache read, cache write


def replay(history: TrialHistory, env: Environment, context: RollingContext,
           calibration: Calibration, max_output_tokens: int, world: bool = True
           ) -> tuple[Resumed, Counters]:
    """Bring ``env`` and ``context`` (both fresh; ``world`` False: ``env`` is already
    where the trial stopped, see ``replay_in_turns``) to where the trial stopped."""
    start = time.perf_counter()
    repeats = _replay_world(history, env) if world else _repeats(history)
    messages = [Message(i, json.loads(body), tokens, carried)
                for i, body, tokens, carried in history.messages]
    try:
        context.restore(messages, _last_window(history))
    except ValueError as exc:
        raise ReplayMismatch(str(exc)) from None
    _recalibrate(history, calibration, max_output_tokens)
    ok_rows = [e for e in history.exchanges if e["status"] == "ok"]
    ok = {e["seq"] for e in ok_rows}
    seq = len(ok) + 1
    tried = [e["attempt"] for e in [*history.exchanges, *history.in_flight] if e["seq"] == seq]
    counters = Counters(
        exchanges=len(ok), tool_calls=len(history.tool_calls),
        cost=sum((e["cost_usd"] for e in history.exchanges if e["cost_usd"] is not None),
                 Decimal(0)) + sum((r["reserved_usd"] for r in history.in_flight), Decimal(0)),
        tokens=[sum(e[k] or 0 for e in ok_rows) for k in
                ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")])
    resumed = Resumed(silent=_silent(context, nudge(env)), repeats=repeats,
                      next_attempt=max(tried, default=0) + 1,
                      summary=_answered_compaction(history), replayed_calls=len(history.tool_calls),
                      seconds=time.perf_counter() - start)
    return resumed, counters


def _replay_world(history: TrialHistory, env: Environment) -> Repeats:
    check = _Check(history)
    session = RecordingSession(env, check)
    for seq, _, day, _, name, args, logged in history.tool_calls:
        check.expected = (seq, logged)
        session.call(name, args, day=day)
    _reached(history, env)
    return session.repeats


def _repeats(history: TrialHistory) -> Repeats:
    """The same failing call in a row at the end of the logged calls (an arena
    operator's world is replayed by ``replay_in_turns``)."""
    repeats = Repeats()
    for _, _, _, _, name, args, logged in history.tool_calls:
        result = json.loads(logged)
        repeats.saw(name, args, result if result != _DAY_OVER else DAY_OVER)
    return repeats


def _reached(history: TrialHistory, env: Environment) -> None:
    done = env.summary().get("days_completed", 0)
    if any(d > done for d in history.days):
        raise ReplayMismatch(f"the log has days after day {done}, which its tool calls do "
                             "not reach")


async def replay_in_turns(history: TrialHistory, env: Environment,
                          turn: Callable[[], Awaitable[None]]) -> None:
    """An arena operator's world brought to where its trial stopped: its logged calls
    replayed as in ``_replay_world``, but day by day, each waiting (``turn``) for the
    match's night as the operator did, while the other operators replay or play their
    own days."""
    check = _Check(history)
    session = RecordingSession(env, check)
    for seq, _, day, _, name, args, logged in history.tool_calls:
        await turn()
        session.collect()                      # the nights' books, checked as logged
        check.expected = (seq, logged)
        session.call(name, args, day=day)
    if history.tool_calls and history.tool_calls[-1][2] in history.days:
        await turn()               # it was still there when its last day's night ran
        session.collect()
    _reached(history, env)


class _Check:
    """The replay's recorder: each call's result and each day's books must be the
    logged ones."""

    def __init__(self, history: TrialHistory) -> None:
        self.history = history
        self.expected: tuple[int, str] = (0, "")

    def tool_call(self, call: ToolCall) -> None:
        seq, logged = self.expected
        if dumps(call.result) != logged:
            raise ReplayMismatch(f"tool call {seq} ({call.name} on day {call.day}) gives "
                                 "another result than the one logged")

    def records(self, records: dict[str, list[dict[str, Any]]]) -> None:
        for row in records.get("days", []):
            _check_day(self.history, row)


def _check_day(history: TrialHistory, row: dict[str, Any]) -> None:
    day = row["day"]
    logged = history.days.get(day)
    ours = (float(row["cash"]), float(row["net_assets"]))
    if logged is None:
        raise ReplayMismatch(f"day {day} ends in the replay but was not logged")
    if tuple(round(v, 2) for v in logged) != tuple(round(v, 2) for v in ours):
        raise ReplayMismatch(f"day {day} ends with cash {ours[0]:,.2f} and net assets "
                             f"{ours[1]:,.2f}, but the log says {logged[0]:,.2f} and "
                             f"{logged[1]:,.2f}")


def _last_window(history: TrialHistory) -> list[int]:
    """The message ids of the last request sent."""
    sent = [*history.exchanges, *history.in_flight]
    if not sent:
        return []
    last = max(sent, key=lambda e: (e["seq"], e["attempt"]))
    return list(LoggedRequest.parse(last["request_json"]).message_ids)


def _answered_compaction(history: TrialHistory) -> str | None:
    """The summary a compaction wrote, if it was the last request sent and was answered
    (its summary then stands for what it carried, design §27); None otherwise."""
    sent = [*history.exchanges, *history.in_flight]
    if not sent:
        return None
    last = max(sent, key=lambda e: (e["seq"], e["attempt"]))
    if last.get("purpose") != "compaction" or last.get("status") != "ok":
        return None
    return str(json.loads(last["reply_json"] or "{}").get("text") or "")


def _recalibrate(history: TrialHistory, calibration: Calibration, max_output: int) -> None:
    """What the server's replies taught about its token counts, learned again."""
    for e in history.exchanges:
        counted = LoggedRequest.parse(e["request_json"]).counted_tokens
        if e["status"] == "ok" and e["input_tokens"]:
            calibration.observe(counted, e["input_tokens"])
        elif e["status"] == "context_length" and counted:
            limit = context_limit(e["error"] or "") if e["error"] else ContextLimit()
            calibration.overflowed(counted, limit, max_output)


def _silent(context: RollingContext, nudged: str) -> int:
    """Replies in a row without a tool call at the end of the conversation."""
    silent = 0
    for unit in reversed(context.units):
        body = unit[0].body
        if body["role"] == "user" and body.get("content") == nudged:
            continue
        if body["role"] == "assistant" and not body.get("tool_calls"):
            silent += 1
            continue
        break
    return silent
