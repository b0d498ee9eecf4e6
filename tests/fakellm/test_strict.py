"""The tests' server refuses what the real APIs refuse about reasoning (design §24.3), so a
harness that drops, edits or reorders what a provider asked back fails here as it would
there. Each refusal is checked on a raw HTTP body, without litellm in between."""

from __future__ import annotations

import copy

import httpx
import pytest

from . import FakeLLM
from ._thinking import call_signature

TOOLS = [{"name": "end_day", "description": "end the day",
          "input_schema": {"type": "object", "properties": {}}}]


def claude(messages: list[dict], **over: object) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 2048, "tools": TOOLS,
            "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": messages,
            **over}


def post(llm: FakeLLM, path: str, body: dict) -> httpx.Response:
    return httpx.post(llm.base + path, json=body, timeout=10)


@pytest.fixture(scope="module")
def llm():
    with FakeLLM() as server:
        yield server


def first_turn(llm: FakeLLM) -> tuple[dict, list[dict]]:
    """A first request with thinking on, and the assistant turn as Anthropic sent it."""
    user = {"role": "user", "content": "Day 2 of 30. Warehouse: 0 units"}
    reply = post(llm, "/v1/messages", claude([user])).json()
    assert reply["content"][0]["type"] == "thinking" and reply["content"][0]["signature"]
    return user, reply["content"]


def follow_up(user: dict, assistant: list[dict]) -> list[dict]:
    results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "{}"}
               for b in assistant if b["type"] == "tool_use"]
    return [user, {"role": "assistant", "content": assistant},
            {"role": "user", "content": results}]


def test_anthropic_takes_its_thinking_back_untouched_and_nothing_else(llm):
    user, assistant = first_turn(llm)
    ok = post(llm, "/v1/messages", claude(follow_up(user, assistant)))
    assert ok.status_code == 200, ok.text
    dropped = [b for b in assistant if b["type"] not in ("thinking", "redacted_thinking")]
    refused = post(llm, "/v1/messages", claude(follow_up(user, dropped)))
    assert refused.status_code == 400
    assert "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found " \
           "`tool_use`" in refused.json()["error"]["message"]
    edited = copy.deepcopy(assistant)
    edited[0]["thinking"] += " (edited)"
    refused = post(llm, "/v1/messages", claude(follow_up(user, edited)))
    assert refused.status_code == 400 and "Invalid `signature`" in refused.text
    sealed = {"type": "redacted_thinking", "data": "bm90IG91cnM=.forged"}
    refused = post(llm, "/v1/messages", claude(follow_up(user, [sealed, *dropped])))
    assert refused.status_code == 400 and "Invalid `data` in `redacted_thinking`" in refused.text


@pytest.mark.parametrize("over, said", [
    ({"temperature": 0.2}, "`temperature` may only be set to 1 when thinking is enabled"),
    ({"max_tokens": 1024}, "`max_tokens` must be greater than `thinking.budget_tokens`"),
    ({"thinking": {"type": "enabled", "budget_tokens": 512}}, "greater than or equal to 1024"),
    ({"tool_choice": {"type": "any"}}, "Thinking may not be enabled when tool_choice forces"),
])
def test_anthropic_refuses_settings_thinking_cannot_take(llm, over, said):
    refused = post(llm, "/v1/messages", claude([{"role": "user", "content": "Day 1"}], **over))
    assert refused.status_code == 400 and said in refused.json()["error"]["message"]


def test_anthropic_counts_only_the_current_turns_thinking(llm):
    """Earlier turns' thinking is stripped from the context; the current turn's counts
    (no cache marks here: every input token is reported as ``input_tokens``)."""
    user, assistant = first_turn(llm)
    calls = [b for b in assistant if b["type"] == "tool_use"]
    next_day = {"role": "user", "content": "Day 3 of 30."}

    def tokens(messages: list[dict], thinking: bool) -> int:
        body = claude(messages) if thinking else {**claude(messages),
                                                  "thinking": {"type": "disabled"}}
        reply = post(llm, "/v1/messages", body)
        assert reply.status_code == 200, reply.text
        return reply.json()["usage"]["input_tokens"]

    # in the turn that made it, the thinking counts
    assert tokens(follow_up(user, assistant), True) > tokens(follow_up(user, calls), False)
    # once a new user turn began, it counts nothing (though it is still sent)
    assert tokens([*follow_up(user, assistant), next_day], True) == \
        tokens([*follow_up(user, calls), next_day], False)


