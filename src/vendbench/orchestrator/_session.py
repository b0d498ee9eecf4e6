"""What the agent loop does with a reply, shared with the replay that resumes a trial.

A resumed trial must reach exactly the state the loop had reached, so both run a reply's
tool calls with the same rule (in order; once the day has ended, the rest are refused
and not run) and build the same messages from them.
"""

from __future__ import annotations

from typing import Any

from ..environment import Environment
from ..results import dumps

def nudge(env: Environment) -> str:
    """What a reply without a tool call is told (the world's own day-ending tool)."""
    return (f"You did not call a tool. Run the business with the tools, and call "
            f"{day_tool(env)} when you are done for today.")


def day_tool(env: Environment) -> str:
    """The tool that ends a simulated day in ``env`` (``end_day`` unless it says)."""
    return getattr(env, "day_tool", "end_day")

MAX_SILENT_REPLIES = 3
DAY_OVER = {"ok": False, "error": "the day had already ended before this call; it was not run"}


def refused(env: Environment, day: int) -> bool:
    """Whether a call made during ``day`` comes too late (the day, or the trial, ended)."""
    return env.done or env.day != day


def call_of(call: dict[str, Any]) -> tuple[str, Any]:
    """A tool call's name and arguments, as the model sent them."""
    fn = call.get("function") or {}
    return fn.get("name", ""), fn.get("arguments", "")


def tool_message(call: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The tool result as the model reads it."""
    return {"role": "tool", "tool_call_id": call.get("id"), "content": dumps(result)}
