"""Per-provider flow control: adaptive concurrency (AIMD) and request/token rates.

On a 429 the concurrency limit halves and everyone waits out the Retry-After; each
success grows it back by 1/limit (about +1 per round of requests), up to its ceiling.
Every change is recorded, so a run keeps the history of how hard it was throttled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator

from aiolimiter import AsyncLimiter


@dataclass(frozen=True, slots=True)
class LimitEvent:
    provider: str
    at_seconds: float
    event: str               # "rate_limited" | "grow" | "start"
    concurrency: float
    retry_after: float | None


class AdaptiveLimit:
    """An AIMD concurrency limit with a shared pause after rate limiting. ``clock`` and
    ``sleep`` are the monotonic clock and the wait (a test gives controllable ones)."""

    def __init__(self, key: str, ceiling: int, floor: int = 1, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.key, self.ceiling, self.floor = key, max(1, ceiling), max(1, floor)
        self.limit = float(self.ceiling)
        self.in_flight = 0
        self.events: list[LimitEvent] = []
        self._clock, self._sleep = clock, sleep
        self._cond = asyncio.Condition()
        self._paused_until = 0.0
        self._t0 = clock()
        self._record("start", None)

    def _record(self, event: str, retry_after: float | None) -> None:
        self.events.append(LimitEvent(self.key, round(self._clock() - self._t0, 3), event,
                                      round(self.limit, 3), retry_after))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < int(self.limit))
            self.in_flight += 1
        try:
            wait = self._paused_until - self._clock()
            if wait > 0:
                await self._sleep(wait)
            yield
        finally:
            async with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def rate_limited(self, retry_after: float | None) -> None:
        """Multiplicative decrease, and honour Retry-After for everyone."""
        self.limit = max(float(self.floor), self.limit / 2)
        if retry_after:
            self._paused_until = max(self._paused_until, self._clock() + retry_after)
        self._record("rate_limited", retry_after)

    def succeeded(self) -> None:
        """Additive increase: about one more slot per round of successful requests."""
        if self.limit < self.ceiling:
            before = int(self.limit)
            self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)
            if int(self.limit) > before:
                self._record("grow", None)
                asyncio.get_running_loop().call_soon(self._wake)

    def _wake(self) -> None:
        async def notify() -> None:
            async with self._cond:
                self._cond.notify_all()
        asyncio.ensure_future(notify())


class RateLimits:
    """Requests and tokens per minute (aiolimiter leaky buckets); None means unlimited."""

    def __init__(self, rpm: int | None = None, tpm: int | None = None) -> None:
        self._rpm = AsyncLimiter(rpm, 60) if rpm else None
        self._tpm = AsyncLimiter(tpm, 60) if tpm else None
        self._tpm_max = tpm or 0

    async def acquire(self, tokens: int) -> None:
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None:
            await self._tpm.acquire(min(max(1, tokens), self._tpm_max))
