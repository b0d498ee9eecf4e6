"""The Anthropic Messages wire format, as the fake server speaks it.

``to_chat`` turns a ``POST /v1/messages`` body into OpenAI chat messages, so that one
script answers both wire formats; ``segments`` cuts the body into cacheable blocks in
the order Anthropic reads them (tools, system, messages); ``message`` and ``error`` build
the replies Anthropic sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._cache import Segment
from ._thinking import current_turn


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The body as an OpenAI chat request (messages, tools, tool_choice)."""
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
        out.append({"role": "system", "content": text})
    for msg in body.get("messages", []):
        blocks = msg["content"] if isinstance(msg["content"], list) else \
            [{"type": "text", "text": msg["content"]}]
        if msg["role"] == "assistant":
            calls = [{"id": b["id"], "type": "function",
                      "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                     for b in blocks if b["type"] == "tool_use"]
            text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
            out.append({"role": "assistant", "content": text or None,
                        **({"tool_calls": calls} if calls else {})})
            continue
        for b in blocks:
            if b["type"] == "tool_result":
                content = b.get("content")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content)
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"],
                            "content": content})
            elif b["type"] == "text":
                out.append({"role": "user", "content": b["text"]})
    return {"model": body.get("model"), "messages": out, "tools": body.get("tools"),
            "tool_choice": body.get("tool_choice"), "max_tokens": body.get("max_tokens")}


def segments(body: dict[str, Any], count_block: Callable[[dict], int],
             count_tools: Callable[[list], int]) -> list[Segment]:
    """Tools, system blocks and content blocks, in Anthropic's cache order."""
    out = []
    tools = body.get("tools") or []
    if tools:
        out.append(Segment(json.dumps(tools), count_tools(tools), "cache_control" in tools[-1]))
    system = body.get("system") or []
    for block in ([{"type": "text", "text": system}] if isinstance(system, str) else system):
        out.append(Segment("system:" + block["text"], count_block(block),
                           "cache_control" in block))
    messages = body.get("messages", [])
    turn = current_turn(messages)
    for i, msg in enumerate(messages):
        blocks = msg["content"] if isinstance(msg["content"], list) else \
            [{"type": "text", "text": msg["content"]}]
        for block in blocks:
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            text = msg["role"] + ":" + json.dumps(plain, sort_keys=True)
            # earlier turns' thinking is stripped from the context: it counts nothing
            stripped = i < turn and plain.get("type") in ("thinking", "redacted_thinking")
            out.append(Segment(text, 0 if stripped else count_block(plain),
                               "cache_control" in block))
    return out


def message(n: int, model: str, content: str | None, calls: list[tuple[str, str]],
            usage: dict[str, int], thinking: list[dict[str, Any]] | None = None
            ) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = list(thinking or [])
    if content:
        blocks.append({"type": "text", "text": content})
    for i, (name, args) in enumerate(calls):
        try:
            arguments = json.loads(args)
        except json.JSONDecodeError:
            arguments = {"raw": args}          # Anthropic always sends an object
        blocks.append({"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name,
                       "input": arguments})
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None, "usage": usage}


ERRORS = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
          429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def error(status: int, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ERRORS.get(status, "api_error"),
                                       "message": text}}
