"""A recording session: an environment whose tool calls are numbered, recorded, and
followed by the day records they produced.

Everything that plays a world goes through one: the agent loop, the reference
policies, the replay that resumes a trial, and the MCP server. They differ only in the
recorder they give it (the results log, a buffer, a checker of the log, nothing).

    >>> from vendbench.environment import make, RecordingSession
    >>> session = RecordingSession(make("autovend", seed=1, days=2))
    >>> session.call("end_day", {})["ok"], session.calls
    (True, 1)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._arguments import canonical
from ._protocol import Environment
from ._registry import find

DAY_OVER = {"ok": False, "error": "the day had already ended before this call; it was not run"}
# replies in a row without a tool call after which an agent loop stops the trial
# (agent_stopped): vendbench's own loop and the Inspect agent alike
MAX_SILENT_REPLIES = 3
# the same failing call (its tool and arguments), made this many times in a row, stops
# the trial too (design §35.0): a model that keeps calling a tool the world lacks, or
# the same refused order, is as stuck as a silent one, and pays for every request
MAX_REPEATED_FAILURES = 5


def day_tool(env: Environment) -> str:
    """The tool that ends a simulated day in ``env`` (its scenario's descriptor says)."""
    found = find(env.scenario)
    return found.day_tool if found is not None else "end_day"


def nudge(env: Environment) -> str:
    """What a player whose turn made no tool call is told (an agent loop's reply without
    one): the world's own day-ending tool. It is part of the run's recorded prompts."""
    return (f"You did not call a tool. Run the business with the tools, and call "
            f"{day_tool(env)} when you are done for today.")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as it was made and answered."""

    seq: int                     # its number in the trial, from 1
    day: int                     # the day it was made during
    name: str
    arguments: Any               # as the caller sent them (a dict, or a model's JSON text)
    result: dict[str, Any]
    exchange: int | None = None  # the LLM exchange whose reply made it (None: no LLM)
    call_id: str | None = None   # the reply's id for it

    @property
    def ran(self) -> bool:
        """False when it was refused because its day had already ended."""
        return self.result is not DAY_OVER


class Recorder(Protocol):
    """Where a session's calls and day records go."""

    def tool_call(self, call: ToolCall) -> None: ...

    def records(self, records: dict[str, list[dict[str, Any]]]) -> None: ...


@dataclass
class Kept:
    """A recorder that keeps what it is given, to hand on later (a policy plays in a
    thread; its calls are written from the event loop)."""

    calls: list[ToolCall] = field(default_factory=list)
    rows: list[dict[str, list[dict[str, Any]]]] = field(default_factory=list)

    def tool_call(self, call: ToolCall) -> None:
        self.calls.append(call)

    def records(self, records: dict[str, list[dict[str, Any]]]) -> None:
        if records:
            self.rows.append(records)

    def hand_to(self, recorder: Recorder) -> int:
        """Pass everything kept to ``recorder`` in order and forget it; how many calls."""
        for call in self.calls:
            recorder.tool_call(call)
        for records in self.rows:
            recorder.records(records)
        count = len(self.calls)
        self.calls, self.rows = [], []
        return count


@dataclass
class Repeats:
    """The same failing call made again and again, in a row (design §35.0): a failing
    call is one the world answered ``ok: False``; any other call ends the run of
    repeats. A refusal of a call made after its day ended (``DAY_OVER``) is the
    harness's, and counts neither way."""

    key: tuple[str, str] | None = None
    count: int = 0

    def saw(self, name: str, arguments: Any, result: dict[str, Any]) -> None:
        if result is DAY_OVER:
            return
        if result.get("ok") is not False:
            self.key, self.count = None, 0
            return
        key = (str(name), canonical(arguments))
        self.count = self.count + 1 if key == self.key else 1
        self.key = key

    def warning(self) -> str | None:
        """What a failing call's result says once it has come twice in a row before:
        how many more stop the trial (the rule is told before it is applied)."""
        if self.key is None or self.count < MAX_REPEATED_FAILURES - 2:
            return None
        left = MAX_REPEATED_FAILURES - self.count
        return (f"the same failing call {self.count} times in a row: "
                + (f"{left} more and the trial stops" if left > 0 else "the trial stops"))

    def stuck(self) -> str | None:
        """Why the agent is stuck, once the same failing call came
        ``MAX_REPEATED_FAILURES`` times in a row (None before)."""
        if self.key is None or self.count < MAX_REPEATED_FAILURES:
            return None
        return (f"the same failing call ({self.key[0][:60]}) {self.count} times in a row")


class RecordingSession:
    """``env`` with a record of its calls.

    Args:
        env: the world.
        recorder: where each call and the day records it produced go (None: nowhere;
            the records are still drained, so a long episode does not hoard them).
        calls: calls already made in this trial (a resumed trial numbers on).
    """

    def __init__(self, env: Environment, recorder: Recorder | None = None,
                 calls: int = 0) -> None:
        self.env, self.recorder, self.calls = env, recorder, calls
        self.seconds = 0.0          # spent inside the world (its calls and reports)
        self.repeats = Repeats()    # the same failing call, in a row

    def observe(self) -> str:
        """Today's report (timed with the calls)."""
        start = time.perf_counter()
        try:
            return self.env.observe()
        finally:
            self.seconds += time.perf_counter() - start

    def refused(self, day: int) -> bool:
        """Whether a call made during ``day`` comes too late (the day, or the trial, ended)."""
        return self.env.done or self.env.day != day

    def call(self, name: str, arguments: Any = None, *, day: int | None = None,
             exchange: int | None = None, call_id: str | None = None) -> dict[str, Any]:
        """Make one tool call and record it. Given the ``day`` it was made during (a
        model's reply, made before its earlier calls ran), a call whose day has already
        ended is refused with ``DAY_OVER`` and not run, but it is recorded: the model did
        make it. Without one it is today's call, and the world answers it."""
        env = self.env
        start = time.perf_counter()
        if day is None:
            day, result = env.day, env.call(name, arguments)
        else:
            result = DAY_OVER if self.refused(day) else env.call(name, arguments)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.repeats.saw(name, arguments, result)
        if (warning := self.repeats.warning()) is not None:
            result = {**result, "warning": warning}
        records = env.drain_records()
        if self.recorder is not None:
            self.recorder.tool_call(ToolCall(self.calls, day, name, arguments, result,
                                             exchange, call_id))
            self.recorder.records(records)
        return result

    def collect(self) -> None:
        """Hand the recorder the day records the world produced between calls (a
        match's night, run by another operator's call)."""
        records = self.env.drain_records()
        if self.recorder is not None:
            self.recorder.records(records)

    def end_day(self, day: int) -> None:
        """End ``day`` if a player left it open (a policy that forgot its day tool)."""
        if not self.env.done and self.env.day == day:
            self.call(day_tool(self.env), {})
