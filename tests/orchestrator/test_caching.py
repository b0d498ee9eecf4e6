"""Cache-aware context and provider prompt caching through litellm's real provider
paths: OpenAI chat completions and Anthropic Messages (design §6.1, §6.2)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from vendbench.budgets import Price
from vendbench.leaderboard import build
from vendbench.orchestrator._context import OMITTED
from vendbench.providers import TokenCounter

from .conftest import claude, model, query, run


def our_count(request: dict) -> int:
    """Our count of a request as the server received it (OpenAI format)."""
    counter = TokenCounter("openai/fake-model")
    return sum(counter.count_now(request["messages"])) + counter.tools(request["tools"])


def paired(messages: list[dict]) -> bool:
    calls = {c["id"] for m in messages if m["role"] == "assistant"
             for c in m.get("tool_calls", [])}
    return {m["tool_call_id"] for m in messages if m["role"] == "tool"} <= calls


def test_block_requests_extend_the_previous_one_byte_for_byte(llm, tmp_path):
    """What the server received: between evictions each request's messages begin with
    the previous request's, byte for byte; at an eviction the window drops to the
    low-water mark and starts with the note; no request exceeds the limit, note and tool
    schemas included; no tool result travels without its call."""
    limit, output = 8_000, 512
    run(str(tmp_path / "r.duckdb"), days=25,
        models=[model(llm, max_context_tokens=limit, max_output_tokens=output)])
    requests = llm.requests
    evictions = 0
    for i, (before, after) in enumerate(zip(requests, requests[1:])):
        prev, cur = before["messages"], after["messages"]
        # the bytes on the wire up to the end of the previous request's last message
        head = llm.raw[i][:llm.raw[i].index(b'"messages":[') + len(json.dumps(
            prev, separators=(",", ":"), ensure_ascii=False).encode()) + len('"messages":') - 1]
        assert head.endswith(b"}") and llm.raw[i].startswith(head)
        if llm.raw[i + 1].startswith(head):
            continue                                          # it only grew at its end
        evictions += 1
        assert cur[1] == {"role": "user", "content": OMITTED}
        assert our_count(after) <= 0.5 * (limit - output) + 2_500   # low water + newest
    assert evictions >= 3
    for r in requests:
        assert our_count(r) <= limit - output and paired(r["messages"])
        assert r["messages"][0]["role"] == "system" and r["messages"][1]["role"] == "user"


def test_sliding_changes_the_prefix_on_most_requests_once_full(llm, tmp_path):
    run(str(tmp_path / "r.duckdb"), days=25,
        models=[model(llm, max_context_tokens=8_000, context_strategy="sliding")])
    changed = sum(json.dumps(b["messages"][:len(a["messages"])]) != json.dumps(a["messages"])
                  for a, b in zip(llm.requests, llm.requests[1:]))
    assert changed > len(llm.requests) // 3
    assert all(our_count(r) <= 8_000 - 512 and paired(r["messages"]) for r in llm.requests)


def test_openai_requests_carry_the_trial_as_prompt_cache_key(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=6, seeds=[1, 2], models=[model(llm)])
    trial_ids = {t["trial_id"] for t in result.as_json()["trials"]}
    assert {r["prompt_cache_key"] for r in llm.requests} == trial_ids
    assert all(r["tool_choice"] == "auto" for r in llm.requests)
    # the emulated cache answered: reads are stored per exchange and summed per trial
    rows = query(db, """SELECT t.input_tokens, t.cache_read_tokens, sum(e.input_tokens),
                               sum(e.cache_read_tokens) FROM trials t JOIN exchanges e
                        USING (trial_id) GROUP BY ALL""")
    for total, read, summed_total, summed_read in rows:
        assert (total, read) == (summed_total, summed_read) and 0.5 < read / total < 1
    for t in result.as_json()["trials"]:
        assert t["cached_share"] == t["cache_read_tokens"] / t["input_tokens"]


def test_anthropic_gets_at_most_four_cache_markers_in_the_right_places(llm, tmp_path):
    run(str(tmp_path / "r.duckdb"), days=6, models=[claude(llm)])
    assert set(llm.paths) == {"/v1/messages"}
    previous_last = None
    for body in llm.requests:
        blocks = [b for m in body["messages"] for b in m["content"]]
        marked = [b for b in blocks if "cache_control" in b]
        marked += [b for b in body["system"] if "cache_control" in b]
        assert 2 <= len(marked) <= 4
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}   # static prefix
        assert "cache_control" in blocks[-1]                    # written for the next one
        if previous_last is not None:
            # the end of the previous request is marked again: read, not written anew
            match = [b for b in blocks if {k: v for k, v in b.items()
                                           if k != "cache_control"} == previous_last]
            assert match and "cache_control" in match[0]
        previous_last = {k: v for k, v in blocks[-1].items() if k != "cache_control"}
        assert "prompt_cache_key" not in body


def test_anthropic_usage_is_stored_and_every_cost_recomputes_from_it(llm, tmp_path):
    """Reads and writes as Anthropic reports them, through litellm's mapping; every
    exchange's cost equals a recomputation from its stored usage and the stored price."""
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=8, seeds=[1, 2], models=[
        claude(llm), model(llm, cache_read_usd_per_mtok="0.1")])
    assert {t["status"] for t in result.as_json()["trials"]} == {"completed"}
    sent = [u for u, p in zip(llm.usages, llm.paths) if p == "/v1/messages"]
    stored = query(db, """SELECT input_tokens, cache_read_tokens, cache_write_tokens
                          FROM exchanges WHERE model LIKE 'anthropic/%' ORDER BY sent_at""")
    assert sorted((u["input_tokens"] + u["cache_read_input_tokens"]
                   + u["cache_creation_input_tokens"], u["cache_read_input_tokens"],
                   u["cache_creation_input_tokens"]) for u in sent) == sorted(stored)
    assert sum(r[2] for r in stored) > 0 and sum(r[1] for r in stored) > 0
    prices = {m: Price.from_json(p) for m, p in
              json.loads(query(db, "SELECT prices_json FROM runs")[0][0]).items()}
    assert prices["anthropic/claude-sonnet-4-5"].cache_write == Decimal("3.75")
    rows = query(db, """SELECT model, input_tokens, output_tokens, cache_read_tokens,
                               cache_write_tokens, reasoning_tokens, cost_usd FROM exchanges""")
    for m, i, o, read, write, reasoning, cost in rows:
        assert cost == prices[m].cost(i, o, read, write, reasoning)
    assert sum(r[6] for r in rows) == query(db, "SELECT sum(cost_usd) FROM trials")[0][0]
    # OpenAI-style cache reads (prompt_tokens_details.cached_tokens) at the cache rate: a
    # read token costs a quarter of a plain one here, and the cost shows it
    cached = [r for r in rows if r[0] == "openai/fake-model" and r[3] > 0]
    assert cached, "the server's prefix cache was never hit"
    for m, i, o, read, write, reasoning, cost in cached:
        plain = Price(Decimal("0.4"), Decimal("1.6")).cost(i, o)
        assert cost == plain - read * (Decimal("0.4") - Decimal("0.1")) / 1_000_000 < plain


