"""Keeping secrets out of the database, the logs and printed errors.

Anything that may carry provider text (error messages, exception strings, and every
reply, successful ones included) passes through ``redact`` before it is stored, logged,
printed or sent back to the model. It removes the values of environment variables that
look like credentials, bearer tokens, key-shaped strings and the user and password of a
URL.
"""

from __future__ import annotations

import os
import re
from typing import Any

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.I)
# a value in angle brackets is a placeholder in advice ("Authorization: Bearer <token>"),
# never a secret: it stays, so that redaction does not hide what to do
_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)(?!<)[^\s\"',]+"),
    re.compile(r"\b(sk|pk|rk|key|api)[-_][A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)((?:api[-_]?key|x-api-key|authorization)[\"']?\s*[:=]\s*[\"']?"
               r"(?:(?:bearer|basic|token)\s+)?)(?!<|(?:bearer|basic|token)\s)[^\s\"',]+"),
    # the user and password of a URL (http://user:pass@host/v1): the host stays
    re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)(?!\*\*\*@)[^\s/@\"'<>]+@"),
)
MASK = "***"


def mask_url(url: str) -> str:
    """``url`` with its user and password (``http://user:pass@host``) masked: what is
    stored or shown of an endpoint (``http://***@host``)."""
    return _PATTERNS[-1].sub(lambda m: m.group(1) + MASK + "@", url)


def secret_values() -> list[str]:
    """Values of credential-like environment variables, longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact(text: str, extra: list[str] | None = None) -> str:
    """``text`` with every secret we know of, or that looks like one, masked."""
    return _redact(text, [*(extra or []), *secret_values()])


def redact_json(obj: Any, extra: list[str] | None = None, *, patterns: bool = True,
                known: list[str] | None = None) -> Any:
    """``obj`` (parsed JSON: a provider's reply) with every string in it redacted
    (``patterns`` False: only the known secret values, not what merely looks like one:
    for what a provider signed and must get back unchanged). ``known``: the secret values
    to mask, when the caller has them already (else ``extra`` and ``secret_values()``)."""
    values = known if known is not None else [*(extra or []), *secret_values()]

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return _redact(node, values, patterns)
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(obj)


def _redact(text: str, values: list[str], patterns: bool = True) -> str:
    for value in values:
        if value:
            text = text.replace(value, MASK)
    for pattern in _PATTERNS if patterns else ():
        text = pattern.sub(lambda m: (m.group(1) if m.lastindex and pattern is not _PATTERNS[1]
                                      else "") + MASK + ("@" if pattern is _PATTERNS[-1]
                                                         else ""), text)
    return text
