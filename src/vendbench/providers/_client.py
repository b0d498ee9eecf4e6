"""A model behind its flow control, with the one retry loop of vendbench.

For each attempt: reserve a conservative cost from the trial's budget (not sent if it
does not fit), wait for a concurrency slot and the rate limiters, let the caller make the
reservation durable (``on_send``), send, then settle: the actual cost on success, nothing
for an error answer (429, 5xx), the full reservation when the outcome is unknown
(timeout, dropped connection, garbled reply) and for a reply without usage (its cost is
unknown, and unknown is never $0). Every attempt is reported to ``on_attempt`` so that
it can be logged before the next request is sent. tenacity retries with exponential
backoff and jitter, and never sooner than a Retry-After; 400/401/403/404 are never
retried, and neither is a prompt the server says exceeds its context
(``ContextLengthExceeded``: the caller must shorten it).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from tenacity import (AsyncRetrying, RetryCallState, retry_if_exception,
                      stop_after_attempt, wait_exponential_jitter)

from .._text import count
from ..budgets import Budget, Price
from ..errors import ProviderError
from ._base import (Completion, CompletionRequest, ContextLimit, Failure, Provider, RetryKind,
                    Usage, said)
from ._limits import AdaptiveLimit, RateLimits

SAFETY_MARGIN = Decimal("1.2")
SAME_ERROR_LIMIT = 3     # the same server error this many times for one request: stop
# what a server says while it is down or overloaded (retried as usual, however often it
# repeats); any other HTTP 500 that repeats word for word is about the request itself
OUTAGE = re.compile(r"internal server error|service unavailable|bad gateway|gateway time|"
                    r"overloaded|temporar|try again|timed? ?out|maintenance|capacity|"
                    r"connection|upstream", re.I)


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
    # a reply without usage: its tokens as counted here (the prompt as the caller expects
    # the server to count it, the reply by our tokenizer); it is charged its reservation
    counted: Usage | None = None

    @property
    def usage(self) -> Usage | None:
        """The reply's tokens: as the server reported them, else as counted here."""
        if self.completion is not None and self.completion.usage is not None:
            return self.completion.usage
        return self.counted


def reservation(price: Price | None, input_tokens: int, max_output: int) -> Decimal:
    """What a request of ``input_tokens`` (the caller's estimate of the server's count)
    and a reply of up to ``max_output`` tokens reserves at ``price`` (0: unpriced)."""
    if price is None:
        return Decimal(0)
    worst = price.worst_case(input_tokens + 1, max_output)
    return (worst * SAFETY_MARGIN).quantize(Decimal("1e-9"), rounding=ROUND_CEILING)


