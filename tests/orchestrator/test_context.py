"""The rolling context window (design §3, "Rolling context")."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from vendbench.orchestrator._context import OMITTED, Carried, ContextOverflow, RollingContext

from .conftest import model, query, run


async def count(messages: list[dict]) -> list[int]:
    return [len(json.dumps(m)) // 4 for m in messages]


def make(system: str, limit: int, **options) -> RollingContext:
    return asyncio.run(RollingContext.create(system, limit, count, **options))


def add_user(ctx: RollingContext, text: str) -> None:
    asyncio.run(ctx.add_user(text))


def add_exchange(ctx: RollingContext, assistant: dict, results: list[dict]) -> None:
    asyncio.run(ctx.add_exchange(assistant, results))


def exchange(i: int, n_results: int = 2, size: int = 200) -> tuple[dict, list[dict]]:
    calls = [{"id": f"c{i}_{j}", "type": "function",
              "function": {"name": "list_machines", "arguments": "{}"}} for j in range(n_results)]
    return ({"role": "assistant", "tool_calls": calls},
            [{"role": "tool", "tool_call_id": f"c{i}_{j}", "content": "x" * size}
             for j in range(n_results)])


def paired(messages: list[dict]) -> bool:
    """Every tool result travels with the assistant message that called it."""
    calls = {c["id"] for m in messages if m["role"] == "assistant"
             for c in m.get("tool_calls", [])}
    return {m["tool_call_id"] for m in messages if m["role"] == "tool"} <= calls


def play(ctx: RollingContext, steps: int, seed: int = 7, scale: float = 1.0):
    """A random conversation: reports and exchanges of varied sizes; yields each window
    after each new unit."""
    rng = random.Random(seed)
    for i in range(steps):
        if i % 5 == 0:
            add_user(ctx, f"Day {i // 5 + 1} report " + "r" * rng.randint(50, 600))
        else:
            add_exchange(ctx, *exchange(i, rng.randint(1, 3), rng.randint(20, 900)))
        yield ctx.window(scale=scale)


def test_block_requests_only_grow_between_evictions_and_stay_within_the_limit():
    limit, low = 3000, 0.5
    ctx = make("rules " * 50, limit, fixed_tokens=300, low_water=low)
    previous, evictions = None, 0
    for w in play(ctx, 400):
        bodies = [m.body for m in w.messages]
        assert w.tokens == 300 + sum(m.tokens for m in w.messages)   # note and tools counted
        assert w.tokens <= limit and paired(bodies) and bodies[0]["role"] == "system"
        assert bodies[1]["role"] == "user"                # the note, or the first report
        if previous is not None and w.dropped == 0:
            # byte-identical prefix: the previous request, then only new messages
            assert json.dumps(bodies[:len(previous)]) == json.dumps(previous)
        elif previous is not None:
            evictions += 1
            assert bodies[1]["content"] == OMITTED
            # dropped down to the low-water mark, except the newest unit (just added)
            newest = sum(m.tokens for m in ctx.units[-1])
            assert w.tokens - newest <= low * limit
        previous = bodies
    assert evictions >= 5


def test_sliding_drops_one_exchange_at_a_time_just_enough_to_fit():
    limit = 3000
    ctx = make("rules " * 50, limit, fixed_tokens=300, strategy="sliding")
    changed = 0
    for w in play(ctx, 400):
        assert w.tokens <= limit and paired([m.body for m in w.messages])
        if ctx.start > 0:
            # the unit just before the window would not have fitted: nothing dropped early
            assert ctx.size(ctx.start - 1) > limit
            changed += w.dropped > 0
    assert changed > 100                                  # the prefix moved on most requests


def test_the_window_scales_our_count_by_the_calibration():
    ctx = make("rules", 3000, fixed_tokens=300)
    for w in play(ctx, 200, scale=1.5):
        assert w.tokens * 1.5 <= 3000


def test_the_note_is_counted_inside_the_limit():
    """A window that fits only without the note must shed one more exchange."""
    ctx = make("rules", 10_000, strategy="sliding")
    add_user(ctx, "Day 1")
    for i in range(4):
        add_exchange(ctx, *exchange(i, 1))
    sizes = [sum(m.tokens for m in u) for u in ctx.units]
    fixed = ctx.system.tokens
    limit = fixed + sum(sizes[1:])             # units 1.. fit exactly, but not with the note
    w = ctx.window(limit=limit)
    assert w.messages[1].body["content"] == OMITTED and w.tokens <= limit
    assert ctx.start == 2


def test_cache_points_mark_the_static_prefix_and_the_ends_of_requests():
    ctx = make("rules", 10_000)
    add_user(ctx, "Day 1")
    first = ctx.window()
    assert first.cache_points == (0, 1)                  # system; this request's end
    add_exchange(ctx, *exchange(1, 2))
    second = ctx.window()
    assert second.cache_points == (0, 1, 4)              # system; the previous end; this end
    sliding = make("rules", 600, strategy="sliding")
    add_user(sliding, "Day 1")
    for i in range(6):
        add_exchange(sliding, *exchange(i, 1, size=800))
        w = sliding.window()
    # the prefix moved: nothing of the previous request to read, its own end to write
    assert sliding.start > 0 and w.dropped and w.cache_points == (0, len(w.messages) - 1)


def test_evict_drops_to_the_low_water_mark():
    ctx = make("rules", 4000, low_water=0.25)
    add_user(ctx, "Day 1")
    for i in range(10):
        add_exchange(ctx, *exchange(i, 1, size=1200))
    assert ctx.window().dropped == 0 and ctx.start == 0
    assert ctx.evict() > 0 and ctx.size() <= 1000
    assert ctx.window().messages[1].body["content"] == OMITTED


def test_each_message_gets_one_id_and_is_reported_once():
    ctx = make("rules", 10_000)
    first = ctx.take_new()
    add_user(ctx, "Day 1")
    add_exchange(ctx, *exchange(1))
    new = ctx.take_new()
    assert [m.id for m in first] == [0, 1] and [m.id for m in new] == [2, 3, 4, 5]
    assert ctx.take_new() == []


@pytest.mark.parametrize("strategy", ["block", "sliding"])
def test_a_restored_context_goes_on_exactly_as_the_original(strategy):
    """A resumed trial rebuilds its context from the stored messages and the last window
    sent: from there, every window equals the one the uninterrupted context makes."""
    from vendbench.orchestrator._context import Message

    original = make("rules " * 50, 2500, strategy=strategy)
    stored: list[Message] = []
    windows = play(original, 40)
    for _ in range(25):
        last = next(windows)
    stored = [m for m in original.take_new()]
    assert last.dropped or original.start > 0              # it has evicted by now
    restored = make("rules " * 50, 2500, strategy=strategy)
    restored.restore([Message(m.id, json.loads(json.dumps(m.body)), m.tokens)
                      for m in stored], [m.id for m in last.messages])
    assert [[m.id for m in u] for u in restored.units] == \
        [[m.id for m in u] for u in original.units]
    assert restored.start == original.start and restored.take_new() == []
    for step, (a, b) in enumerate(zip(play(original, 15, seed=3), play(restored, 15, seed=3))):
        assert [m.id for m in a.messages] == [m.id for m in b.messages], step
        assert [m.body for m in a.messages] == [m.body for m in b.messages], step
        assert (a.tokens, a.cache_points, a.dropped) == (b.tokens, b.cache_points, b.dropped)
    assert [m.id for m in restored.take_new()] == [m.id for m in original.take_new()]


def test_restore_refuses_a_conversation_from_another_system_prompt():
    from vendbench.orchestrator._context import Message

    old = make("old rules", 2000)
    add_user(old, "Day 1 report")
    messages = old.take_new()
    new = make("new rules", 2000)
    with pytest.raises(ValueError) as err:
        new.restore([Message(m.id, m.body, m.tokens) for m in messages], [0, 2])
    assert str(err.value) == "stored message 0 differs from this code's (the system prompt " \
                             "changed?)"


async def exact(messages: list[dict]) -> list[int]:
    """A count that is the content's length: sizes the tests can hit exactly."""
    return [len(m.get("content") or "") for m in messages]


