"""A local LLM server for tests and benchmarks, speaking OpenAI chat completions
(``POST /v1/chat/completions``), Anthropic Messages (``POST /v1/messages``) and Gemini's
``generateContent`` (``POST /v1beta/models/{model}:generateContent``).

It listens on 127.0.0.1 (a random port) and answers with scripted tool calls and usage
figures, so that litellm's real provider paths are exercised:

* usage as each provider reports it, with its prompt cache emulated (OpenAI: longest
  earlier prefix of 1,024+ tokens, per ``prompt_cache_key``; Anthropic: only prefixes
  ending at a ``cache_control`` block), and token counts that can run above ours
  (``usage_scale``, or a counting function);
* a context window, refused in llama.cpp's, OpenAI's or Anthropic's words;
* llama.cpp's quirk of ignoring ``tools`` unless ``tool_choice`` is sent;
* reasoning as each provider serves it, refused as the real APIs refuse it (``_thinking``,
  ``_gemini``): Anthropic's signed thinking blocks, which must come back untouched at the
  start of the final assistant message; Gemini's thought signatures on function calls;
  OpenAI's reasoning models (``max_completion_tokens`` only, ``temperature`` 1 only,
  ``reasoning_tokens`` in the usage);
* faults: 429 with Retry-After, 500, 529 overloaded, 400/401/404, hangs (client
  timeouts), dropped connections, malformed and truncated bodies, malformed tool
  arguments, unknown tools, replies without tool calls.

    with FakeLLM() as llm:
        llm.inject("429", times=2, retry_after=0.01)
        ... point a model's api_base at llm.url (anthropic/...: llm.base) ...
        assert llm.requests[0]["model"] == "fake-model"

The default script plays a tiny vending agent: on day 1 it orders a few products,
restocks once they arrive, and ends every day; each day takes two requests.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from . import _anthropic, _gemini
from ._cache import PrefixCache, Segment
from ._thinking import Signer, anthropic_refusal, anthropic_thinking, thinking_blocks

PRODUCTS = ["P0001", "P0045", "P0200", "P0400", "P0700"]


@dataclass
class Reply:
    """What the fake model answers to one request."""

    tool_calls: list[tuple[str, str]] = field(default_factory=list)   # (name, JSON arguments)
    content: str | None = None
    prompt_tokens: int | None = None        # default: counted, see FakeLLM
    completion_tokens: int = 24
    cached_tokens: int = 0                  # with prompt_tokens given
    delay: float = 0.0
    reasoning: str | None = None            # sent as reasoning_content (DeepSeek, vLLM)
    thinking: str | None = None             # Anthropic's / Gemini's thinking text (with
                                            # thinking on; default: the server makes one)


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


def _with(reply: dict[str, Any], **changes: Any) -> str:
    return json.dumps({**reply, **changes})


# 200 replies a server bills but no client can read (design §30): each from a whole reply
UNREADABLE: dict[str, Callable[[dict[str, Any]], str]] = {
    "no_choices": lambda r: _with(r, choices=[]),
    "null_choices": lambda r: _with(r, choices=None),
    "html": lambda r: "<html><body><h1>200 OK</h1>upstream said nothing</body></html>",
    "nan_usage": lambda r: json.dumps(r).replace('"prompt_tokens": 100', '"prompt_tokens": NaN'),
    "infinite_usage": lambda r: json.dumps(r).replace('"completion_tokens": 10',
                                                      '"completion_tokens": Infinity'),
    "words_usage": lambda r: _with(r, usage={"prompt_tokens": "a hundred",
                                             "completion_tokens": "ten"}),
}


def _no_tools(choice: Any) -> bool:
    """Whether a request's tool_choice forbids tools (OpenAI "none", Anthropic's
    {"type": "none"}, Gemini's mode NONE)."""
    if isinstance(choice, dict):
        mode = choice.get("type") or (choice.get("function_calling_config") or
                                      choice.get("functionCallingConfig") or {}).get("mode")
        return str(mode).lower() == "none"
    return choice == "none"


