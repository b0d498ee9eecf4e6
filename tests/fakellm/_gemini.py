"""Gemini's ``generateContent`` wire format, as the fake server speaks it.

``POST …/models/{model}:generateContent``: ``contents`` (``user`` and ``model`` turns of
parts: ``text``, ``functionCall``, ``functionResponse``), ``system_instruction``,
``tools`` (``function_declarations``), ``generationConfig`` (``thinkingConfig``).

Thought signatures, as Gemini 3 serves them (https://ai.google.dev/gemini-api/docs/
thought-signatures): with thinking on, the first function call of each model step
carries a ``thoughtSignature``; in the current turn (the model steps since the last user
text) each step's first function call must come back with its signature, unchanged,
else 400 ("Function call is missing a thought_signature"; a changed one: "Corrupted
thought signature."). Earlier turns are not checked. Google's documented placeholders
(``skip_thought_signature_validator``) pass, and are counted, so a test can tell that a
client sent its own signatures back rather than placeholders. A part with no data (an
empty text) is refused, as the real API refuses it.
"""

from __future__ import annotations

import json
from typing import Any

from ._thinking import Signer, call_signature

PLACEHOLDERS = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")


def _part_call(part: dict[str, Any]) -> dict[str, Any] | None:
    return part.get("functionCall") or part.get("function_call")


def _part_response(part: dict[str, Any]) -> dict[str, Any] | None:
    return part.get("functionResponse") or part.get("function_response")


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The body as an OpenAI chat request (messages, tools), for the script."""
    out: list[dict[str, Any]] = []
    system = body.get("system_instruction") or body.get("systemInstruction")
    if system:
        out.append({"role": "system",
                    "content": "".join(p.get("text", "") for p in system.get("parts", []))})
    calls = 0
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        if content.get("role") == "model":
            tool_calls = []
            for part in parts:
                call = _part_call(part)
                if call is not None:
                    calls += 1
                    tool_calls.append({"id": f"call_{calls}", "type": "function", "function": {
                        "name": call["name"], "arguments": json.dumps(call.get("args", {}))}})
            text = "".join(p.get("text", "") for p in parts if not p.get("thought"))
            out.append({"role": "assistant", "content": text or None,
                        **({"tool_calls": tool_calls} if tool_calls else {})})
            continue
        for part in parts:
            response = _part_response(part)
            if response is not None:
                out.append({"role": "tool", "tool_call_id": response.get("name"),
                            "content": json.dumps(response.get("response"))})
            elif part.get("text"):
                out.append({"role": "user", "content": part["text"]})
    tools = [{"type": "function", "function": f}
             for t in body.get("tools") or []
             for f in (t.get("function_declarations") or t.get("functionDeclarations") or [])]
    return {"model": body.get("model"), "messages": out, "tools": tools or None,
            "tool_choice": body.get("toolConfig") or body.get("tool_config"),
            "max_tokens": (body.get("generationConfig") or {}).get("max_output_tokens")}


def thinking_on(body: dict[str, Any]) -> bool:
    config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    return config.get("thinkingBudget", 1) != 0 and bool(config)


def refusal(body: dict[str, Any], signer: Signer, placeholders: list[str]) -> str | None:
    """What Gemini says of the request, if it refuses it (``placeholders`` collects the
    documented placeholder signatures it let through)."""
    contents = body.get("contents", [])
    for i, content in enumerate(contents):
        for j, part in enumerate(content.get("parts", [])):
            if not any(v not in (None, "", {}) for k, v in part.items()
                       if k not in ("thought", "thoughtSignature", "thought_signature")):
                return (f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required "
                        "oneof field 'data' must have one initialized field")
    turn = max((i + 1 for i, c in enumerate(contents) if c.get("role") != "model" and any(
        p.get("text") for p in c.get("parts", []))), default=0)
    for content in contents[turn:]:
        if content.get("role") != "model":
            continue
        first = next((p for p in content.get("parts", []) if _part_call(p) is not None), None)
        if first is None:
            continue
        call = _part_call(first) or {}
        signature = first.get("thoughtSignature") or first.get("thought_signature")
        position = content["parts"].index(first) + 1
        if signature is None:
            return ("Function call is missing a thought_signature in functionCall parts. "
                    "This is required for tools to work correctly, and missing "
                    "thought_signature may lead to degraded model performance. Additional "
                    f"data, function call `default_api:{call.get('name')}` , position "
                    f"{position}. Please refer to https://ai.google.dev/gemini-api/docs/"
                    "thought-signatures for more details.")
        if signature in PLACEHOLDERS:
            placeholders.append(signature)
        elif not signer.valid(signature, "call", call.get("name", ""),
                              json.dumps(call.get("args", {}), sort_keys=True)):
            return "Corrupted thought signature."
    return None


def reply(n: int, model: str, thought: str | None, content: str | None,
          calls: list[tuple[str, str]], usage: dict[str, int], signer: Signer
          ) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if thought:
        parts.append({"text": thought, "thought": True})
    if content:
        parts.append({"text": content})
    for i, (name, raw) in enumerate(calls):
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            args = {"raw": raw}
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
        if i == 0 and thought is not None:     # the first call of a step carries it
            part["thoughtSignature"] = call_signature(signer, name, args)
        parts.append(part)
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage, "modelVersion": model, "responseId": f"resp-{n}"}


def error(status: int, message: str) -> dict[str, Any]:
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
    return {"error": {"code": status, "message": message,
                      "status": names.get(status, "INTERNAL")}}
