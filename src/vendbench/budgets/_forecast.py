"""What a trial will cost, forecast before a run from a measured operator (SPEC §16).

The operator is ``benchmarks/bench_cost.py``'s: the recorded ``baseline/order-up-to``
episode (seed 1) replayed through vendbench's real LLM path, one tool call per request.
Three of its measured quantities make the profile: how many requests it makes day by day
(its business grows: 301 in the first 30 days, 545 in the last 30), how many tokens each
request adds to the conversation (2,239: the previous call, its result, a day's report),
and how many it writes (390). From them the forecast replays the rolling window request
by request, for the model's strategy, window, low-water mark and output cap: the prompt
it sends, the prefix a provider's cache can read (the whole previous prompt when a
request only extends it; the system prompt and tools after an eviction) and what it
writes to the cache, all priced as the run will price them.

``block`` extends the previous prompt until an eviction; ``sliding`` drops the oldest
exchange on nearly every request once full, yet the measured episode still extended the
previous prompt on 39 % of them (exchanges differ in size), which the forecast takes as
measured. Checked against the fake server's bill for a 30-day trial by
``benchmarks/bench_forecast.py`` (the figures are in docs/costs.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ._prices import Price

# requests per 30 days of the measured operator (bench_cost, seed 1, 180 days, 2,639 in all)
REQUESTS_BY_MONTH = (301, 380, 425, 477, 511, 545)
NEW_TOKENS_PER_REQUEST = 2_239      # 5.91M tokens of new content / 2,639 requests
OUTPUT_TOKENS_PER_REQUEST = 390     # 1.03M output tokens / 2,639 requests
SLIDING_EXTENDS = 0.39              # sliding requests (window full) that needed no drop
CACHE_MIN_TOKENS = 1_024            # the shortest prefix OpenAI-style caches read


def requests_for(days: int) -> int:
    """The measured operator's requests in a trial of ``days`` (beyond 180 days, at the
    last month's rate)."""
    whole, part = divmod(days, 30)
    months = list(REQUESTS_BY_MONTH) + [REQUESTS_BY_MONTH[-1]] * max(0, whole + 1 - 6)
    return sum(months[:whole]) + round(months[whole] * part / 30)


@dataclass(frozen=True, slots=True)
class Forecast:
    """One trial's forecast: tokens and USD (``usd`` None when the model has no price);
    ``by_day`` the cumulative USD at the end of each day."""

    requests: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    usd: Decimal | None
    by_day: tuple[Decimal, ...] = ()

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    def days_within(self, budget: Decimal, reserve: Decimal) -> int:
        """Days the trial gets through before ``budget`` cannot cover one more request's
        ``reserve`` (every day when it can)."""
        for day, spent in enumerate(self.by_day):
            if spent + reserve > budget:
                return day
        return len(self.by_day)


def forecast(price: Price | None, *, days: int, window: int, max_output: int,
             first_prompt: int, stable_prefix: int, strategy: str = "block",
             low_water: float = 0.5, caching: bool = True,
             max_turns: int | None = None) -> Forecast:
    """The measured operator's trial of ``days`` for one model.

    ``first_prompt``: our count of the first request (tools, system prompt, day 1's
    report); ``stable_prefix``: the part of every prompt that never changes (tools and
    system prompt), what a cache still reads after an eviction.
    """
    limit = max(window - max_output, first_prompt)
    per_day = [requests_for(d + 1) - requests_for(d) for d in range(days)]
    if max_turns is not None:
        per_day = _capped(per_day, max_turns)
    size, previous, extends, drift = first_prompt, 0, False, 0.0
    inp = cached = written = 0
    usd, by_day = Decimal(0), []
    for today in per_day:
        for _ in range(today):
            read = (previous if extends else stable_prefix) if caching and previous else 0
            read = read if read >= CACHE_MIN_TOKENS else 0
            write = size - read if caching else 0
            inp, cached, written = inp + size, cached + read, written + write
            if price is not None:
                usd += price.cost(size, OUTPUT_TOKENS_PER_REQUEST, read, write)
            previous, size, extends = size, size + NEW_TOKENS_PER_REQUEST, True
            if size > limit:
                if strategy == "block":
                    size, extends = max(int(low_water * limit), first_prompt), False
                else:
                    drift += SLIDING_EXTENDS
                    size, extends = limit, drift >= 1
                    drift -= int(drift)
        by_day.append(usd)
    requests = sum(per_day)
    return Forecast(requests, inp, cached, requests * OUTPUT_TOKENS_PER_REQUEST,
                    usd if price is not None else None, tuple(by_day))


def _capped(per_day: list[int], turns: int) -> list[int]:
    out = []
    for n in per_day:
        out.append(min(n, turns))
        turns -= out[-1]
    return out
