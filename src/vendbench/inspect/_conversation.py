"""An Inspect sample's conversation as the rows vendbench's own trials keep: each message
once (``messages``), each model call an exchange whose request lists the messages it
carried (``exchanges``), with its reply in vendbench's shape (``reply_json``), so the
viewer shows an imported trial's reports, replies and reasoning day by day.

What Inspect does not record is left empty, never made up: our token count of a message
(0), a reservation, a price Inspect did not know.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ContentReasoning

from ..results import AppendRow, ExchangeRow, LoggedRequest, MessageRow, dumps


class Conversation:
    """Builds one trial's message and exchange rows from its model events, in order."""

    def __init__(self, trial_id: str, model: str) -> None:
        self.trial_id, self.model = trial_id, model
        self.ids: dict[str, int] = {}         # Inspect's message id -> ours
        self.rows: list[AppendRow] = []
        self.exchanges = 0

    def exchange(self, event: ModelEvent, day: int) -> int:
        """Record a model call made during ``day``; returns its number (from 1)."""
        self.exchanges += 1
        carried = tuple(self._message(m) for m in event.input)
        out = event.output
        reply = out.message if out.choices else None
        if reply is not None:
            self._message(reply)
        usage = out.usage
        cache_read = usage.input_tokens_cache_read or 0 if usage else 0
        cache_write = usage.input_tokens_cache_write or 0 if usage else 0
        request = LoggedRequest(
            event.model, carried, event.config.max_tokens or 0,
            temperature=event.config.temperature,
            reasoning_effort=event.config.reasoning_effort,
            top_p=event.config.top_p, seed=event.config.seed,
            tool_choice=event.tool_choice if isinstance(event.tool_choice, str) else "auto")
        self.rows.append(ExchangeRow(
            self.trial_id, self.exchanges, day, 1, self.model, request.json(),
            dumps(event.call.response) if event.call and event.call.response else None,
            usage.input_tokens + cache_read + cache_write if usage else None,
            usage.output_tokens if usage else None, cache_read if usage else None,
            cache_write if usage else None, usage.reasoning_tokens if usage else None,
            Decimal(str(usage.total_cost)) if usage and usage.total_cost is not None
            else None, None, round((event.working_time or 0.0) * 1000, 3),
            "error" if event.error else "ok", event.error,
            stored_time(event.timestamp), None,
            dumps(_reply(reply), sort_keys=False, ascii=False) if reply else None))
        return self.exchanges

    def _message(self, message: ChatMessage) -> int:
        key = message.id or f"anonymous-{len(self.ids)}"
        if key not in self.ids:
            self.ids[key] = len(self.ids) + 1
            body = _openai(message)
            self.rows.append(MessageRow(self.trial_id, self.ids[key], body["role"],
                                        dumps(body, sort_keys=False), 0))
        return self.ids[key]


def stored_time(value: str | dt.datetime) -> dt.datetime:
    """An Inspect time (a datetime or its ISO text) as the results file keeps times:
    UTC, naive."""
    at = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value)
    return at.astimezone(dt.timezone.utc).replace(tzinfo=None) if at.tzinfo else at


def _calls(message: ChatMessageAssistant) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function",
             "function": {"name": c.function, "arguments": json.dumps(c.arguments)}}
            for c in message.tool_calls or []]


def _openai(message: ChatMessage) -> dict[str, Any]:
    """A message as vendbench keeps its own (OpenAI's chat shape)."""
    body: dict[str, Any] = {"role": message.role, "content": message.text}
    if isinstance(message, ChatMessageAssistant) and message.tool_calls:
        body["tool_calls"] = _calls(message)
    if isinstance(message, ChatMessageTool):
        body["tool_call_id"] = message.tool_call_id
    return body


def _reply(message: ChatMessageAssistant) -> dict[str, Any]:
    """vendbench's own shape of a reply: text, reasoning, tool calls."""
    reasoning = "".join(c.reasoning for c in message.content
                        if isinstance(c, ContentReasoning)) \
        if not isinstance(message.content, str) else ""
    return {"text": message.text, "reasoning": reasoning or None,
            "tool_calls": _calls(message)}
