"""The one exception hierarchy of vendbench.

    VendbenchError
     +-- ConfigError        bad user input: an unknown scenario, an invalid flag value
     +-- ToolError          the agent misused a tool; its message is shown to the agent

Programming errors are not caught and turned into data: they crash, loudly.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class VendbenchError(Exception):
    """Root of every error vendbench raises on purpose."""


class ConfigError(VendbenchError):
    """The user asked for something that cannot be done; the message says how to fix it."""


class ToolError(VendbenchError):
    """An agent's tool call was wrong. The message is written for the agent to read."""


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> str:
    """Build an "unknown X; did you mean …? available: …" message."""
    choices = sorted(choices)
    close = difflib.get_close_matches(name, choices, n=3)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return f"unknown {kind} {name!r}.{hint} Available: {', '.join(choices)}"