class _Retry(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class ContextLengthExceeded(ProviderError):
    """The server refused the prompt as longer than its context window (HTTP 400).

    Not the harness's failure: the caller shortens the prompt and may try again.
    ``limit`` holds the numbers the server gave, if any.
    """

    def __init__(self, message: str, limit: ContextLimit | None, status: int | None) -> None:
        super().__init__(message, status=status)
        self.limit = limit or ContextLimit()


class ModelClient:
    """Sends one logical request for a trial, retrying as design §3 says."""

    def __init__(self, provider: Provider, price: Price | None, limit: AdaptiveLimit,
                 rates: RateLimits, *, max_attempts: int = 6, backoff_s: float = 1.0,
                 max_backoff_s: float = 60.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 extra_output: int = 0) -> None:
        self.provider, self.price, self.limit, self.rates = provider, price, limit, rates
        # thinking a request may spend beyond its max_tokens (a provider that counts it
        # apart, ``ReasoningPlan.beyond_max_tokens``): reserved as output too
        self.extra_output = extra_output
        self.max_attempts = max_attempts
        self._sleep = sleep                 # how a retry waits (a test gives its own clock)
        self._wait = wait_exponential_jitter(multiplier=backoff_s, max=max_backoff_s,
                                             jitter=backoff_s)

    def reservation(self, input_tokens: int, max_output: int) -> Decimal:
        """A conservative cost: ``input_tokens`` (the caller's estimate of the server's
        count) at the dearest input-side price, the full output allowance at the dearest
        output price, with a margin."""
        return reservation(self.price, input_tokens, max_output + self.extra_output)

    def _wait_for(self, state: RetryCallState) -> float:
        """Retry-After when the provider gave one (plus up to 10 % jitter), else
        exponential backoff with jitter."""
        exc = state.outcome.exception() if state.outcome else None
        after = exc.failure.retry_after if isinstance(exc, _Retry) else None
        if after is not None:
            return after * (1 + 0.1 * random.random())
        return self._wait(state)

    async def complete(self, request: CompletionRequest, budget: Budget, input_tokens: int,
                       on_attempt: Callable[[Attempt], Awaitable[None]], *,
                       first_attempt: int = 1,
                       on_send: Callable[[int, Decimal], Awaitable[None]] | None = None
                       ) -> Completion:
        """Send ``request``; raises BudgetExceeded (not sent), ContextLengthExceeded (the
        prompt is too long for the server) or ProviderError (gave up). ``input_tokens``
        is the caller's estimate of the prompt as the server counts it; attempts are
        numbered from ``first_attempt``. ``on_send(number, reserved)`` runs just before
        each attempt leaves; whatever it raises propagates (nothing was sent)."""
        number = first_attempt - 1
        seen: list[tuple[int | None, str]] = []      # the server errors of this request

        def worth_retrying(e: BaseException) -> bool:
            if not isinstance(e, _Retry) or e.failure.kind in (RetryKind.NO,
                                                               RetryKind.CONTEXT):
                return False
            if e.failure.status == 500 and not OUTAGE.search(said(e.failure.message)):
                seen.append((e.failure.status, e.failure.message))
            return not _repeating(seen)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts), wait=self._wait_for, sleep=self._sleep,
            retry=retry_if_exception(worth_retrying), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    number += 1
                    return await self._attempt(number, request, budget, input_tokens,
                                               on_attempt, on_send)
        except _Retry as exc:
            f = exc.failure
            if f.kind is RetryKind.CONTEXT:
                raise ContextLengthExceeded(f"{request.model}: the prompt exceeds the server's "
                                            f"context: {f.message}", f.context, f.status) from None
            attempts = number - first_attempt + 1
            if _repeating(seen):
                # a server that fails the same way on the same body each time (a chat
                # template that cannot render it, a parameter it cannot serve) will do so
                # again: ended now, with its cause, and no resume can help
                raise ProviderError(
                    f"{request.model}: the server answered HTTP {f.status} with the same "
                    f"error {attempts} times for this request, so sending it again will not "
                    f"help: {f.message}", status=f.status, permanent=True) from None
            # refused as asked (a bad model string, a bad parameter) but not for the key:
            # sending the same request again cannot help
            permanent = f.kind is RetryKind.NO and f.status not in (401, 403)
            raise ProviderError(f"{request.model}: gave up after "
                                f"{count(attempts, 'attempt')}: {f.message}", status=f.status,
                                permanent=permanent) from None
        raise AssertionError("unreachable")

    async def _attempt(self, number: int, request: CompletionRequest, budget: Budget,
                       input_tokens: int, on_attempt: Callable[[Attempt], Awaitable[None]],
                       on_send: Callable[[int, Decimal], Awaitable[None]] | None
                       ) -> Completion:
        reserved = self.reservation(input_tokens, request.max_tokens)
        hold = budget.reserve(reserved)            # BudgetExceeded: not sent
        start, sent_at, sent = time.perf_counter(), time.time(), False
        try:
            async with self.limit.slot():
                await self.rates.acquire(input_tokens + request.max_tokens + self.extra_output)
                if on_send is not None:
                    await on_send(number, reserved)
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
            if not sent:                           # failed before it left (on_send)
                hold.release()
                raise
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
        if u is None:
            # no usage in the reply: what it cost is unknown, so it is charged as an
            # attempt whose outcome is unknown (its full reservation), never as $0
            hold.charge_in_full()
            counted = Usage(input_tokens, self._count_reply(completion))
            await on_attempt(Attempt(number, completion, None,
                                     reserved if self.price else None, reserved, latency,
                                     sent_at, counted=counted))
            return completion
        cost = None if self.price is None else self.price.cost(
            u.prompt_tokens, u.completion_tokens, u.cache_read_tokens, u.cache_write_tokens,
            u.reasoning_tokens)
        hold.settle(cost if cost is not None else Decimal(0))
        await on_attempt(Attempt(number, completion, None, cost, reserved, latency, sent_at))
        return completion

    def _count_reply(self, completion: Completion) -> int:
        """The reply's tokens by our own count (for the record; the charge is the
        reservation)."""
        try:
            return self.provider.count_reply(completion.message)
        except Exception:          # a tokenizer that cannot count it: the record says 0
            return 0


def _repeating(errors: list[tuple[int | None, str]]) -> bool:
    """Whether the last ``SAME_ERROR_LIMIT`` server errors are one and the same."""
    last = errors[-SAME_ERROR_LIMIT:]
    return len(last) == SAME_ERROR_LIMIT and len(set(last)) == 1
