"""What can be known of a model string and its endpoint before anything is sent: the
provider exists, the model is named, the endpoint is a URL and something listens there.
Each problem is one line, found in seconds, before a run creates its results file."""

from __future__ import annotations

import difflib
import socket
import urllib.parse
from functools import cache

from .._secrets import mask_url

CONNECT_TIMEOUT_S = 3.0      # to see whether anything listens at an endpoint


@cache
def providers() -> frozenset[str]:
    """The providers litellm routes (the prefix of a model string)."""
    from ._litellm import import_litellm

    litellm = import_litellm()
    return frozenset(str(getattr(p, "value", p)) for p in litellm.provider_list)


def model_problem(model_id: str, api_base: str | None) -> str | None:
    """Why ``model_id`` (with ``api_base``) cannot be run, or None."""
    provider, _, name = model_id.partition("/")
    if not name.strip():
        return (f"{model_id!r} names no model after its provider: write "
                f"{provider or 'openai'}/<model>, e.g. openai/gpt-4.1-mini")
    if provider not in providers():
        close = difflib.get_close_matches(provider, sorted(providers()), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return (f"{model_id}: litellm knows no provider {provider!r}{hint}; use one of its "
                "providers (openai, anthropic, gemini, openrouter, ollama, hosted_vllm, …), "
                "or openai/<model> with --api-base for any OpenAI-compatible server")
    if api_base is not None:
        parts = urllib.parse.urlsplit(api_base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return (f"{model_id}: --api-base {mask_url(api_base)!r} is not a URL: give "
                    "http://host:port/v1 (or https://…)")
        if "@" in parts.netloc:
            # litellm's HTTP client refuses credentials in the URL beside the API key's
            # Authorization header: every request would fail on this machine
            return (f"{model_id}: --api-base {mask_url(api_base)} carries a user and "
                    "password, which litellm cannot send (the API key goes in the "
                    "Authorization header): give the endpoint without them and the "
                    "credential as the API key (OPENAI_API_KEY, or api_key_env in a panel)")
    return None


def unreachable(api_base: str, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why nothing answers at ``api_base`` (a TCP connection to its host and port), or
    None when something listens there."""
    parts = urllib.parse.urlsplit(api_base)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"--api-base {api_base!r} has no valid port"
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        if isinstance(exc, TimeoutError) or "timed out" in str(exc):
            why = f"no answer within {timeout:g} s"
        return f"nothing answers at {api_base} ({why}): is the server running?"
    return None
