"""What a provider is: one abstract method, plus how it classifies its own errors."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any, Protocol


class RetryKind(enum.Enum):
    """How a failed request may be retried, and whether it may have been billed."""

    NO = "no"                    # 400/401/403/404…: retrying cannot help
    TRANSIENT = "transient"      # an error answer (5xx): not billed, retry
    RATE_LIMIT = "rate_limit"    # 429: not billed, retry later, slow down
    UNKNOWN = "unknown"          # timeout, dropped connection, garbled reply: maybe billed
    CONTEXT = "context_length"   # the prompt exceeds the server's context: shorten it first


@dataclass(frozen=True, slots=True)
class ContextLimit:
    """What a context-length error said, where it said it (server tokens)."""

    prompt_tokens: int | None = None      # the rejected prompt, as the server counted it
    context_tokens: int | None = None     # the server's context window


@dataclass(frozen=True, slots=True)
class Failure:
    kind: RetryKind
    message: str                 # already redacted
    status: int | None = None
    retry_after: float | None = None
    context: ContextLimit | None = None   # for RetryKind.CONTEXT


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One request, provider-neutral.

    ``cache_points`` are indices of messages that end a prefix worth caching (the static
    prefix, the end of the previous request, the end of this one); ``cache_key`` groups
    the requests that share prefixes (a trial). A provider's wire adapter turns them into
    what its API understands, or ignores them.
    """

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int
    temperature: float | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None     # tokens it may think (Anthropic, Gemini)
    top_p: float | None = None
    seed: int | None = None                # the provider's sampling seed, where it has one
    api_base: str | None = None
    timeout_s: float = 120.0
    tool_choice: str = "auto"
    cache_points: tuple[int, ...] = ()
    cache_key: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one reply. ``prompt_tokens`` counts every input token, including those
    read from (``cache_read_tokens``) or written to (``cache_write_tokens``) the cache."""

    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    """An assistant reply in OpenAI chat format, its usage, and the raw body.

    ``usage`` is None when the reply reported none (or reported nothing a request of ours
    can cost: no prompt tokens): its cost is then unknown, never $0, and the attempt is
    charged its full reservation (``ModelClient``)."""

    message: dict[str, Any]
    usage: Usage | None
    raw: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""        # the model's reasoning text, where the provider returns it

    def normalised(self) -> dict[str, Any]:
        """vendbench's own shape of the reply, whatever the provider's (what the results
        file keeps as ``reply_json`` and the viewer reads): its text, its reasoning and
        its tool calls."""
        return {"text": self.message.get("content") or "", "reasoning": self.reasoning,
                "tool_calls": self.message.get("tool_calls") or []}


class Provider(Protocol):
    """One model's API (``make_provider``): it sends a request, says what a failure
    means, renders the body it would send, counts a reply and names missing keys."""

    name: str
    model: str                        # the model string it serves

    async def complete(self, request: CompletionRequest) -> Completion: ...

    def classify(self, exc: BaseException) -> Failure: ...

    def render_body(self, request: CompletionRequest) -> dict[str, Any]: ...

    def count_reply(self, message: dict[str, Any]) -> int: ...   # our count of a reply

    def missing_keys(self, api_base: str | None) -> list[str]: ...


def said(message: str) -> str:
    """An error's words without the exception-class prefixes litellm repeats in front of
    them ("litellm.NotFoundError: NotFoundError: ...")."""
    return re.sub(r"^(?:[\w.]*(?:Error|Exception)\b[: -]*)+", "", message)
