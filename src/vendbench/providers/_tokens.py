"""Token counting for the rolling context, with litellm's token counter.

A message is counted as litellm counts its texts (content, tool names and arguments) —
2-3x faster than counting the message structure — plus the chat framing: 4 tokens a
message and 8 a tool call, rounded up as OpenAI's own accounting does. Each message is
counted once, when it is created.

(Counting in a helper process was measured and did not raise throughput: the event
loop's share of litellm's own per-call work dominates; it also made every script that
calls ``execute`` need a ``__main__`` guard. So counting stays inline.)
"""

from __future__ import annotations

import json
from typing import Any


def message_texts(message: dict[str, Any]) -> tuple[str, int]:
    """The texts of a message to tokenize, and its framing tokens."""
    texts = [message.get("content") or ""]
    calls = message.get("tool_calls") or []
    for call in calls:
        fn = call.get("function") or {}
        texts += [fn.get("name") or "", fn.get("arguments") or ""]
    text = "\n".join(t if isinstance(t, str) else json.dumps(t) for t in texts)
    return text, 4 + 8 * len(calls)


# what a reply carries back to its provider (``ServerProfile.sent_back``): on the message,
# and on each tool call (Gemini's thought signatures)
CARRIED_FIELDS = ("thinking_blocks", "provider_specific_fields", "reasoning_content")


def carried_text(message: dict[str, Any]) -> str:
    """What ``message`` carries back to its provider, as text to count ("" for none)."""
    carried = {k: message[k] for k in CARRIED_FIELDS if message.get(k)}
    calls = [c["provider_specific_fields"] for c in message.get("tool_calls") or []
             if c.get("provider_specific_fields")]
    if calls:
        carried["tool_calls"] = calls
    return json.dumps(carried, ensure_ascii=False) if carried else ""


class TokenCounter:
    """Counts messages and tool schemas for one model with litellm's counter.

    ``litellm.token_counter`` picks the model's tokenizer again on every call (a third of
    its cost); the counting function it would pick is resolved once here, from the
    litellm module that ``token_counter`` itself uses, so counts are the same (tested).
    An older or newer litellm without that function falls back to ``token_counter``.
    """

    def __init__(self, model: str) -> None:
        from ._litellm import import_litellm

        self._litellm = import_litellm()
        self.model = model
        try:
            from litellm.litellm_core_utils.token_counter import _get_count_function

            self._text = _get_count_function(model)
        except (ImportError, TypeError, ValueError):
            self._text = lambda text: self._litellm.token_counter(model=model, text=text)

    def count_now(self, messages: list[dict[str, Any]]) -> list[int]:
        """Tokens of each message."""
        out = []
        for message in messages:
            text, framing = message_texts(message)
            out.append(int(self._text(text)) + framing)
        return out

    async def count(self, messages: list[dict[str, Any]]) -> list[int]:
        """Tokens of each message (the rolling context's counting interface)."""
        return self.count_now(messages)

    async def count_carried(self, messages: list[dict[str, Any]]) -> list[int]:
        """Tokens of what each message carries back to its provider (0: nothing)."""
        return [int(self._text(text)) if (text := carried_text(m)) else 0 for m in messages]

    def tools(self, tools: list[dict[str, Any]]) -> int:
        """Tokens of the tool schemas, sent with every request."""
        return int(self._litellm.token_counter(model=self.model, tools=tools,
                                               messages=[{"role": "user", "content": ""}]))
