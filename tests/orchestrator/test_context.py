"""The rolling context window (SPEC §3, "Rolling context")."""

from __future__ import annotations

import json

import pytest

from vendbench.orchestrator._context import OMITTED, ContextOverflow, RollingContext

from .conftest import model, query, run


def count(message: dict) -> int:
    return len(json.dumps(message)) // 4


def exchange(i: int, n_results: int = 2) -> tuple[dict, list[dict]]:
    calls = [{"id": f"c{i}_{j}", "type": "function",
              "function": {"name": "list_machines", "arguments": "{}"}} for j in range(n_results)]
    return ({"role": "assistant", "tool_calls": calls},
            [{"role": "tool", "tool_call_id": f"c{i}_{j}", "content": "x" * 200}
             for j in range(n_results)])


def test_window_keeps_whole_exchanges_within_the_limit():
    ctx = RollingContext("rules " * 50, limit_tokens=600, count=count)
    for day in range(1, 6):
        ctx.add_user(f"Day {day} report " + "r" * 100)
        for i in range(3):
            ctx.add_exchange(*exchange(day * 10 + i))
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
    ctx = RollingContext("rules", limit_tokens=400, count=count)
    ctx.add_user("Day 1")
    for i in range(6):
        ctx.add_exchange(*exchange(i, 1))
    window, _ = ctx.window()
    assert window[1].body["content"] == OMITTED


def test_each_message_gets_one_id_and_is_reported_once():
    ctx = RollingContext("rules", limit_tokens=10_000, count=count)
    first = ctx.take_new()
    ctx.add_user("Day 1")
    ctx.add_exchange(*exchange(1))
    new = ctx.take_new()
    assert [m.id for m in first] == [0, 1] and [m.id for m in new] == [2, 3, 4, 5]
    assert ctx.take_new() == []


def test_an_exchange_larger_than_the_limit_is_an_error():
    ctx = RollingContext("rules", limit_tokens=50, count=count)
    ctx.add_user("x" * 1000)
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
