"""Reasoning as each provider serves it, for the fake server: signed state the client
must send back untouched, and the refusals of the real APIs when it does not.

Signatures are HMACs under a key of the server's, so the server can tell its own blocks
from edited, reordered or made-up ones, as the real providers can (their signatures are
opaque; ours are too, to the client).

Anthropic extended thinking (``thinking: {type: enabled, budget_tokens}``):

* a reply starts with a ``thinking`` block (text and ``signature``), sometimes a
  ``redacted_thinking`` block (opaque ``data``) as well;
* the final assistant message of a request must start with a thinking or redacted
  thinking block, every thinking block's signature must verify and every redacted
  block's data too (400 otherwise, in Anthropic's words);
* ``budget_tokens`` at least 1,024 and below ``max_tokens``; ``temperature`` only 1;
  no ``tool_choice`` that forces a tool;
* thinking from earlier turns is stripped from the context (not counted as input); the
  current turn's (the assistant messages after the last user message that is more than
  tool results) is counted;
* output tokens include the thinking.

Gemini thought signatures (``generateContent``): see ``_gemini``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


class Signer:
    """Signs and checks opaque tokens under the server's key."""

    def __init__(self, key: bytes = b"fakellm-thinking-key") -> None:
        self._key = key

    def sign(self, *parts: str) -> str:
        mac = hmac.new(self._key, "\x1f".join(parts).encode(), hashlib.sha256).digest()
        return base64.b64encode(mac).decode()

    def valid(self, signature: Any, *parts: str) -> bool:
        return isinstance(signature, str) and hmac.compare_digest(signature, self.sign(*parts))

    def seal(self, text: str) -> str:
        """Opaque data that carries ``text`` and can be checked (redacted thinking)."""
        payload = base64.b64encode(text.encode()).decode()
        return f"{payload}.{self.sign('redacted', payload)}"

    def unsealed(self, data: Any) -> bool:
        if not isinstance(data, str) or "." not in data:
            return False
        payload, signature = data.rsplit(".", 1)
        return self.valid(signature, "redacted", payload)


def anthropic_thinking(body: dict[str, Any]) -> dict[str, Any] | None:
    """The request's thinking settings when thinking is on, else None."""
    thinking = body.get("thinking")
    return thinking if isinstance(thinking, dict) and thinking.get("type") in (
        "enabled", "adaptive") else None


def anthropic_refusal(body: dict[str, Any], signer: Signer) -> str | None:
    """What Anthropic's API says of a request with thinking on, if it refuses it."""
    thinking = anthropic_thinking(body)
    if thinking is None:
        return None
    budget = thinking.get("budget_tokens")
    if thinking["type"] == "enabled":
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if budget >= (body.get("max_tokens") or 0):
            return ("`max_tokens` must be greater than `thinking.budget_tokens`. Please "
                    f"consult our documentation at {DOCS}#max-tokens-and-context-window-size")
    if body.get("temperature") not in (None, 1, 1.0):
        return ("`temperature` may only be set to 1 when thinking is enabled. Please consult "
                f"our documentation at {DOCS}#important-considerations-when-using-extended-"
                "thinking")
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    messages = body.get("messages", [])
    for i, msg in enumerate(messages):
        if msg["role"] != "assistant" or not isinstance(msg["content"], list):
            continue
        for j, block in enumerate(msg["content"]):
            kind = block.get("type")
            if kind == "thinking" and not signer.valid(block.get("signature"),
                                                       "thinking", block.get("thinking", "")):
                return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
            if kind == "redacted_thinking" and not signer.unsealed(block.get("data")):
                return f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
    final = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=None)
    if final is not None:
        blocks = messages[final]["content"]
        first = blocks[0].get("type") if isinstance(blocks, list) and blocks else "text"
        if first not in ("thinking", "redacted_thinking"):
            return (f"messages.{final}.content.0.type: Expected `thinking` or "
                    f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a "
                    "final `assistant` message must start with a thinking block (preceeding "
                    "the lastmost set of `tool_use` and `tool_result` blocks). We recommend "
                    "you include thinking blocks from previous turns. To avoid this "
                    "requirement, disable `thinking`. Please consult our documentation at "
                    f"{DOCS}")
    return None


def current_turn(messages: list[dict[str, Any]]) -> int:
    """The index of the first message of the current turn: after the last user message
    that carries more than tool results (Anthropic strips earlier turns' thinking)."""
    start = 0
    for i, msg in enumerate(messages):
        if msg["role"] != "user":
            continue
        blocks = msg["content"] if isinstance(msg["content"], list) else [{"type": "text"}]
        if any(b.get("type") != "tool_result" for b in blocks):
            start = i + 1
    return start


def thinking_blocks(n: int, text: str, signer: Signer, redacted: bool) -> list[dict[str, Any]]:
    """The thinking a reply starts with: a signed block, and a redacted one if asked."""
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": text,
                                     "signature": signer.sign("thinking", text)}]
    if redacted:
        blocks.append({"type": "redacted_thinking", "data": signer.seal(f"hidden {n}")})
    return blocks


def call_signature(signer: Signer, name: str, args: Any) -> str:
    """A Gemini thought signature, bound to the call it came with."""
    return signer.sign("call", name, json.dumps(args, sort_keys=True))
