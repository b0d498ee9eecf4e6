"""litellm behind the Provider protocol. litellm is imported only by this package
(here, and by the token counter in ``_tokens``).

litellm is imported lazily (it costs 3–4 s and ~200 MB), in offline mode with its local
price map, its own retries off (one retry loop: ours) and its debug output suppressed.
Its exceptions are translated here, and only here, into ``Failure`` records whose
messages carry no secret.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import os
import re
import warnings
from functools import cache
from typing import Any

from .._heap import loading
from .._secrets import redact, redact_json, secret_values
from .._text import no_surrogates
from ..errors import ConfigError
from ._base import Completion, CompletionRequest, ContextLimit, Failure, RetryKind, said
from ._inline import done, inline_for
from ._profiles import ServerProfile, context_numbers, wire_profile
from ._wire import litellm_kwargs, usage_from


@cache
def import_litellm() -> Any:
    """Import and configure litellm once; a clear error if it is not installed."""
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    try:
        with loading():
            import litellm
    except ImportError:
        raise ConfigError("litellm is not installed: pip install -r requirements.lock -e .")\
            from None
    litellm.suppress_debug_info = True
    litellm.num_retries = 0
    litellm.drop_params = True          # a param a provider lacks is dropped, not an error
    # ... which litellm logs on every request; ``check`` says it once, in its own words
    # (``ReasoningPlan.notes``), so the log line is noise here
    logging.getLogger("LiteLLM").addFilter(_NotDroppedParams())
    # Ctrl-C or SIGTERM can cancel litellm's wrapper after it made its provider coroutine
    # and before it awaited it: that request was never sent (nothing to charge), and the
    # coroutine's "never awaited" warning at exit is noise, not a fault of the run
    warnings.filterwarnings("ignore", category=RuntimeWarning,
                            message=r"coroutine '\w+\.acompletion' was never awaited")
    # a reply whose usage is no number (NaN, words) makes litellm's own pydantic models
    # warn as they serialize it; vendbench names that reply once, in its own words, and
    # charges it as garbled (design §30.6), so the warning is noise on every such run
    # (design §35.6: it printed in every test run)
    warnings.filterwarnings("ignore", category=UserWarning,
                            message=r"Pydantic serializer warnings")
    return litellm


class _NotDroppedParams(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Dropping ")


class LiteLLMProvider:
    """Any litellm model string: openai/…, anthropic/…, gemini/…, ollama/…, hosted_vllm/…"""

    name = "litellm"

    def __init__(self, model: str, api_key: str | None = None) -> None:
        self._litellm = import_litellm()
        self.model = model
        self._api_key = api_key

    async def complete(self, request: CompletionRequest) -> Completion:
        kwargs = litellm_kwargs(request)
        kwargs.update(timeout=request.timeout_s, max_retries=0, num_retries=0)
        if request.api_base:
            kwargs["api_base"] = request.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        token = inline_for(self.model, self._litellm)
        try:
            response = await self._litellm.acompletion(**kwargs)
        finally:
            done(token)
        completion = _completion(response, [self._api_key or ""], wire_profile(self.model))
        most = request.max_tokens + (request.thinking_budget or 0)
        if completion.usage is not None and completion.usage.completion_tokens > most:
            # no reply is longer than it was allowed to be: this count is not a bill
            raise ValueError(
                f"the reply's usage gives completion_tokens = "
                f"{completion.usage.completion_tokens:,}, above the {most:,} the request "
                "allowed: a garbled reply")
        return completion

    def render_body(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body litellm sends for ``request``, rendered by litellm's own request
        transformation without sending anything (no key is needed or used)."""
        from litellm.types.utils import CallTypes
        from litellm.utils import return_raw_request

        kwargs = litellm_kwargs(request)
        if request.api_base:
            kwargs["api_base"] = request.api_base
        raw = return_raw_request(CallTypes.completion, kwargs)
        body = raw.get("raw_request_body")
        if not body or raw.get("error"):
            raise ConfigError(f"litellm could not render the request for {request.model}: "
                              f"{redact(str(raw.get('error')))}")
        body = dict(body)
        body.update(body.pop("extra_body", None) or {})   # the OpenAI SDK merges it in
        return body

    def classify(self, exc: BaseException) -> Failure:
        lit = self._litellm
        # one class name, not litellm's three ("NotFoundError: litellm.NotFoundError:
        # NotFoundError: ...")
        message = redact(f"{type(exc).__name__}: {said(str(exc))}",
                         [self._api_key or ""])[:2000]
        chain = _chain(exc)
        status = getattr(exc, "status_code", None)
        if "UnicodeEncodeError" in chain or "codec can't encode" in str(exc):
            # failed on this machine while the request was encoded: nothing was sent, and
            # no server is at fault (litellm reports it as an HTTP 500)
            return Failure(RetryKind.NO, "the request could not be encoded on this machine, "
                           "so it was never sent (a fault of vendbench's, not the "
                           f"server's): {said(message)}"[:2000], None)
        if "credentials" in str(exc).lower() and "HTTPStatusError" not in chain:
            return Failure(RetryKind.NO, message, status)       # never left this machine
        if isinstance(exc, lit.ContextWindowExceededError) or (
                status in (400, 413) and _CONTEXT_ERROR.search(str(exc))):
            return Failure(RetryKind.CONTEXT, message, status, context=context_limit(str(exc)))
        if isinstance(exc, lit.RateLimitError):
            return Failure(RetryKind.RATE_LIMIT, message, 429, _retry_after(exc))
        if isinstance(exc, (lit.Timeout,)) or "APITimeoutError" in chain:
            return Failure(RetryKind.UNKNOWN, message, None)
        if any(n in chain for n in ("APIConnectionError", "ReadError",
                                    "RemoteProtocolError", "ServerDisconnectedError")):
            # sent, and no reply came: in words, not litellm's "InternalServerError:
            # Connection error." (design §35.6)
            return Failure(RetryKind.UNKNOWN, "the connection failed before a reply came (the "
                           "server closed it, or went away): " + message, status)
        if "JSONDecodeError" in chain:
            return Failure(RetryKind.UNKNOWN, message, status)   # sent; reply garbled
        if isinstance(exc, (lit.InternalServerError, lit.ServiceUnavailableError,
                            lit.APIError)) and (status is None or status >= 500):
            if "HTTPStatusError" not in chain:
                # litellm says 500, but no server did: the server answered (and may have
                # billed) a reply litellm could not read (no choices, not JSON, usage
                # that is no number). Its outcome is unknown: charged, never free.
                return Failure(RetryKind.UNKNOWN, "the server answered, but its reply could "
                               f"not be read: {_first_line(message)}"[:2000], None)
            return Failure(RetryKind.TRANSIENT, message, status)
        if isinstance(exc, (lit.BadRequestError, lit.AuthenticationError, lit.NotFoundError,
                            lit.PermissionDeniedError, lit.UnprocessableEntityError)):
            return Failure(RetryKind.NO, message, status)
        if status is not None and 400 <= status < 500:
            return Failure(RetryKind.NO, message, status)
        return Failure(RetryKind.UNKNOWN, message, status)

    def missing_keys(self, api_base: str | None) -> list[str]:
        """Environment variables the model needs that are not set (none with an api_key)."""
        model = self.model
        if self._api_key:
            return []
        info = self._litellm.validate_environment(model=model, api_base=api_base)
        if not info.get("keys_in_environment"):
            return list(info.get("missing_keys") or [])
        names = _KEY_VARS.get(model.split("/", 1)[0], ())
        if names and not any(os.environ.get(n, "").strip() for n in names):
            return list(names)          # set, but empty: as good as missing
        return []

    def count_reply(self, message: dict[str, Any]) -> int:
        return int(self._litellm.token_counter(model=self.model, messages=[message]))