def test_eviction_stops_exactly_at_the_target_and_reports_what_went():
    ctx = asyncio.run(RollingContext.create("s" * 100, 1000, exact, 200, low_water=0.5))
    note = len(OMITTED)                    # 135: counted once units have gone
    for _ in range(140):                   # 200 tools + 100 system + 140 × 5 = 1000: fits
        add_user(ctx, "u" * 5)
    w = ctx.window()
    assert (w.tokens, w.dropped, ctx.start) == (1000, 0, 0)
    add_user(ctx, "u" * 5)                 # 1005: evict down to 500, the low-water mark
    w = ctx.window()
    # 300 fixed + the note leave 65 for units of 5: 13 stay, exactly at the mark
    assert (w.dropped, ctx.start, w.tokens) == (128, 128, 300 + note + 13 * 5) and \
        w.tokens == 500
    assert w.messages[1].body["content"] == OMITTED and len(w.messages) == 2 + 13
    for _ in range(100):                   # grow back to the limit: 500 + 100 × 5 = 1000
        add_user(ctx, "u" * 5)
    w = ctx.window()
    assert (w.dropped, w.tokens) == (0, 1000)
    add_user(ctx, "u" * 5)                 # over again: the second eviction reports only
    w = ctx.window()                       # what it dropped itself (114 − 13 units)
    assert (w.dropped, ctx.start, w.tokens) == (101, 229, 500)


