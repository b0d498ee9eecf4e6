"""Requests sent and not yet answered, as the run's progress shows them.

Every request's reservation is logged just before it leaves, and its attempt once the
reply (or the failure) is back; the scheduler sees both rows on their way to the results
file, from trials in this process and in worker processes alike. A server that accepts
connections and never answers shows up here as requests waiting longer and longer,
instead of a silent run.
"""

from __future__ import annotations

import time
from typing import Any


class Waiting:
    """Requests in flight, keyed by (trial, request, attempt), with when they left."""

    def __init__(self) -> None:
        self._sent: dict[tuple[Any, Any, Any], float] = {}

    def rows(self, table: str, rows: list[tuple[Any, ...]], columns: tuple[str, ...] | None
             ) -> None:
        """Watch rows queued for the results file (``ResultsWriter.watch``)."""
        if table not in ("reservations", "exchanges") or not rows or columns is None:
            return
        key = (columns.index("trial_id"), columns.index("seq"), columns.index("attempt"))
        for row in rows:
            k = (row[key[0]], row[key[1]], row[key[2]])
            if table == "reservations":
                self._sent.setdefault(k, time.monotonic())
            else:
                self._sent.pop(k, None)

    def ended(self, trial_id: str) -> None:
        """A trial ended: nothing of it waits any more (a request cut off by its end)."""
        for k in [k for k in list(self._sent) if k[0] == trial_id]:
            self._sent.pop(k, None)

    def now(self) -> tuple[int, float]:
        """How many requests wait for a reply, and the longest wait so far (seconds)."""
        sent = list(self._sent.values())          # read from the display's thread too
        if not sent:
            return 0, 0.0
        return len(sent), time.monotonic() - min(sent)