_KEY_VARS = {"openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",),
             "openrouter": ("OPENROUTER_API_KEY",), "deepseek": ("DEEPSEEK_API_KEY",),
             "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY")}


def _first_line(message: str) -> str:
    """A failure's words without the traceback litellm pastes into some."""
    return message.split(" Traceback (most recent call last)")[0].splitlines()[0]


def _chain(exc: BaseException) -> set[str]:
    names, seen = set(), 0
    node: BaseException | None = exc
    while node is not None and seen < 10:
        names.add(type(node).__name__)
        node = node.__cause__ or node.__context__
        seen += 1
    return names


def _retry_after(exc: BaseException) -> float | None:
    """Seconds to wait, from the Retry-After header of the error answer. litellm keeps
    the provider's headers in ``litellm_response_headers`` (its Anthropic errors carry a
    synthetic response without them); the value is seconds or an HTTP date."""
    response = getattr(exc, "response", None)
    for headers in (getattr(exc, "litellm_response_headers", None),
                    getattr(response, "headers", None)):
        if headers is None or not hasattr(headers, "get"):
            continue
        value = headers.get("retry-after")
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())
    return None


def _completion(response: Any, secrets: list[str], profile: ServerProfile) -> Completion:
    """The reply as the next request sends it back (``profile``: its wire format's
    rules), with any secret in it masked before anything stores, shows or sends it back
    (a provider may echo a key in a successful reply too)."""
    received = no_surrogates(response.model_dump() if hasattr(response, "model_dump")
                             else dict(response))
    known = [*secrets, *secret_values()]          # (the environment read once a reply)
    raw = redact_json(received, known=known)
    if not raw.get("choices") or not isinstance(raw["choices"][0], dict) or \
            not isinstance(raw["choices"][0].get("message"), dict):
        raise ValueError("the reply has no choice with a message: a garbled reply")
    choice = raw["choices"][0]["message"]
    # what the provider signed goes back as it came: only a known secret value is masked
    # in it, never what merely looks like a key (a thinking text that mentions
    # "api_key_rotation" would fail its signature otherwise)
    signed = redact_json(received["choices"][0]["message"], known=known, patterns=False)
    calls = choice.get("tool_calls") or []
    # content is a string (llama.cpp's chat templates refuse null), but for a wire format
    # that refuses an empty text part (Gemini) when there is no text
    content = choice.get("content") or ("" if not profile.null_content else None)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    keep_fields = "provider_specific_fields" in profile.sent_back
    if calls:
        message["tool_calls"] = [_call(i, c, s, keep_fields) for i, (c, s) in
                                 enumerate(zip(calls, signed.get("tool_calls") or calls))]
    # what the provider needs back on the next turn, exactly as it came (design §24.1)
    for name in profile.sent_back:
        if signed.get(name):
            message[name] = signed[name]
    return Completion(message=message, usage=usage_from(raw), raw=raw,
                      reasoning=_reasoning_text(choice))


