"""The one exception hierarchy of vendbench.

    VendbenchError
     +-- ConfigError        bad user input: an unknown scenario, an invalid flag value
     |    +-- UnknownPriceError   a model has no price and unpriced runs were not allowed
     +-- ToolError          the agent misused a tool; its message is shown to the agent
     +-- BudgetExceeded     a reservation does not fit what is left of a USD budget
     |    +-- OverBilled          a provider billed more than the request allowed, past a cap
     +-- ProviderError      a model request failed for good (after retries, or not retriable)
     |    +-- ContextLengthExceeded   (providers) the server's context cannot hold the
     |                                prompt: the trial shortens it, or ends context_overflow
     +-- ResultsError       the results database cannot be opened or is inconsistent

Programming errors are not caught and turned into data: they crash, loudly.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from decimal import Decimal


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


class UnknownPriceError(ConfigError):
    """A model's price is unknown: we never assume $0."""


class BudgetExceeded(VendbenchError):
    """A reservation does not fit: the request is not sent."""

    def __init__(self, scope: str, needed: Decimal, left: Decimal, limit: Decimal) -> None:
        super().__init__(f"{scope} budget: a request needs ${needed:.6f} but only ${left:.6f} "
                         f"of ${limit} is left")
        self.scope, self.needed, self.left, self.limit = scope, needed, left, limit


class OverBilled(BudgetExceeded):
    """A reply cost more than its reservation (the provider reported more tokens than the
    request allowed) and took spend past a budget's cap: the trial stops."""

    def __init__(self, message: str, over: Decimal) -> None:
        VendbenchError.__init__(self, message)
        self.over = over


class ProviderError(VendbenchError):
    """A model request failed for good (a harness/provider failure, not the model's);
    the message is already free of secrets."""

    def __init__(self, message: str, *, status: int | None = None,
                 permanent: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.permanent = permanent     # the same request would fail again: resume can't help


class ResultsError(VendbenchError):
    """The results database cannot be used as asked."""
