"""Flow control on a controllable clock: Retry-After waits, the shared pause after a 429,
and AIMD's decrease and increase (design §3 "Retries", "Adaptive concurrency").

The waits are measured, not slept: the retry loop and the limit get a clock and a sleep
that only advance a counter, so a 7.5 s Retry-After costs the test nothing and its
length can be checked exactly. The requests themselves go over HTTP to the test server.
"""

from __future__ import annotations

import asyncio
import os
from decimal import Decimal

import pytest

from vendbench.budgets import Budget, Price
from vendbench.providers import AdaptiveLimit, CompletionRequest, ModelClient, RateLimits, \
    make_provider

from ..fakellm import FakeLLM

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


class Clock:
    """Monotonic time that moves only when someone sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)


def request(llm: FakeLLM) -> CompletionRequest:
    return CompletionRequest(model="openai/fake", api_base=llm.url, max_tokens=64,
                             messages=[{"role": "user", "content": "Day 2 of 3"}],
                             tools=[], timeout_s=5)


async def complete(client: ModelClient, llm: FakeLLM) -> list:
    attempts = []

    async def on_attempt(a):
        attempts.append(a)

    await client.complete(request(llm), Budget("trial", Decimal("1")), 50, on_attempt)
    return attempts


@pytest.fixture
def llm(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key-0000")
    with FakeLLM() as server:
        yield server


def test_a_retry_waits_the_retry_after_the_server_gave(llm):
    clock = Clock()
    llm.inject("429", times=2, retry_after=7.5)
    client = ModelClient(make_provider("openai/fake"), Price(Decimal("1"), Decimal("1")),
                         AdaptiveLimit("fake", 8, clock=clock, sleep=clock.sleep),
                         RateLimits(), max_attempts=4, backoff_s=0.01, sleep=clock.sleep)
    attempts = asyncio.run(complete(client, llm))
    assert [a.failure.kind.value if a.failure else "ok" for a in attempts] == \
        ["rate_limit", "rate_limit", "ok"]
    assert [a.failure.retry_after for a in attempts[:2]] == [7.5, 7.5]
    retries = [s for s in clock.sleeps if s > 0]
    assert len(retries) == 2                        # the retry loop's two waits
    assert all(7.5 <= s <= 7.5 * 1.1 for s in retries), retries   # never sooner, ≤ 10 % jitter


def test_without_retry_after_the_retry_backs_off_exponentially(llm):
    clock = Clock()
    llm.inject("500", times=3)
    client = ModelClient(make_provider("openai/fake"), Price(Decimal("1"), Decimal("1")),
                         AdaptiveLimit("fake", 8, clock=clock, sleep=clock.sleep),
                         RateLimits(), max_attempts=4, backoff_s=2.0, sleep=clock.sleep)
    asyncio.run(complete(client, llm))
    waits = [s for s in clock.sleeps if s > 0]
    # tenacity's exponential backoff with jitter: 2·2^n plus up to 2 s of jitter
    assert len(waits) == 3
    for n, wait in enumerate(waits):
        assert 2 * 2 ** n <= wait <= 2 * 2 ** n + 2, waits


def test_a_429_pauses_every_request_of_the_provider_until_retry_after():
    clock = Clock()

    async def main() -> None:
        limit = AdaptiveLimit("fake", 8, clock=clock, sleep=clock.sleep)
        limit.rate_limited(5.0)
        clock.now += 1.0                          # another request comes a second later
        async with limit.slot():
            pass
        assert clock.sleeps == [pytest.approx(4.0)]   # it waits out the rest
        async with limit.slot():                  # once the pause is over, no wait
            pass
        assert clock.sleeps == [pytest.approx(4.0)]

    asyncio.run(main())


def test_aimd_halves_on_a_429_and_grows_back_by_one_per_round_of_successes():
    async def main() -> None:
        limit = AdaptiveLimit("fake", 8)
        for expected in (4.0, 2.0, 1.0, 1.0):     # halves, never below the floor
            limit.rate_limited(None)
            assert limit.limit == expected
        # additive increase: +1/limit per success, so one round of `limit` successes
        # adds about one slot
        growth = [1.0]
        for _ in range(12):
            limit.succeeded()
            growth.append(min(8.0, growth[-1] + 1 / growth[-1]))
            assert limit.limit == pytest.approx(growth[-1])
        assert int(limit.limit) == 5              # 1 → 2 → 3 → 4 → 5 in 12 successes
        grows = [e.concurrency for e in limit.events if e.event == "grow"]
        assert [int(g) for g in grows] == [2, 3, 4, 5]
        for _ in range(200):
            limit.succeeded()
        assert limit.limit == 8.0                  # up to the ceiling, no further

    asyncio.run(main())


def test_the_limit_admits_as_many_requests_at_once_as_it_allows():
    async def main() -> None:
        limit = AdaptiveLimit("fake", 3)
        inside, peak = 0, 0
        release = asyncio.Event()

        async def one() -> None:
            nonlocal inside, peak
            async with limit.slot():
                inside += 1
                peak = max(peak, inside)
                await release.wait()
                inside -= 1

        tasks = [asyncio.create_task(one()) for _ in range(6)]
        for _ in range(20):
            await asyncio.sleep(0)
        assert inside == 3                         # three in, three waiting
        limit.rate_limited(None)                   # 3 → 1.5: one at a time from now
        release.set()
        await asyncio.gather(*tasks)
        assert peak == 3 and limit.in_flight == 0

    asyncio.run(main())


def test_a_cancelled_litellm_call_leaves_no_never_awaited_warning():
    """Ctrl-C can cancel litellm's wrapper between making its provider coroutine and
    awaiting it (seen once in four interrupted runs): that warning is silenced for
    litellm's acompletion coroutines only, not for ours."""
    import subprocess
    import sys

    code = ("import gc\n"
            "from vendbench.providers._litellm import import_litellm\n"
            "import_litellm()\n"
            "class OpenAIChatCompletion:\n"
            "    async def acompletion(self): pass\n"
            "class Ours:\n"
            "    async def complete(self): pass\n"
            "a = OpenAIChatCompletion().acompletion(); b = Ours().complete()\n"
            "del a, b; gc.collect()\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120).stderr
    assert "acompletion' was never awaited" not in err
    assert "Ours.complete' was never awaited" in err          # ours still warn


def test_make_provider_serves_the_model_it_is_given():
    """``make_provider`` uses its argument (design §21): the provider knows its model, and a
    string no provider serves is one clear error."""
    from vendbench.errors import ConfigError

    provider = make_provider("openai/fake", "sk-test")
    assert provider.model == "openai/fake" and provider.missing_keys(None) == []
    assert provider.count_reply({"role": "assistant", "content": "hello there"}) > 0
    for model_id, says in (("baseline/oracle", "in-process policy"),
                           ("mcp/claude-code", "vendbench serve"),
                           ("gpt-4.1-mini", "not a provider/model string")):
        with pytest.raises(ConfigError, match=says):
            make_provider(model_id)


def test_a_servers_quirks_come_from_its_profile():
    """One home for a server's quirks (design §21): the endpoint and model string pick the
    profile, and the profile decides the cache marks, the default time limit, how its
    context error reads and what the advice names."""
    from vendbench.orchestrator import build_config
    from vendbench.providers import context_limit, profile_for
    from vendbench.providers._wire import family

    local = profile_for("openai/qwen", "http://127.0.0.1:8080/v1")
    assert local.kind == "local" and local.timeout_s == 600 and "--ctx-size" in local.more_context
    assert profile_for("openai/gpt-5").kind == "openai" and family("openai/gpt-5") == "openai"
    assert profile_for("anthropic/claude").cache == family("anthropic/claude") == "anthropic"
    assert profile_for("gemini/x", "https://example.com").timeout_s == 120
    assert family("ollama/llama3") == "implicit"
    llama = '{"error": {"n_prompt_tokens": 9000, "n_ctx": 8192}}'
    assert (context_limit(llama).prompt_tokens, context_limit(llama).context_tokens) == \
        (9000, 8192)
    config = build_config({"models": [{"id": "openai/qwen",
                                       "api_base": "http://localhost:8080/v1"}]})
    assert config.models[0].profile is local and config.models[0].timeout_s == 600
