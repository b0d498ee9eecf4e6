"""Model access: the Provider protocol, litellm behind it, flow control and retries.

litellm itself is imported only when a litellm model is used (``make_provider``).
"""

from __future__ import annotations

from ._base import Completion, CompletionRequest, Failure, Provider, RetryKind, Usage
from ._client import Attempt, ModelClient
from ._limits import AdaptiveLimit, LimitEvent, RateLimits


def make_provider(model_id: str, api_key: str | None = None) -> Provider:
    """The provider for a model string (today: litellm for every remote model)."""
    from ._litellm import LiteLLMProvider

    return LiteLLMProvider(api_key=api_key)


__all__ = ["AdaptiveLimit", "Attempt", "Completion", "CompletionRequest", "Failure",
           "LimitEvent", "ModelClient", "Provider", "RateLimits", "RetryKind", "Usage",
           "make_provider"]
