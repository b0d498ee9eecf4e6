"""litellm's request building runs in the event loop's thread for providers whose
building does no I/O, and in a thread for the rest and for everything else the loop
hands its default executor (design §25.1, ``providers/_inline``)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading

import pytest

from vendbench.providers import CompletionRequest, make_provider
from vendbench.providers._inline import InlineBuild, _building, done, inline_for
from vendbench.providers._litellm import import_litellm

from ..fakellm import FakeLLM

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


@pytest.fixture
def built_in(monkeypatch):
    """The threads litellm's ``completion`` ran in, as the provider used it."""
    litellm = import_litellm()
    threads: list[int] = []
    original = litellm.main.completion

    def completion(*args, **kwargs):
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    monkeypatch.setattr(litellm.main, "completion", completion)
    return threads


def test_an_openai_request_is_built_in_the_loop_and_answered(monkeypatch, built_in):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key-0000")
    with FakeLLM() as llm:
        request = CompletionRequest(model="openai/fake", api_base=llm.url, max_tokens=64,
                                    messages=[{"role": "user", "content": "Day 1 of 3"}],
                                    tools=[], timeout_s=30)

        async def main():
            provider = make_provider("openai/fake")
            return [await provider.complete(request) for _ in range(3)]

        replies = asyncio.run(main())
    assert all(r.message["role"] == "assistant" for r in replies)
    assert built_in == [threading.get_ident()] * 3
    assert not _building.get()                         # reset after each request


def test_a_provider_whose_building_may_fetch_credentials_keeps_the_thread():
    async def main():
        litellm = import_litellm()
        assert inline_for("vertex_ai/gemini-2.5-pro", litellm) is None
        assert inline_for("bedrock/anthropic.claude", litellm) is None
        token = inline_for("anthropic/claude-sonnet-4-5", litellm)
        try:
            assert token is not None and _building.get()
        finally:
            done(token)
        assert not _building.get()

    asyncio.run(main())


def test_only_litellms_building_runs_inline_everything_else_in_threads():
    def completion(**kwargs):
        return threading.get_ident()

    def failing(**kwargs):
        raise ValueError("a bad request")

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(InlineBuild(completion))
        me = threading.get_ident()

        def build(fn):
            return functools.partial(contextvars.copy_context().run,
                                     functools.partial(fn, model="openai/x"))

        token = _building.set(True)
        try:
            assert await loop.run_in_executor(None, build(completion)) == me
            with pytest.raises(ValueError, match="a bad request"):
                await loop.run_in_executor(InlineBuild(failing), build(failing))
            # anything else (a DNS look-up, say) goes to a thread, even while building
            assert await loop.run_in_executor(None, threading.get_ident) != me
        finally:
            _building.reset(token)
        # litellm's building outside a listed provider's request: a thread
        assert await loop.run_in_executor(None, build(completion)) != me

    asyncio.run(main())