def summary_lines(chat: dict[str, Any], calls: Callable[[str], bool] = lambda name: True,
                  cut: int | None = None) -> list[str]:
    """What a scripted model asked to compact can write from: its previous summary's
    lines, then each tool call it was shown (``calls`` chooses which by name), as
    ``name arguments`` cut to ``cut`` characters, each once, in order."""
    lines = []
    for m in chat["messages"]:
        content = m.get("content")
        if m["role"] == "user" and isinstance(content, str) and "your summary]" in content:
            lines += content.split("\n\n", 1)[-1].splitlines()
        for call in m.get("tool_calls") or []:
            fn = call["function"]
            if calls(fn["name"]):
                lines.append(f"{fn['name']} {fn['arguments']}"[:cut])
    return list(dict.fromkeys(lines))


def summary(chat: dict[str, Any]) -> str:
    """What a model that summarises tersely writes when asked: the last twelve distinct
    tool calls it made in the conversation it was shown (its earlier summary's lines
    first), each cut to 160 characters, one a line."""
    return "\n".join(summary_lines(chat, cut=160)[-12:]) or "Nothing happened yet."


def _chars(text: str) -> int:
    return max(1, len(text) // 4)


class FakeLLM:
    """The server. Use as a context manager; ``url`` is the api_base for OpenAI-style
    models, ``base`` for anthropic/... (litellm appends /v1/messages itself).

    Token counts: ``count_message`` (an OpenAI chat message), ``count_block`` (an
    Anthropic content block) and ``count_tools`` (the tool schemas, either format) default
    to characters / 4 of their JSON. Everything is then multiplied by ``usage_scale``. ``context_window`` refuses
    longer prompts in the words of ``context_error`` ("llama", "openai", "bare").
    """

    def __init__(self, script: Callable[[dict], Reply] = vending_script,
                 usage_scale: float = 1.0, latency: float = 0.0, *,
                 count_message: Callable[[dict], int] | None = None,
                 count_tools: Callable[[list], int] | None = None,
                 count_block: Callable[[dict], int] | None = None,
                 context_window: int | None = None, context_error: str = "llama",
                 require_tool_choice: bool = False, drop_tools: bool = False,
                 prompt_cache: bool = True, min_cache_tokens: int = 1024,
                 usage_style: str = "openai", keep_requests: bool = True,
                 strict_template: bool = False, report_usage: bool = True,
                 reasoning_models: str = r"^(openai/)?(o\d|gpt-5)", port: int = 0) -> None:
        self.script = script
        self.usage_scale = usage_scale
        self.latency = latency
        self.count_message = count_message or (lambda m: _chars(json.dumps(m)))
        self.count_tools = count_tools or (lambda t: _chars(json.dumps(t)) if t else 0)
        self.count_block = count_block or (lambda b: _chars(json.dumps(b)))
        self.context_window, self.context_error = context_window, context_error
        self.require_tool_choice, self.drop_tools = require_tool_choice, drop_tools
        self.prompt_cache = prompt_cache
        self.usage_style = usage_style          # "openai", or "deepseek" (cache hit/miss)
        self.keep_requests = keep_requests      # False: keep no bodies (long benchmarks)
        # False: replies carry no usage at all (some servers never report it); ``usages``
        # still records what they would have said, so a test knows what was produced
        self.report_usage = report_usage
        # as strict as llama.cpp's chat templates: a message without a string "content"
        # (an assistant message that only carries tool calls) fails the template, a 500
        self.strict_template = strict_template
        # replies wait while this is clear: a test holds a run in place while it looks
        self.gate = threading.Event()
        self.gate.set()
        # called with each request's body as it arrives (in the server's thread), before
        # the gate: a test may clear the gate there to hold exactly that request
        self.on_arrival: Callable[[dict[str, Any]], None] | None = None
        self.summarise: Callable[[dict[str, Any]], str] = summary   # asked to compact
        # reasoning: what signs thinking and thought signatures; which OpenAI model names
        # are reasoning models; the 400s refused for reasoning state (for tests to read);
        # the placeholder signatures a Gemini request got through with
        self.signer = Signer()
        self.reasoning_models = re.compile(reasoning_models)
        self.refusals: list[str] = []
        self.placeholders: list[str] = []
        self.replies: list[dict[str, Any]] = []        # Anthropic and Gemini replies sent
        self._caches = {style: PrefixCache(style, min_cache_tokens)
                        for style in ("openai", "anthropic")}
        self.requests: list[dict[str, Any]] = []       # bodies as received (parsed)
        self.raw: list[bytes] = []                     # bodies as received (bytes)
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.usages: list[dict[str, Any]] = []         # usage of each reply sent
        self.served = 0
        self.connections: set[object] = set()          # the clients' (host, port)s seen
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[tuple[str, dict]] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        # the listening socket is bound here, to a port the OS picks, and kept: no other
        # process can take the port between choosing it and serving on it
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", port))
        self.port = self._socket.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/v1"

    # -- control ------------------------------------------------------------------------
    def inject(self, kind: str, times: int = 1, **options: Any) -> None:
        """Queue faults for the next requests: 429, 500, 529, 400, 401, 404, hang, drop,
        malformed, truncated, bad_arguments, unknown_tool, no_tool_call."""
        with self._lock:
            self._faults.extend([(kind, options)] * times)

    def _next_fault(self) -> tuple[str, dict] | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _scaled(self, n: int) -> int:
        return math.ceil(n * self.usage_scale)

    # -- serving ------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.connections.add(peer)
        try:
            raw = await request.read()
            body = json.loads(raw)
            with self._lock:
                self.paths.append(request.path)
                if self.keep_requests:
                    self.requests.append(body)
                    self.raw.append(raw)
                    self.headers.append(dict(request.headers))
            anthropic = request.path.endswith("/messages")
            gemini = request.path.endswith(":generateContent")
            if self.on_arrival is not None:
                self.on_arrival(body)
            while not self.gate.is_set():
                await asyncio.sleep(0.01)
            fault = self._next_fault()
            if self.latency:
                await asyncio.sleep(self.latency)
            if fault:
                response = await self._fault(request, body, anthropic, *fault)
                if response is not None:
                    return response
            if gemini:
                return await self._gemini(body, request.path)
            if self.strict_template and not anthropic and any(
                    not isinstance(m.get("content"), str) for m in body.get("messages", [])):
                return web.json_response({"error": {
                    "code": 500, "type": "server_error",
                    "message": "Value is not callable: 'dict object' has no attribute "
                               "'content'"}}, status=500)
            return await (self._anthropic(body) if anthropic else self._openai(body))
        finally:
            self.in_flight -= 1

    def _tools_seen(self, chat: dict[str, Any]) -> bool:
        """Whether the model is shown the tools (llama.cpp: only with tool_choice)."""
        if self.drop_tools:
            return False
        return not self.require_tool_choice or chat.get("tool_choice") is not None

    def _reply(self, chat: dict[str, Any], tools_seen: bool) -> Reply:
        if not tools_seen:
            return Reply(content="I would restock the machines, but I have no tools.")
        if _no_tools(chat.get("tool_choice")):
            text = self.summarise(chat)               # asked for text: it summarises
            return Reply(content=text, completion_tokens=_chars(text))
        return self.script(chat)

    def _refused(self, payload: dict[str, Any], message: str, status: int = 400
                 ) -> web.StreamResponse:
        with self._lock:
            self.refusals.append(message)
        return web.json_response(payload, status=status)

    def _reasoning_refusal(self, body: dict[str, Any]) -> str | None:
        """What OpenAI says of a request to one of its reasoning models, if it refuses it."""
        if not self.reasoning_models.search(str(body.get("model", ""))):
            return None
        if "max_tokens" in body:
            return ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead.")
        if body.get("temperature") not in (None, 1, 1.0):
            return (f"Unsupported value: 'temperature' does not support {body['temperature']} "
                    "with this model. Only the default (1) value is supported.")
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in ("minimal", "low", "medium", "high"):
            return (f"Invalid value: '{effort}'. Supported values are: 'minimal', 'low', "
                    "'medium', and 'high'.")
        return None

    async def _openai(self, body: dict[str, Any]) -> web.StreamResponse:
        refusal = self._reasoning_refusal(body)
        if refusal is not None:
            return self._refused({"error": {"message": refusal, "type":
                                            "invalid_request_error", "param": None,
                                            "code": "unsupported_parameter"}}, refusal)
        if body.get("tool_choice") is not None and not body.get("tools"):
            # OpenAI's own words for a request that chooses among no tools
            message = ("Invalid value for 'tool_choice': 'tool_choice' is only allowed when "
                       "'tools' are specified.")
            return self._refused({"error": {"message": message, "type":
                                            "invalid_request_error", "param": "tool_choice",
                                            "code": None}}, message)
        seen = self._tools_seen(body)
        reply = self._reply(body, seen)
        if reply.prompt_tokens is not None:
            prompt, read = self._scaled(reply.prompt_tokens), reply.cached_tokens
        else:
            segs = [Segment(json.dumps(body.get("tools")),
                            self.count_tools(body.get("tools") if seen else []))]
            segs += [Segment(json.dumps(m, sort_keys=True), self.count_message(m))
                     for m in body["messages"]]
            prompt = self._scaled(sum(s.tokens for s in segs))
            limit = self._context_refusal(prompt, body.get("max_tokens") or 0, False)
            if limit is not None:
                return limit
            read = self._scaled(self._caches["openai"].lookup(
                segs, body.get("prompt_cache_key"))[0]) if self.prompt_cache else 0
        if reply.delay:
            await asyncio.sleep(reply.delay)
        completion = self._scaled(reply.completion_tokens)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion}
        if self.reasoning_models.search(str(body.get("model", ""))):
            # reasoning tokens are billed as output and reported apart (none returned:
            # chat completions keeps a reasoning model's reasoning to itself)
            effort = body.get("reasoning_effort") or "medium"
            thought = self._scaled({"minimal": 0, "low": 64, "medium": 160, "high": 400}[effort])
            usage.update(completion_tokens=completion + thought,
                         total_tokens=prompt + completion + thought,
                         completion_tokens_details={"reasoning_tokens": thought})
        if self.usage_style == "deepseek":
            usage.update(prompt_cache_hit_tokens=min(read, prompt),
                         prompt_cache_miss_tokens=prompt - min(read, prompt))
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": min(read, prompt)}
        return web.json_response(self._chat_completion(body, reply, usage))

    async def _anthropic(self, body: dict[str, Any]) -> web.StreamResponse:
        refusal = anthropic_refusal(body, self.signer)
        if refusal is not None:
            return self._refused(_anthropic.error(400, refusal), refusal)
        chat = _anthropic.to_chat(body)
        seen = self._tools_seen(chat)
        reply = self._reply(chat, seen)
        segs = _anthropic.segments(body if seen else {**body, "tools": []}, self.count_block,
                                   self.count_tools)
        prompt = self._scaled(sum(s.tokens for s in segs))
        refusal = self._context_refusal(prompt, body.get("max_tokens") or 0, True)
        if refusal is not None:
            return refusal
        read, written = self._caches["anthropic"].lookup(segs) if self.prompt_cache else (0, 0)
        read, written = self._scaled(read), self._scaled(written)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        n = next(self._ids)
        thinking: list[dict[str, Any]] = []
        if anthropic_thinking(body) is not None:
            text = reply.thinking or f"Step {n}: {len(reply.tool_calls)} call(s) to make."
            thinking = thinking_blocks(n, text, self.signer, redacted=n % 4 == 0)
        usage = {"input_tokens": prompt - read - written,
                 "output_tokens": self._scaled(reply.completion_tokens + sum(
                     self.count_block(b) for b in thinking)),
                 "cache_creation_input_tokens": written, "cache_read_input_tokens": read}
        with self._lock:
            self.served += 1
            self.usages.append(usage)
        message = _anthropic.message(n, body.get("model", "fake"), reply.content,
                                     reply.tool_calls, usage, thinking)
        if not self.report_usage:
            del message["usage"]
        if self.keep_requests:
            self.replies.append(message)
        return web.json_response(message)

    async def _gemini(self, body: dict[str, Any], path: str) -> web.StreamResponse:
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        placeholders: list[str] = []
        refusal = _gemini.refusal(body, self.signer, placeholders)
        if refusal is not None:
            return self._refused(_gemini.error(400, refusal), refusal)
        with self._lock:
            self.placeholders.extend(placeholders)
        chat = _gemini.to_chat({**body, "model": model})
        reply = self._reply(chat, self._tools_seen(chat))
        prompt = self._scaled(self.count_tools(chat["tools"] or []) + sum(
            self.count_message(m) for m in chat["messages"]))
        n = next(self._ids)
        thought = None
        if _gemini.thinking_on(body):
            thought = reply.thinking or f"Step {n}: {len(reply.tool_calls)} call(s) to make."
        out = self._scaled(reply.completion_tokens)
        thoughts = self._scaled(len(thought) // 4 + 1) if thought else 0
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": out,
                 "totalTokenCount": prompt + out + thoughts,
                 **({"thoughtsTokenCount": thoughts} if thoughts else {})}
        with self._lock:
            self.served += 1
            self.usages.append(usage)
        answer = _gemini.reply(n, model, thought, reply.content, reply.tool_calls, usage,
                               self.signer)
        if not self.report_usage:
            del answer["usageMetadata"]
        if self.keep_requests:
            self.replies.append(answer)
        return web.json_response(answer)

    def _context_refusal(self, prompt: int, max_tokens: int, anthropic: bool
                         ) -> web.StreamResponse | None:
        window = self.context_window
        if window is None or prompt + (max_tokens if self.context_error == "openai" else 0) \
                <= window:
            return None
        if anthropic:
            return web.json_response(_anthropic.error(
                400, f"prompt is too long: {prompt} tokens > {window} maximum"), status=400)
        if self.context_error == "llama":
            error = {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": prompt,
                     "n_ctx": window, "message": "the request exceeds the available context "
                                                 "size, try increasing it"}
        elif self.context_error == "openai":
            error = {"message": f"This model's maximum context length is {window} tokens. "
                                f"However, you requested {prompt + max_tokens} tokens ({prompt} "
                                f"in the messages, {max_tokens} in the completion). Please "
                                "reduce the length of the messages or completion.",
                     "type": "invalid_request_error", "param": "messages",
                     "code": "context_length_exceeded"}
        else:
            error = {"message": "context length exceeded", "type": "invalid_request_error"}
        return web.json_response({"error": error}, status=400)

    async def _fault(self, request: web.Request, body: dict[str, Any], anthropic: bool,
                     kind: str, opts: dict) -> web.StreamResponse | None:
        if kind in ("429", "500", "529", "400", "401", "404"):
            status = int(kind)
            echo = request.headers.get("Authorization", "") if opts.get("echo_auth") else ""
            headers = {"Retry-After": str(opts.get("retry_after", 0.05))} if status == 429 \
                else {}
            # a server that is down says so in general words; ``message`` gives a specific
            # error (a chat template that cannot render the request, say)
            text = "rate limited" if status == 429 else opts.get(
                "message", f"Internal Server Error (injected {kind}) {echo}")
            payload = _anthropic.error(status, text) if anthropic else \
                _gemini.error(status, text) if request.path.endswith(":generateContent") else \
                {"error": {"message": text, "type": "rate_limit_exceeded" if status == 429
                           else "server_error"}}
            return web.json_response(payload, status=status, headers=headers)
        if kind == "hang":
            await asyncio.sleep(opts.get("seconds", 30))
            return None
        if kind == "drop":
            request.transport.close()
            return web.Response()
        if kind == "malformed":
            return web.Response(text="{this is not json", content_type="application/json")
        if kind in UNREADABLE:                  # a 200 the server billed, that cannot be read
            text = UNREADABLE[kind](self._chat_completion(body, self.script(body), {
                "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}))
            return web.Response(text=text, content_type="text/html" if kind == "html"
                                else "application/json")
        if kind == "truncated":
            full = json.dumps(self._chat_completion(body, self.script(body), {}))
            return web.Response(text=full[: len(full) // 2], content_type="application/json")
        replies = {"bad_arguments": Reply(tool_calls=[("place_order", '{"items": [{"product_id": ')]),
                   "unknown_tool": Reply(tool_calls=[("launch_rocket", "{}")]),
                   "no_tool_call": Reply(content="Thinking…")}
        if kind in replies and not anthropic:
            usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
            return web.json_response(self._chat_completion(body, replies[kind], usage))
        if kind in replies:
            reply = replies[kind]
            usage = {"input_tokens": 100, "output_tokens": 10}
            return web.json_response(_anthropic.message(
                next(self._ids), body.get("model", "fake"), reply.content, reply.tool_calls,
                usage))
        raise ValueError(f"unknown fault {kind!r}")

    def _chat_completion(self, body: dict, reply: Reply, usage: dict[str, Any]) -> dict:
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function",
                 "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(reply.tool_calls)]
        with self._lock:
            self.served += 1
            self.usages.append(usage)
        completion = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        }
        if self.report_usage:
            completion["usage"] = usage
        return completion

    # -- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> FakeLLM:
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            app = web.Application(client_max_size=64 * 1024 * 1024)
            for path in ("/v1/chat/completions", "/chat/completions", "/v1/messages",
                         "/models/{model}", "/v1beta/models/{model}"):
                app.router.add_post(path, self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            self._loop.run_until_complete(self._runner.setup())
            site = web.SockSite(self._runner, self._socket, backlog=1024)
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



def standalone(latency: float = 0.0, port: int = 0) -> FakeLLM:
    """The server ``python -m tests.fakellm`` runs: no test reads its lists, so it keeps
    no request's body. Keeping them, a benchmark's server grew by every body it was sent
    (20 GB after 30 minutes of zero-latency runs, session 23); as it grew, its requests
    cost more CPU, on the cores it shares with the client, and the host began to run out
    of memory."""
    return FakeLLM(latency=latency, port=port, keep_requests=False)


def main() -> None:
    """Serve until killed: ``python -m tests.fakellm [--port P] [--latency S]`` (a free
    port unless given; the URL is printed). ``--background``: start the server in a
    process of its own, wait until it serves, print ``FAKELLM_URL=… FAKELLM_PID=…`` for
    a shell's ``eval`` and return."""
    import argparse
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--port", type=int, default=0, help="default: a free one")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--background", action="store_true")
    args = ap.parse_args()
    if args.background:
        child = subprocess.Popen([sys.executable, "-m", "tests.fakellm", "--port",
                                  str(args.port), "--latency", str(args.latency)],
                                 stdout=subprocess.PIPE, text=True,
                                 cwd=Path(__file__).resolve().parents[2])
        assert child.stdout is not None
        line = child.stdout.readline()            # "serving URL", once it listens
        if not line.startswith("serving "):
            child.kill()
            sys.exit(f"the fake server did not start: {line.strip() or 'no output'}")
        child.stdout.close()
        print(f"FAKELLM_URL={shlex.quote(line.split()[1])} FAKELLM_PID={child.pid}")
        return
    try:
        server = standalone(args.latency, args.port)
    except OSError as exc:
        sys.exit(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}; leave --port "
                 "out for a free one")
    with server:
        print(f"serving {server.url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
