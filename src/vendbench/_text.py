"""Small wording helpers every layer may use."""

from __future__ import annotations


def days(n: int | None) -> str:
    """``1 day``, ``30 days``."""
    return f"{n} day" if n == 1 else f"{n} days"
