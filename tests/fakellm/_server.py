"""A local OpenAI-compatible chat-completions server for tests and benchmarks.

It listens on 127.0.0.1 (a random port), answers ``POST /v1/chat/completions`` with
scripted tool calls and usage figures, and can inject faults so that litellm's real
HTTP path is exercised: 429 with Retry-After, 500, hangs (client timeouts), dropped
connections, malformed JSON bodies, truncated bodies and malformed tool arguments.

    with FakeLLM() as llm:
        llm.inject("429", times=2, retry_after=0.01)
        ... point a model's api_base at llm.url ...
        assert llm.requests[0]["model"] == "fake-model"

The default script plays a tiny vending agent: on day 1 it orders a few products,
restocks once they arrive, and ends every day; each day takes two requests.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

PRODUCTS = ["P0001", "P0045", "P0200", "P0400", "P0700"]


@dataclass
class Reply:
    """What the fake model answers to one request."""

    tool_calls: list[tuple[str, str]] = field(default_factory=list)   # (name, JSON arguments)
    content: str | None = None
    prompt_tokens: int | None = None        # default: about len(request JSON) / 4
    completion_tokens: int = 24
    cached_tokens: int = 0
    delay: float = 0.0


def vending_script(body: dict[str, Any]) -> Reply:
    """A deterministic mini-agent: order on day 1, restock when stock arrives, end days."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        return Reply(tool_calls=[("end_day", "{}")])
    text = last.get("content") or ""
    if not isinstance(text, str):
        text = json.dumps(text)
    day = re.search(r"Day (\d+) of", text)
    if day and int(day.group(1)) == 1:
        items = [{"product_id": p, "quantity": 40} for p in PRODUCTS]
        return Reply(tool_calls=[("write_notes", json.dumps({"text": "ordered day 1"})),
                                 ("place_order", json.dumps({"items": items}))])
    stocked = re.search(r"Warehouse: (\d+) units", text)
    if stocked and int(stocked.group(1)) > 0:
        items = [{"machine_id": f"M{m:02d}", "product_id": p, "quantity": 8}
                 for m in range(1, 5) for p in PRODUCTS]
        return Reply(tool_calls=[("restock", json.dumps({"items": items}))])
    return Reply(tool_calls=[("get_financials", json.dumps({"window": 1}))])


class FakeLLM:
    """The server. Use as a context manager; ``url`` is the api_base to give litellm."""

    def __init__(self, script: Callable[[dict], Reply] = vending_script,
                 usage_scale: float = 1.0, latency: float = 0.0) -> None:
        self.script = script
        self.usage_scale = usage_scale
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.served = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[tuple[str, dict]] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"

    # -- control ------------------------------------------------------------------------
    def inject(self, kind: str, times: int = 1, **options: Any) -> None:
        """Queue faults for the next requests: 429, 500, 400, 401, hang, drop, malformed,
        truncated, bad_arguments, no_tool_call."""
        with self._lock:
            self._faults.extend([(kind, options)] * times)

    def _next_fault(self) -> tuple[str, dict] | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    # -- serving ------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._respond(request)
        finally:
            self.in_flight -= 1

    async def _respond(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
        fault = self._next_fault()
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault:
            kind, opts = fault
            if kind == "429":
                return web.json_response(
                    {"error": {"message": "rate limited", "type": "rate_limit_exceeded"}},
                    status=429, headers={"Retry-After": str(opts.get("retry_after", 0.05))})
            if kind in ("500", "400", "401", "404"):
                echo = request.headers.get("Authorization", "") if opts.get("echo_auth") else ""
                return web.json_response({"error": {"message": f"injected {kind} {echo}",
                                                    "type": "server_error"}}, status=int(kind))
            if kind == "hang":
                await asyncio.sleep(opts.get("seconds", 30))
            if kind == "drop":
                request.transport.close()
                return web.Response()
            if kind == "malformed":
                return web.Response(text="{this is not json", content_type="application/json")
            if kind == "truncated":
                full = json.dumps(self._completion(body, self.script(body)))
                return web.Response(text=full[: len(full) // 2],
                                    content_type="application/json")
            if kind == "bad_arguments":
                reply = Reply(tool_calls=[("place_order", '{"items": [{"product_id": ')])
                return web.json_response(self._completion(body, reply))
            if kind == "unknown_tool":
                reply = Reply(tool_calls=[("launch_rocket", "{}")])
                return web.json_response(self._completion(body, reply))
            if kind == "no_tool_call":
                return web.json_response(self._completion(body, Reply(content="Thinking…")))
        reply = self.script(body)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        with self._lock:
            self.served += 1
        return web.json_response(self._completion(body, reply))

    def _completion(self, body: dict, reply: Reply) -> dict:
        n = next(self._ids)
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else \
            max(1, len(json.dumps(body["messages"])) // 4)
        prompt = int(prompt * self.usage_scale)
        completion = int(reply.completion_tokens * self.usage_scale)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function",
                 "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(reply.tool_calls)]
        return {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}},
        }

    # -- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> FakeLLM:
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_post("/v1/chat/completions", self._handle)
            app.router.add_post("/chat/completions", self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=1024)
            self._loop.run_until_complete(site.start())
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._runner.cleanup())
            self._loop.close()

        self._thread = threading.Thread(target=serve, name="fakellm", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake LLM server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    """Serve until killed: ``python -m tests.fakellm --port P [--latency S]``."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    server = FakeLLM(latency=args.latency)
    server.port, server.url = args.port, f"http://127.0.0.1:{args.port}/v1"
    with server:
        print(f"serving {server.url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
