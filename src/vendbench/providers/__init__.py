"""Model access: the Provider protocol, litellm behind it, flow control and retries.

litellm itself is imported only when a litellm model is used (``make_provider``, or a
``TokenCounter``).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ._base import (Completion, CompletionRequest, ContextLimit, Failure, Provider, RetryKind,
                    Usage)
from ._client import Attempt, ContextLengthExceeded, ModelClient, reservation
from ._limits import AdaptiveLimit, LimitEvent, RateLimits
from ._litellm import context_limit
from ._profiles import SERVER_PROFILES, ServerProfile, profile_for, wire_profile
from ._preflight import model_problem, unreachable
from ._price_map import litellm_price
from ._reasoning import ReasoningPlan, dropped_settings, reasoning_plan
from ._tokens import TokenCounter


def make_provider(model_id: str, api_key: str | None = None) -> Provider:
    """The provider that serves ``model_id``, a ``provider/model`` string: litellm for
    every remote model. An in-process policy (``baseline/…``) or an MCP client
    (``mcp/…``) has none: asking for one is a ConfigError, as is a string without a
    provider."""
    from ..errors import ConfigError

    kind, _, name = model_id.partition("/")
    if not kind or not name:
        raise ConfigError(f"{model_id!r} is not a provider/model string such as "
                          "openai/gpt-4.1-mini")
    if kind in ("baseline", "mcp"):
        raise ConfigError(f"{model_id} is not served by a provider: "
                          + ("an in-process policy plays it" if kind == "baseline"
                             else "an MCP client plays it through `vendbench serve`"))
    from ._litellm import LiteLLMProvider

    return LiteLLMProvider(model_id, api_key)


def render_body(stored: dict[str, Any]) -> dict[str, Any]:
    """The JSON body a logged request sent (see ``Store.stored_request``), rendered by
    its provider; nothing is sent."""
    given = {f.name: stored[f.name] for f in fields(CompletionRequest) if f.name in stored}
    given["cache_points"] = tuple(given.get("cache_points") or ())
    request = CompletionRequest(**given)
    return make_provider(request.model).render_body(request)


def rebuild_request(store: Any, trial_id: str, seq: int, attempt: int = 1
                    ) -> dict[str, Any]:
    """The JSON body attempt ``attempt`` of exchange ``seq`` of ``trial_id`` sent, from
    a results ``Store``: its messages as stored (with any
    cache markers), tool schemas and parameters. Posting it again to the provider's
    endpoint reproduces the request. litellm renders it with the same transformation
    that sent it (nothing is sent here)."""
    return render_body(store.stored_request(trial_id, seq, attempt))


__all__ = ["AdaptiveLimit", "Attempt", "Completion", "CompletionRequest", "ContextLengthExceeded",
           "ContextLimit", "Failure", "LimitEvent", "ModelClient", "Provider", "RateLimits",
           "RetryKind", "SERVER_PROFILES", "ServerProfile", "TokenCounter", "Usage", "context_limit", "litellm_price",
           "profile_for", "wire_profile", "ReasoningPlan", "dropped_settings", "reasoning_plan",
           "make_provider", "model_problem", "reservation", "rebuild_request", "render_body", "unreachable"]