def test_no_prompt_caching_sends_neither_markers_nor_key(llm, tmp_path):
    run(str(tmp_path / "r.duckdb"), days=3, models=[
        claude(llm, prompt_caching=False), model(llm, prompt_caching=False)])
    assert len(llm.requests) >= 12
    for body in llm.requests:
        assert "cache_control" not in json.dumps(body) and "prompt_cache_key" not in body


def test_block_caches_more_and_costs_less_than_sliding_on_anthropic(tmp_path):
    from ..fakellm import FakeLLM

    shares, costs = {}, {}
    for strategy in ("block", "sliding"):
        with FakeLLM() as llm:
            db = str(tmp_path / f"{strategy}.duckdb")
            out = run(db, days=30, models=[claude(llm, max_context_tokens=8_000,
                                                  context_strategy=strategy)])
            trial = out.as_json()["trials"][0]
            shares[strategy], costs[strategy] = trial["cached_share"], trial["cost_usd"]
    assert shares["block"] > 0.8 > shares["sliding"]
    assert costs["block"] < 0.6 * costs["sliding"]


def test_the_leaderboard_shows_the_cached_share(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    run(db, days=4, seeds=[1, 2], models=[claude(llm), {"id": "baseline/order-up-to"}])
    rows = {r.model: r for r in build(db).rows}
    trials = query(db, "SELECT sum(input_tokens), sum(cache_read_tokens) FROM trials "
                       "WHERE model LIKE 'anthropic/%'")[0]
    assert rows["anthropic/claude-sonnet-4-5"].cached_share == pytest.approx(
        trials[1] / trials[0])
    assert rows["baseline/order-up-to"].cached_share is None


def test_anthropic_rate_limits_and_overload_are_retried_and_not_billed(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("429", retry_after=0.2)
    llm.inject("529")
    result = run(db, days=2, models=[claude(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    rows = query(db, "SELECT attempt, status, cost_usd, error FROM exchanges WHERE seq = 1 "
                     "ORDER BY attempt")
    assert [r[:2] for r in rows] == [(1, "rate_limit"), (2, "transient"), (3, "ok")]
    assert rows[0][2] == rows[1][2] == 0 and rows[2][2] > 0
    assert "529" in rows[1][3] or "verloaded" in rows[1][3]
    waited = query(db, "SELECT max(sent_at) FILTER (WHERE attempt = 2) - "
                       "min(sent_at) FILTER (WHERE attempt = 1) FROM exchanges WHERE seq = 1")
    assert waited[0][0].total_seconds() >= 0.2                 # Retry-After honoured
    assert query(db, "SELECT retry_after FROM provider_events WHERE event = 'rate_limited'"
                 ) == [(0.2,)]


def test_deepseek_cache_hits_arrive_as_litellm_maps_them(tmp_path, monkeypatch, api_key):
    """An implicitly caching provider: no key and no marks are sent, and its own usage
    fields (prompt_cache_hit_tokens) come back as cache reads."""
    from ..fakellm import FakeLLM

    monkeypatch.setenv("DEEPSEEK_API_KEY", api_key)
    with FakeLLM(usage_style="deepseek") as llm:
        db = str(tmp_path / "r.duckdb")
        run(db, days=4, models=[model(llm, "deepseek/deepseek-chat")])
        assert all("prompt_cache_key" not in b and "cache_control" not in json.dumps(b)
                   for b in llm.requests)
        hits = sorted(u["prompt_cache_hit_tokens"] for u in llm.usages)
        stored = sorted(r[0] for r in query(db, "SELECT cache_read_tokens FROM exchanges"))
        assert hits == stored and sum(hits) > 0