def test_a_window_exactly_at_the_limit_is_not_evicted_and_one_over_is():
    ctx = asyncio.run(RollingContext.create("s" * 100, 1000, exact, 200, strategy="sliding"))
    for _ in range(7):
        add_user(ctx, "u" * 100)
    assert ctx.window().dropped == 0 and ctx.size() == 1000
    add_user(ctx, "u")                     # 1001: the oldest go, just enough (the note
    w = ctx.window()                       # that says so costs 135 more)
    assert (w.dropped, w.tokens) == (2, 300 + len(OMITTED) + 500 + 1)


def test_dropping_a_single_unit_brings_the_note():
    ctx = asyncio.run(RollingContext.create("s" * 100, 1000, exact, strategy="sliding"))
    for _ in range(3):
        add_user(ctx, "u" * 300)
    add_user(ctx, "u")                     # 1001: the oldest 300 go, the note comes in
    w = ctx.window()
    assert (w.dropped, ctx.start) == (1, 1) and w.messages[1].body["content"] == OMITTED
    assert w.tokens == 100 + len(OMITTED) + 600 + 1


def test_the_limit_applies_to_the_servers_count():
    """Our count × the calibration must fit: a window that fits at our count can
    overflow at the server's, and the message gives the server's count."""
    ctx = asyncio.run(RollingContext.create("s", 1000, exact))
    add_user(ctx, "u" * 600)
    assert ctx.window(scale=1.0).tokens == 601
    with pytest.raises(ContextOverflow) as err:
        ctx.window(scale=2.0)              # 1,202 server tokens for a 1,000 limit
    assert str(err.value) == (
        "the newest exchange alone makes a prompt of about 1,202 tokens (as the server counts "
        "them) but the context leaves 1,000 for the prompt")


@pytest.mark.parametrize("low_water,ok", [(0.0, False), (0.01, True), (0.99, True),
                                          (1.0, False), (1.5, False)])
def test_the_low_water_mark_is_a_share_strictly_between_0_and_1(low_water, ok):
    if ok:
        asyncio.run(RollingContext.create("s", 1000, exact, low_water=low_water))
        return
    with pytest.raises(ValueError, match="^low_water is a share of the limit, between 0 and 1$"):
        asyncio.run(RollingContext.create("s", 1000, exact, low_water=low_water))


def test_an_unknown_strategy_is_named():
    with pytest.raises(ValueError) as err:
        asyncio.run(RollingContext.create("s", 1000, exact, strategy="lru"))
    assert str(err.value) == "unknown context strategy 'lru'; use one of ('block', 'sliding', 'compact')"


def test_the_newest_exchange_is_never_evicted_even_when_the_note_would_fit():
    ctx = asyncio.run(RollingContext.create("s", 500, exact))
    add_user(ctx, "u" * 100)
    add_user(ctx, "u" * 600)               # alone it overflows; the note alone would fit
    with pytest.raises(ContextOverflow, match=f"about {1 + len(OMITTED) + 600} tokens"):
        ctx.window()


@pytest.mark.parametrize("last_window", ["none", "first"])
def test_restore_before_any_eviction_or_any_request(last_window):
    """A trial cut off before its first request (no window sent) or before any eviction:
    the window starts at the first unit, and sizes are those of the original."""
    from vendbench.orchestrator._context import Message

    original = asyncio.run(RollingContext.create("s" * 100, 5000, exact, 200))
    add_user(original, "Day 1 " + "r" * 94)
    add_exchange(original, *exchange(1, 2, 50))
    sent = original.window() if last_window == "first" else None
    stored = original.take_new()
    restored = asyncio.run(RollingContext.create("s" * 100, 5000, exact, 200))
    user_only = [Message(m.id, m.body, m.tokens) for m in stored if m.id > 1]   # no fixed ones
    restored.restore(user_only, [m.id for m in sent.messages] if sent else [])
    assert restored.start == 0 and restored.size() == original.size() == 200 + 100 + 100 + 100
    w = restored.window()
    assert [m.id for m in w.messages] == [m.id for m in original.window().messages]