def _call(i: int, call: dict[str, Any], signed: dict[str, Any], keep_fields: bool
          ) -> dict[str, Any]:
    """A tool call as sent back: its id (Gemini's carries its thought signature: as it
    came, from ``signed``), name, arguments, and the provider's own fields where the wire
    format needs them."""
    fn = call.get("function") or {}
    out: dict[str, Any] = {"id": signed.get("id") or f"call_{i}", "type": "function",
                           "function": {"name": fn.get("name") or "",
                                        "arguments": fn.get("arguments") or ""}}
    if keep_fields and signed.get("provider_specific_fields"):
        out["provider_specific_fields"] = signed["provider_specific_fields"]
    return out


def _reasoning_text(choice: dict[str, Any]) -> str:
    """The model's reasoning as a reader sees it: litellm's ``reasoning_content`` (its
    name for every provider's), and a note for each block the provider redacted."""
    reasoning = choice.get("reasoning_content")
    text = reasoning if isinstance(reasoning, str) else ""
    redacted = sum(1 for b in choice.get("thinking_blocks") or []
                   if isinstance(b, dict) and b.get("type") == "redacted_thinking")
    if redacted:
        note = (f"[{redacted} redacted thinking block{'s' if redacted > 1 else ''}: "
                "encrypted by the provider, sent back as received]")
        text = f"{text}\n{note}" if text else note
    return text


# a 400 that names the context (for servers litellm does not recognise)
_CONTEXT_ERROR = re.compile(r"context (length|window|size)|prompt is too long|too many tokens|"
                            r"maximum context|exceeds? (the )?(model'?s? )?(max|context)", re.I)


def context_limit(text: str) -> ContextLimit:
    """The prompt size and context window a context-length error states, if it does
    (each server profile's wording, ``_profiles``)."""
    prompt, window = context_numbers(text)
    return ContextLimit(prompt, window)
