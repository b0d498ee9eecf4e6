"""The server ``python -m tests.fakellm`` runs (benchmarks, the README's offline run)
keeps no request's body: nobody reads them, and a long benchmark's server grew by every
one it was sent (20 GB in 30 minutes, session 23)."""

from __future__ import annotations

import httpx

from ._server import standalone

CHAT = {"model": "fake-model", "max_tokens": 64, "tools": [], "messages": [
    {"role": "user", "content": "Day 2 of 30. Warehouse: 0 units. " + "x" * 10_000}]}


def test_the_standalone_server_answers_and_keeps_no_body():
    with standalone() as llm:
        for _ in range(3):
            reply = httpx.post(llm.url + "/chat/completions", json=CHAT, timeout=10)
            assert reply.status_code == 200
            assert reply.json()["usage"]["prompt_tokens"] > 2_500   # it read each body
        assert llm.served == 3 and len(llm.paths) == 3
        assert llm.requests == [] and llm.raw == [] and llm.headers == []
        assert llm.replies == []
