"""The rolling context window (SPEC §3, "Rolling context")."""

from __future__ import annotations

import asyncio
import json

import pytest

from vendbench.orchestrator._context import OMITTED, ContextOverflow, RollingContext

from .conftest import model, query, run


async def count(messages: list[dict]) -> list[int]:
    return [len(json.dumps(m)) // 4 for m in messages]


def make(system: str, limit: int) -> RollingContext:
    return asyncio.run(RollingContext.create(system, limit, count))


def add_user(ctx: RollingContext, text: str) -> None:
    asyncio.run(ctx.add_user(text))


def add_exchange(ctx: RollingContext, assistant: dict, results: list[dict]) -> None:
    asyncio.run(ctx.add_exchange(assistant, results))


def exchange(i: int, n_results: int = 2) -> tuple[dict, list[dict]]:
    calls = [{"id": f"c{i}_{j}", "type": "function",
              "function": {"name": "list_machines", "arguments": "{}"}} for j in range(n_results)]
    return ({"role": "assistant", "tool_calls": calls},
            [{"role": "tool", "tool_call_id": f"c{i}_{j}", "content": "x" * 200}
             for j in range(n_results)])


def test_window_keeps_whole_exchanges_within_the_limit():
    ctx = make("rules " * 50, 600)
    for day in range(1, 6):
        add_user(ctx, f"Day {day} report " + "r" * 100)
        for i in range(3):
            add_exchange(ctx, *exchange(day * 10 + i))
    window, tokens = ctx.window()
    assert tokens <= 600 and window[0].body["role"] == "system"
    assert window[1].body["role"] == "user"               # never starts mid-exchange
    ids = {m.body.get("tool_call_id") for m in window if m.body["role"] == "tool"}
    calls = {c["id"] for m in window if m.body["role"] == "assistant"
             for c in m.body.get("tool_calls", [])}
    assert ids == calls                                    # no result without its call
    assert window[-1].body["role"] == "tool"               # the newest exchange is in
    assert len(window) < 1 + 5 * 7                         # older ones fell out


def test_a_note_replaces_what_fell_out_when_the_window_starts_mid_day():
    ctx = make("rules", 400)
    add_user(ctx, "Day 1")
    for i in range(6):
        add_exchange(ctx, *exchange(i, 1))
    window, _ = ctx.window()
    assert window[1].body["content"] == OMITTED


def test_each_message_gets_one_id_and_is_reported_once():
    ctx = make("rules", 10_000)
    first = ctx.take_new()
    add_user(ctx, "Day 1")
    add_exchange(ctx, *exchange(1))
    new = ctx.take_new()
    assert [m.id for m in first] == [0, 1] and [m.id for m in new] == [2, 3, 4, 5]
    assert ctx.take_new() == []


def test_an_exchange_larger_than_the_limit_is_an_error():
    ctx = make("rules", 50)
    add_user(ctx, "x" * 1000)
    with pytest.raises(ContextOverflow, match="raise max_context_tokens"):
        ctx.window()


def test_requests_respect_the_model_limit_end_to_end(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    run(db, days=12, models=[model(llm, max_context_tokens=5000, max_output_tokens=512)])
    counted = [len(json.dumps(r["messages"])) for r in llm.requests]
    assert max(counted[-5:]) < 2.2 * min(counted[-5:])      # bounded, not growing
    sizes = query(db, "SELECT max(len(json_extract(request_json, '$.message_ids')::INT[])) "
                      "FROM exchanges")
    assert sizes[0][0] < 30
    for r in llm.requests:                                   # never a result without its call
        calls = {c["id"] for m in r["messages"] if m["role"] == "assistant"
                 for c in m.get("tool_calls", [])}
        assert {m["tool_call_id"] for m in r["messages"] if m["role"] == "tool"} <= calls


def test_counts_are_litellms_plus_chat_framing():
    import litellm

    from vendbench.orchestrator._tokens import TokenCounter, message_texts

    counter = TokenCounter("openai/gpt-4.1-mini")
    assistant, results = exchange(1, 2)
    counts = asyncio.run(counter.count([assistant, *results]))
    text, framing = message_texts(assistant)
    assert framing == 4 + 8 * 2 and "list_machines" in text
    assert counts[0] == litellm.token_counter(model="openai/gpt-4.1-mini", text=text) + 20
    assert counts[1] == counts[2] == litellm.token_counter(
        model="openai/gpt-4.1-mini", text=results[0]["content"]) + 4


def test_counts_match_litellms_token_counter_on_long_and_odd_texts():
    """The counting function resolved once agrees with litellm.token_counter, for two
    tokenizer families, on empty, non-ASCII, special-token-like and long texts."""
    import litellm

    from vendbench.orchestrator._tokens import TokenCounter

    texts = ["", "héllo wörld ✓", "<|endoftext|> and <|im_start|>", json.dumps(
        {"rows": [{"product_id": f"P{i:04d}", "units": i} for i in range(4000)]})]
    for name in ("openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5"):
        counter = TokenCounter(name)
        for text in texts:
            got = asyncio.run(counter.count([{"role": "user", "content": text}]))[0]
            assert got == litellm.token_counter(model=name, text=text) + 4, (name, text[:30])
