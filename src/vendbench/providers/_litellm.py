"""litellm behind the Provider protocol; the only module that imports litellm.

litellm is imported lazily (it costs 3–4 s and ~200 MB), in offline mode with its local
price map, its own retries off (one retry loop: ours) and its debug output suppressed.
Its exceptions are translated here, and only here, into ``Failure`` records whose
messages carry no secret.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from .._secrets import redact
from ..errors import ConfigError
from ._base import Completion, CompletionRequest, Failure, RetryKind, Usage


@cache
def import_litellm() -> Any:
    """Import and configure litellm once; a clear error if it is not installed."""
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    try:
        import litellm
    except ImportError:
        raise ConfigError("litellm is not installed: pip install -r requirements.lock -e .")\
            from None
    litellm.suppress_debug_info = True
    litellm.num_retries = 0
    litellm.drop_params = True          # a param a provider lacks is dropped, not an error
    return litellm


class LiteLLMProvider:
    """Any litellm model string: openai/…, anthropic/…, gemini/…, ollama/…, hosted_vllm/…"""

    name = "litellm"

    def __init__(self, api_key: str | None = None) -> None:
        self._litellm = import_litellm()
        self._api_key = api_key

    async def complete(self, request: CompletionRequest) -> Completion:
        kwargs: dict[str, Any] = {
            "model": request.model, "messages": request.messages, "tools": request.tools,
            "max_tokens": request.max_tokens, "timeout": request.timeout_s,
            "max_retries": 0, "num_retries": 0,
        }
        if request.api_base:
            kwargs["api_base"] = request.api_base
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.reasoning_effort:
            kwargs["reasoning_effort"] = request.reasoning_effort
        if self._api_key:
            kwargs["api_key"] = self._api_key
        response = await self._litellm.acompletion(**kwargs)
        return _completion(response)

    def classify(self, exc: BaseException) -> Failure:
        lit = self._litellm
        message = redact(f"{type(exc).__name__}: {exc}", [self._api_key or ""])[:2000]
        chain = _chain(exc)
        status = getattr(exc, "status_code", None)
        if "credentials" in str(exc).lower() and "HTTPStatusError" not in chain:
            return Failure(RetryKind.NO, message, status)       # never left this machine
        if isinstance(exc, lit.RateLimitError):
            return Failure(RetryKind.RATE_LIMIT, message, 429, _retry_after(exc))
        if isinstance(exc, (lit.Timeout,)) or "APITimeoutError" in chain:
            return Failure(RetryKind.UNKNOWN, message, None)
        if any(n in chain for n in ("JSONDecodeError", "APIConnectionError", "ReadError",
                                    "RemoteProtocolError", "ServerDisconnectedError")):
            return Failure(RetryKind.UNKNOWN, message, status)   # sent; reply lost or garbled
        if isinstance(exc, (lit.InternalServerError, lit.ServiceUnavailableError,
                            lit.APIError)) and (status is None or status >= 500):
            return Failure(RetryKind.TRANSIENT, message, status)
        if isinstance(exc, (lit.BadRequestError, lit.AuthenticationError, lit.NotFoundError,
                            lit.PermissionDeniedError, lit.UnprocessableEntityError)):
            return Failure(RetryKind.NO, message, status)
        if status is not None and 400 <= status < 500:
            return Failure(RetryKind.NO, message, status)
        return Failure(RetryKind.UNKNOWN, message, status)

    def missing_keys(self, model: str, api_base: str | None) -> list[str]:
        """Environment variables the model needs that are not set (none with an api_key)."""
        if self._api_key:
            return []
        info = self._litellm.validate_environment(model=model, api_base=api_base)
        if not info.get("keys_in_environment"):
            return list(info.get("missing_keys") or [])
        names = _KEY_VARS.get(model.split("/", 1)[0], ())
        if names and not any(os.environ.get(n, "").strip() for n in names):
            return list(names)          # set, but empty: as good as missing
        return []

    def count_tokens(self, model: str, messages: list[dict[str, Any]] | None = None,
                     tools: list[dict[str, Any]] | None = None, text: str | None = None
                     ) -> int:
        if text is not None:
            return int(self._litellm.token_counter(model=model, text=text))
        return int(self._litellm.token_counter(model=model, messages=messages, tools=tools))


_KEY_VARS = {"openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",),
             "openrouter": ("OPENROUTER_API_KEY",), "deepseek": ("DEEPSEEK_API_KEY",),
             "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY")}


def _chain(exc: BaseException) -> set[str]:
    names, seen = set(), 0
    node: BaseException | None = exc
    while node is not None and seen < 10:
        names.add(type(node).__name__)
        node = node.__cause__ or node.__context__
        seen += 1
    return names


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _completion(response: Any) -> Completion:
    raw = response.model_dump() if hasattr(response, "model_dump") else dict(response)
    choice = raw["choices"][0]["message"]
    message: dict[str, Any] = {"role": "assistant"}
    calls = choice.get("tool_calls") or []
    if choice.get("content") is not None or not calls:
        message["content"] = choice.get("content") or ""
    if calls:
        message["tool_calls"] = [
            {"id": c.get("id") or f"call_{i}", "type": "function",
             "function": {"name": (c.get("function") or {}).get("name") or "",
                          "arguments": (c.get("function") or {}).get("arguments") or ""}}
            for i, c in enumerate(calls)]
    usage = raw.get("usage") or {}
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return Completion(
        message=message,
        usage=Usage(prompt_tokens=int(usage.get("prompt_tokens") or 0),
                    completion_tokens=int(usage.get("completion_tokens") or 0),
                    cached_tokens=int(prompt_details.get("cached_tokens") or 0),
                    reasoning_tokens=int(completion_details.get("reasoning_tokens") or 0)),
        raw=raw)