def test_an_exchange_larger_than_the_limit_is_an_overflow():
    for strategy in ("block", "sliding"):
        ctx = make("rules", 50, strategy=strategy)
        add_user(ctx, "x" * 1000)
        with pytest.raises(ContextOverflow, match="leaves .* for the prompt"):
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


@pytest.mark.parametrize("strategy", ["block", "sliding"])
def test_every_request_leaves_room_for_the_tools_and_the_reply(tmp_path, strategy):
    """A server that counts exactly as we do, whose context is max_context_tokens and
    which refuses any request whose prompt plus max_tokens does not fit (as OpenAI does):
    the window must leave room for the tool schemas and the whole output allowance, and
    still come close to the limit (so that the test would see a window that forgets
    either)."""
    from vendbench.providers import TokenCounter

    from ..fakellm import FakeLLM

    counter = TokenCounter("openai/fake-model")
    limit, output = 6_000, 800
    with FakeLLM(count_message=lambda m: counter.count_now([m])[0],
                 count_tools=lambda t: counter.tools(t) if t else 0,
                 context_window=limit, context_error="openai") as llm:
        db = str(tmp_path / "r.duckdb")
        result = run(db, days=30, models=[model(llm, max_context_tokens=limit,
                                                 max_output_tokens=output,
                                                 context_strategy=strategy)])
        prompts = [u["prompt_tokens"] for u in llm.usages]
    assert result.as_json()["trials"][0]["status"] == "completed"
    assert query(db, "SELECT count(*) FROM exchanges WHERE status <> 'ok'") == [(0,)]
    assert max(prompts) + output <= limit                     # never refused, never over
    assert max(prompts) + output > limit - output / 2, max(prompts)   # and tight: it filled up
    assert min(prompts) > counter.tools(json.loads(query(
        db, "SELECT tools_json FROM runs")[0][0]))               # the schemas travel each time


def test_counts_are_litellms_plus_chat_framing():
    import litellm

    from vendbench.providers._tokens import TokenCounter, message_texts

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

    from vendbench.providers._tokens import TokenCounter

    texts = ["", "héllo wörld ✓", "<|endoftext|> and <|im_start|>", json.dumps(
        {"rows": [{"product_id": f"P{i:04d}", "units": i} for i in range(4000)]})]
    for name in ("openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5"):
        counter = TokenCounter(name)
        for text in texts:
            got = asyncio.run(counter.count([{"role": "user", "content": text}]))[0]
            assert got == litellm.token_counter(model=name, text=text) + 4, (name, text[:30])


@pytest.mark.parametrize("turn_only", [True, False])
def test_what_replies_carry_back_counts_as_the_provider_counts_it(turn_only):
    """design §24.1: a reply's thinking is sent back with it and counted apart: Anthropic
    counts only the current turn's (since the last user message), others wherever sent."""
    async def carried(messages: list[dict]) -> list[int]:
        return [100 if m.get("thinking_blocks") else 0 for m in messages]

    ctx = make("s" * 40, 100_000, carried=Carried(carried, turn_only))
    add_user(ctx, "day 1")
    base = ctx.window().tokens
    thinking = [{"type": "thinking", "thinking": "t", "signature": "x"}]
    for i in range(2):                    # two steps in one turn: both count
        assistant, results = exchange(i)
        add_exchange(ctx, {**assistant, "thinking_blocks": thinking}, results)
    core = sum(m.tokens for unit in ctx.units for m in unit) - ctx.units[0][0].tokens
    assert ctx.window().tokens == base + core + 200
    add_user(ctx, "day 2")                # a new turn: the old thinking is stripped
    new_turn = ctx.window().tokens
    day2 = ctx.units[-1][0].tokens
    assert new_turn == base + core + day2 + (0 if turn_only else 200)
    # a resumed trial counts the same from the stored counts
    restored = make("s" * 40, 100_000, carried=Carried(carried, turn_only))
    stored = [ctx.system, ctx.omitted, *(m for unit in ctx.units for m in unit)]
    restored.restore(stored, [m.id for m in stored if m is not ctx.omitted])
    assert restored.window().tokens == new_turn