def gemini(contents: list[dict], thinking: bool = True) -> dict:
    config = {"max_output_tokens": 2048,
              **({"thinkingConfig": {"thinkingLevel": "low", "includeThoughts": True}}
                 if thinking else {})}
    return {"contents": contents, "generationConfig": config,
            "tools": [{"function_declarations": [{"name": "end_day", "parameters": {}}]}]}


GEMINI = "/v1beta/models/gemini-3.1-pro-preview:generateContent"


def test_gemini_wants_the_current_turns_signatures_back(llm):
    user = {"role": "user", "parts": [{"text": "Day 2 of 30."}]}
    reply = post(llm, GEMINI, gemini([user])).json()
    parts = reply["candidates"][0]["content"]["parts"]
    call = next(p for p in parts if "functionCall" in p)
    fn = call["functionCall"]
    assert call["thoughtSignature"] == call_signature(llm.signer, fn["name"], fn["args"])
    model = {"role": "model", "parts": [p for p in parts if not p.get("thought")]}
    result = {"role": "user", "parts": [{"functionResponse": {"name": fn["name"],
                                                              "response": {"ok": True}}}]}
    assert post(llm, GEMINI, gemini([user, model, result])).status_code == 200
    bare = {"role": "model", "parts": [{"functionCall": call["functionCall"]}]}
    refused = post(llm, GEMINI, gemini([user, bare, result]))
    assert refused.status_code == 400 and refused.json()["error"]["status"] == \
        "INVALID_ARGUMENT"
    assert "Function call is missing a thought_signature in functionCall parts" in refused.text
    assert f"`default_api:{fn['name']}` , position 1" in refused.text
    forged = {"role": "model", "parts": [{**bare["parts"][0], "thoughtSignature": "AAAA"}]}
    assert "Corrupted thought signature" in post(llm, GEMINI, gemini(
        [user, forged, result])).text
    # an earlier turn is not checked; Google's documented placeholder passes, and is seen
    later = [user, bare, result, {"role": "user", "parts": [{"text": "Day 3 of 30."}]}]
    assert post(llm, GEMINI, gemini(later)).status_code == 200
    placeholder = {"role": "model", "parts": [{**bare["parts"][0],
                                               "thoughtSignature": "skip_thought_signature_validator"}]}
    before = len(llm.placeholders)
    assert post(llm, GEMINI, gemini([user, placeholder, result])).status_code == 200
    assert llm.placeholders[before:] == ["skip_thought_signature_validator"]


def test_gemini_refuses_an_empty_text_part(llm):
    empty = [{"role": "user", "parts": [{"text": "Day 1"}]},
             {"role": "model", "parts": [{"text": ""}]},
             {"role": "user", "parts": [{"text": "go on"}]}]
    refused = post(llm, GEMINI, gemini(empty, thinking=False))
    assert refused.status_code == 400 and "contents[1].parts[0].data: required oneof field " \
                                          "'data' must have one initialized field" in refused.text


@pytest.mark.parametrize("over, said", [
    ({"max_tokens": 512}, "Use 'max_completion_tokens' instead"),
    ({"max_completion_tokens": 512, "temperature": 0.2}, "Only the default (1) value"),
    ({"max_completion_tokens": 512, "reasoning_effort": "extreme"}, "Invalid value: 'extreme'"),
])
def test_openai_reasoning_models_refuse_what_they_do_not_take(llm, over, said):
    body = {"model": "o4-mini", "messages": [{"role": "user", "content": "Day 1 of 3."}],
            **over}
    refused = post(llm, "/v1/chat/completions", body)
    assert refused.status_code == 400 and said in refused.json()["error"]["message"]


def test_openai_reasoning_tokens_are_reported_as_output(llm):
    body = {"model": "o4-mini", "messages": [{"role": "user", "content": "Day 1 of 3."}],
            "max_completion_tokens": 512, "reasoning_effort": "high"}
    usage = post(llm, "/v1/chat/completions", body).json()["usage"]
    reasoning = usage["completion_tokens_details"]["reasoning_tokens"]
    assert reasoning > 0 and usage["completion_tokens"] > reasoning
