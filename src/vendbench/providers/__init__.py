"""Model access: the Provider protocol, litellm behind it, flow control and retries.

litellm itself is imported only when a litellm model is used (``make_provider``, or a
``TokenCounter``).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ._base import (Completion, CompletionRequest, ContextLimit, Failure, Provider, RetryKind,
                    Usage)
from ._client import Attempt, ContextLengthExceeded, ModelClient
from ._limits import AdaptiveLimit, LimitEvent, RateLimits
from ._litellm import context_limit
from ._tokens import TokenCounter


def make_provider(model_id: str, api_key: str | None = None) -> Provider:
    """The provider for a model string (today: litellm for every remote model)."""
    from ._litellm import LiteLLMProvider

    return LiteLLMProvider(api_key=api_key)


def render_body(stored: dict[str, Any]) -> dict[str, Any]:
    """The JSON body a logged request sent (see ``Store.stored_request``), rendered by
    its provider; nothing is sent."""
    given = {f.name: stored[f.name] for f in fields(CompletionRequest) if f.name in stored}
    given["cache_points"] = tuple(given.get("cache_points") or ())
    request = CompletionRequest(**given)
    return make_provider(request.model).render_body(request)


__all__ = ["AdaptiveLimit", "Attempt", "Completion", "CompletionRequest", "ContextLengthExceeded",
           "ContextLimit", "Failure", "LimitEvent", "ModelClient", "Provider", "RateLimits",
           "RetryKind", "TokenCounter", "Usage", "context_limit", "make_provider",
           "render_body"]
