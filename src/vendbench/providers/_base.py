"""What a provider is: one abstract method, plus how it classifies its own errors."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol


class RetryKind(enum.Enum):
    """How a failed request may be retried, and whether it may have been billed."""

    NO = "no"                    # 400/401/403/404…: retrying cannot help
    TRANSIENT = "transient"      # an error answer (5xx): not billed, retry
    RATE_LIMIT = "rate_limit"    # 429: not billed, retry later, slow down
    UNKNOWN = "unknown"          # timeout, dropped connection, garbled reply: maybe billed


@dataclass(frozen=True, slots=True)
class Failure:
    kind: RetryKind
    message: str                 # already redacted
    status: int | None = None
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int
    temperature: float | None = None
    reasoning_effort: str | None = None
    api_base: str | None = None
    timeout_s: float = 120.0


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    """An assistant reply in OpenAI chat format, its usage, and the raw body."""

    message: dict[str, Any]
    usage: Usage
    raw: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    name: str

    async def complete(self, request: CompletionRequest) -> Completion: ...

    def classify(self, exc: BaseException) -> Failure: ...

    def count_tokens(self, model: str, messages: list[dict[str, Any]] | None = None,
                     tools: list[dict[str, Any]] | None = None, text: str | None = None
                     ) -> int: ...

    def missing_keys(self, model: str, api_base: str | None) -> list[str]: ...
