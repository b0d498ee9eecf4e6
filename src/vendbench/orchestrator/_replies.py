"""What the agent loop does with a reply, shared with the replay that resumes a trial.

A resumed trial must reach exactly the state the loop had reached, so both run a reply's
tool calls through a recording session (in order; once the day has ended, the rest are
refused and not run) and build the same messages from them.
"""

from __future__ import annotations

from typing import Any

from ..environment import MAX_SILENT_REPLIES, nudge
from ..results import dumps


def call_of(call: dict[str, Any]) -> tuple[str, Any]:
    """A tool call's name and arguments, as the model sent them."""
    fn = call.get("function") or {}
    return fn.get("name", ""), fn.get("arguments", "")


def tool_message(call: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The tool result as the model reads it: UTF-8 text, not ``\u00b0C`` escapes."""
    return {"role": "tool", "tool_call_id": call.get("id"),
            "content": dumps(result, ascii=False)}


__all__ = ["MAX_SILENT_REPLIES", "call_of", "nudge", "tool_message"]
