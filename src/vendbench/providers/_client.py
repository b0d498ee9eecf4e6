"""A model behind its flow control, with the one retry loop of vendbench.

For each attempt: reserve a conservative cost from the trial's budget (not sent if it
does not fit), wait for a concurrency slot and the rate limiters, send, then settle:
the actual cost on success, nothing for an error answer (429, 5xx), the full
reservation when the outcome is unknown (timeout, dropped connection, garbled reply).
Every attempt is reported to ``on_attempt`` so that it can be logged before the next
request is sent. tenacity retries with exponential backoff and jitter, and never sooner
than a Retry-After; 400/401/403/404 are never retried.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal

from tenacity import (AsyncRetrying, RetryCallState, retry_if_exception,
                      stop_after_attempt, wait_exponential_jitter)

from ..budgets import Budget, Price
from ..errors import ProviderError
from ._base import Completion, CompletionRequest, Failure, Provider, RetryKind
from ._limits import AdaptiveLimit, RateLimits

SAFETY_MARGIN = Decimal("1.2")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt, as the trial logs it."""

    number: int
    completion: Completion | None
    failure: Failure | None
    cost: Decimal | None          # None: unpriced model
    reserved: Decimal
    latency_ms: float
    sent_at: float = 0.0          # time.time() when the request left


class _Retry(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class ModelClient:
    """Sends one logical request for a trial, retrying as the SPEC says."""

    def __init__(self, provider: Provider, price: Price | None, limit: AdaptiveLimit,
                 rates: RateLimits, *, max_attempts: int = 6, backoff_s: float = 1.0,
                 max_backoff_s: float = 60.0) -> None:
        self.provider, self.price, self.limit, self.rates = provider, price, limit, rates
        self.max_attempts = max_attempts
        self._wait = wait_exponential_jitter(multiplier=backoff_s, max=max_backoff_s,
                                             jitter=backoff_s)
        self.usage_ratio = 1.0     # provider-reported / our counted prompt tokens, worst seen

    def reservation(self, counted_input: int, max_output: int) -> Decimal:
        """A conservative cost: counted input (scaled by what the provider reported
        before) at the input price plus the full output allowance, with a margin."""
        if self.price is None:
            return Decimal(0)
        est_input = int(counted_input * max(1.0, self.usage_ratio)) + 1
        worst = self.price.cost(est_input, max_output)
        if self.price.reasoning is not None and self.price.reasoning > self.price.output:
            worst = self.price.cost(est_input, max_output, reasoning_tokens=max_output)
        return (worst * SAFETY_MARGIN).quantize(Decimal("1e-9"))

    def _wait_for(self, state: RetryCallState) -> float:
        """Retry-After when the provider gave one (plus up to 10 % jitter), else
        exponential backoff with jitter."""
        exc = state.outcome.exception() if state.outcome else None
        after = exc.failure.retry_after if isinstance(exc, _Retry) else None
        if after is not None:
            return after * (1 + 0.1 * random.random())
        return self._wait(state)

    async def complete(self, request: CompletionRequest, budget: Budget, counted_input: int,
                       on_attempt: Callable[[Attempt], Awaitable[None]]) -> Completion:
        """Send ``request``; raises BudgetExceeded (not sent) or ProviderError (gave up)."""
        number = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts), wait=self._wait_for,
            retry=retry_if_exception(lambda e: isinstance(e, _Retry)
                                     and e.failure.kind is not RetryKind.NO),
            reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    number += 1
                    return await self._attempt(number, request, budget, counted_input,
                                               on_attempt)
        except _Retry as exc:
            f = exc.failure
            raise ProviderError(f"{request.model}: gave up after {number} attempt(s): "
                                f"{f.message}", status=f.status) from None
        raise AssertionError("unreachable")

    async def _attempt(self, number: int, request: CompletionRequest, budget: Budget,
                       counted_input: int, on_attempt: Callable[[Attempt], Awaitable[None]]
                       ) -> Completion:
        reserved = self.reservation(counted_input, request.max_tokens)
        hold = budget.reserve(reserved)            # BudgetExceeded: not sent
        start, sent_at, sent = time.perf_counter(), time.time(), False
        try:
            async with self.limit.slot():
                await self.rates.acquire(counted_input + request.max_tokens)
                start, sent_at, sent = time.perf_counter(), time.time(), True
                completion = await self.provider.complete(request)
        except asyncio.CancelledError:
            if not sent:                           # interrupted before it left: no cost
                hold.release()
                raise
            # interrupted while the provider had it: it may be billed, so it is charged in
            # full and logged like any other attempt whose outcome is unknown
            hold.charge_in_full()
            failure = Failure(RetryKind.UNKNOWN, "interrupted (Ctrl-C or SIGTERM) before the "
                              "reply arrived; charged its full reservation")
            await on_attempt(Attempt(number, None, failure, reserved if self.price else None,
                                     reserved, (time.perf_counter() - start) * 1000, sent_at))
            raise
        except Exception as exc:
            latency = (time.perf_counter() - start) * 1000
            failure = self.provider.classify(exc)
            if failure.kind is RetryKind.UNKNOWN:
                hold.charge_in_full()
            else:
                hold.release()
            if failure.kind is RetryKind.RATE_LIMIT:
                self.limit.rate_limited(failure.retry_after)
            charged = reserved if failure.kind is RetryKind.UNKNOWN else Decimal(0)
            await on_attempt(Attempt(number, None, failure,
                                     charged if self.price else None, reserved, latency, sent_at))
            raise _Retry(failure) from None
        latency = (time.perf_counter() - start) * 1000
        self.limit.succeeded()
        u = completion.usage
        if counted_input > 0 and u.prompt_tokens:
            self.usage_ratio = max(self.usage_ratio, u.prompt_tokens / counted_input)
        cost = None if self.price is None else self.price.cost(
            u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.reasoning_tokens)
        hold.settle(cost if cost is not None else Decimal(0))
        await on_attempt(Attempt(number, completion, None, cost, reserved, latency, sent_at))
        return completion
