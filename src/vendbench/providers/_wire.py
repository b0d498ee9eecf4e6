"""Wire-format families: how a provider-neutral request becomes litellm's arguments,
and how a reply's usage reads back (design §6.2).

Each family asks for prompt caching the way its API caches:

    openai     openai/...        prefixes of 1,024+ tokens are cached automatically;
                                 ``prompt_cache_key`` (the trial id) sends a trial's
                                 requests to the same cache
    anthropic  anthropic/...     only prefixes that end at a block marked
                                 ``cache_control: {"type": "ephemeral"}`` (at most 4)
    implicit   gemini/, deepseek/, hosted_vllm/, ollama/, openrouter/, ...
                                 cached implicitly, or not at all: nothing to send

litellm then renders the body its provider expects (Anthropic's ``system`` blocks and
``tool_use``/``tool_result`` content, say) and maps every provider's usage onto one
shape, which ``usage_from`` reads.
"""

from __future__ import annotations

from typing import Any

from ._base import CompletionRequest, Usage
from ._profiles import cache_family

MARK = {"type": "ephemeral"}
ANTHROPIC_MAX_MARKS = 4


def family(model: str) -> str:
    """The wire-format family of a litellm model string (its server profile's cache)."""
    return cache_family(model)


def litellm_kwargs(request: CompletionRequest) -> dict[str, Any]:
    """The arguments of ``litellm.acompletion`` that shape the request body (transport
    arguments — api_base, timeout, key, retries — are the caller's)."""
    kwargs: dict[str, Any] = {
        "model": request.model, "messages": request.messages, "max_tokens": request.max_tokens}
    # a request without tools that lets the model choose (the judge's) sends no choice:
    # OpenAI refuses a tool_choice among no tools (HTTP 400)
    if request.tools or request.tool_choice not in ("auto", "none"):
        kwargs |= {"tools": request.tools, "tool_choice": request.tool_choice}
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.top_p is not None:
        kwargs["top_p"] = request.top_p
    if request.seed is not None:             # dropped by litellm where a provider has none
        kwargs["seed"] = request.seed
    if request.reasoning_effort:
        kwargs["reasoning_effort"] = request.reasoning_effort
    if request.thinking_budget is not None:
        # litellm's Anthropic-style parameter, which it maps for Gemini too
        kwargs["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    kind = family(request.model)
    if kind == "openai" and request.cache_key:
        kwargs["prompt_cache_key"] = request.cache_key
    elif kind == "anthropic" and request.cache_points:
        kwargs["messages"] = _mark(request.messages, request.cache_points)
    return kwargs


def _mark(messages: list[dict[str, Any]], points: tuple[int, ...]) -> list[dict[str, Any]]:
    """Messages with ``cache_control`` on the cache points: the first point (the static
    prefix) and the newest others, at most ANTHROPIC_MAX_MARKS in all."""
    chosen = sorted({p for p in points if 0 <= p < len(messages)})
    if len(chosen) > ANTHROPIC_MAX_MARKS:
        chosen = chosen[:1] + chosen[-(ANTHROPIC_MAX_MARKS - 1):]
    out = list(messages)
    for i in chosen:
        out[i] = {**out[i], "cache_control": MARK}
    return out


# No request has a billion tokens: a count outside 0..MAX_TOKENS is a garbled reply, not a
# bill (it would also not fit the results file's columns, nor price exactly).
MAX_TOKENS = 10**9


def usage_from(raw: dict[str, Any]) -> Usage | None:
    """A reply's usage as litellm reports it for every provider: ``prompt_tokens`` all
    input, ``prompt_tokens_details.cached_tokens`` the cache reads, and the cache writes
    (Anthropic's ``cache_creation_input_tokens``) at the top level or in the details.

    None when the reply reports no usage. litellm fills a missing ``usage`` with zeros,
    so zero prompt tokens (no request of ours has an empty prompt) is read as missing,
    and so are zero output tokens beside a reply that has output: the cost of such a
    reply is unknown, never $0. Raises ValueError for a count that is not a whole number
    in 0..MAX_TOKENS (the reply is then garbled: its outcome unknown, charged its
    reservation)."""
    usage = raw.get("usage") or {}
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    writes = usage.get("cache_creation_input_tokens") or prompt.get("cache_creation_tokens")
    found = Usage(prompt_tokens=_tokens("prompt_tokens", usage.get("prompt_tokens")),
                  completion_tokens=_tokens("completion_tokens", usage.get("completion_tokens")),
                  cache_read_tokens=_tokens("cached_tokens", prompt.get("cached_tokens")),
                  cache_write_tokens=_tokens("cache writes", writes),
                  reasoning_tokens=_tokens("reasoning_tokens",
                                           completion.get("reasoning_tokens")))
    if found.prompt_tokens == 0 or (found.completion_tokens == 0 and _has_output(raw)):
        return None
    return found


def _has_output(raw: dict[str, Any]) -> bool:
    """Whether the reply's first choice carries text or tool calls."""
    choices = raw.get("choices") or [{}]
    message = (choices[0] or {}).get("message") or {}
    return bool(message.get("content") or message.get("tool_calls"))


def _tokens(what: str, value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            value != value or not 0 <= value <= MAX_TOKENS or int(value) != value:
        raise ValueError(f"the reply's usage gives {what} = {value!r}, not a token count "
                         f"in 0..{MAX_TOKENS:,}: a garbled reply")
    return int(value)
