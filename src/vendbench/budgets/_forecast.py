"""What a trial will cost, forecast before a run from a measured operator (design §16).

The operator is the scenario's reference policy, one tool call per request: its
workload (``environment.Workload``, measured by ``benchmarks/bench_workload.py``; for
AutoVend also through vendbench's real LLM path by ``bench_cost.py``). Three measured
quantities make the profile: how many requests it makes day by day (AutoVend's business
grows: 301 in the first 30 days, 545 in the last 30; the network's holds at ~526), how
many tokens each request adds to the conversation (AutoVend 2,239: the previous call, its
result, a day's report; the network 503) and how many it writes (390; 38). From them the
forecast replays the rolling window request by request, for the model's strategy, window, low-water mark and output cap: the prompt
it sends, the prefix a provider's cache can read (the whole previous prompt when a
request only extends it; the system prompt and tools after an eviction) and what it
writes to the cache, all priced as the run will price them.

A reasoning model thinks on top of that (design §24): ``thinking`` output tokens a request
(its budget: a ceiling, as if every request thought its fill), and where the provider
counts that thinking back as input (``thinking_input``): Anthropic's the current turn's
(a day's requests after its report: the k-th carries the k before), DeepSeek's
everywhere it is sent (it grows the conversation), Gemini's not at all (only its
signatures come back).

``compact`` is ``block`` with one more request at each eviction: the model reads what is
to leave (the window above the low-water mark) and writes a summary of it, which then
stays in the window after the system prompt. The summary is assumed ``SUMMARY_TOKENS``
long (about 750 words; the tests' server writes 300-600 tokens): a model that writes
longer ones compacts more often, each compaction costing its summary's output once and
its length on every request after it (docs/costs.md).

``block`` extends the previous prompt until an eviction; ``sliding`` drops the oldest
exchange on nearly every request once full, yet the measured episode still extended the
previous prompt on 39 % of them (exchanges differ in size), which the forecast takes as
measured. Checked against the fake server's bill for a 30-day trial by
``benchmarks/bench_forecast.py`` (the figures are in docs/costs.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from ._prices import Price

CACHE_MIN_TOKENS = 1_024            # the shortest prefix OpenAI-style caches read
SUMMARY_TOKENS = 1_000              # compact: the summary a compaction writes (assumed)


class Workload(Protocol):
    """A scenario's measured operator (``environment.Workload``)."""

    @property
    def requests_by_month(self) -> tuple[int, ...]: ...     # requests in each 30 days
    @property
    def new_tokens_per_request(self) -> int: ...
    @property
    def output_tokens_per_request(self) -> int: ...
    @property
    def sliding_extends(self) -> float: ...   # full sliding requests that needed no drop


def requests_for(days: int, workload: Workload) -> int:
    """The measured operator's requests in a trial of ``days`` (beyond what was
    measured, at the last month's rate)."""
    by_month = workload.requests_by_month
    whole, part = divmod(days, 30)
    months = list(by_month) + [by_month[-1]] * max(0, whole + 1 - len(by_month))
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


def forecast(price: Price | None, *, workload: Workload, days: int, window: int,
             max_output: int, first_prompt: int, stable_prefix: int, strategy: str = "block",
             low_water: float = 0.5, caching: bool = True,
             max_turns: int | None = None, thinking: int = 0,
             thinking_input: str = "none") -> Forecast:
    """The measured operator's trial of ``days`` for one model.

    ``first_prompt``: our count of the first request (tools, system prompt, day 1's
    report); ``stable_prefix``: the part of every prompt that never changes (tools and
    system prompt), what a cache still reads after an eviction.
    """
    limit = max(window - max_output, first_prompt)
    per_day = [requests_for(d + 1, workload) - requests_for(d, workload)
               for d in range(days)]
    new, out = workload.new_tokens_per_request, workload.output_tokens_per_request + thinking
    if thinking_input == "sent":
        new += thinking
    if max_turns is not None:
        per_day = _capped(per_day, max_turns)
    size, previous, extends, drift = first_prompt, 0, False, 0.0
    inp = cached = written = compactions = 0
    usd, by_day = Decimal(0), []
    for today in per_day:
        for k in range(today):
            # the day's earlier thinking, counted again where the provider counts it
            carried = k * thinking if thinking_input == "turn" else 0
            read = (previous if extends else stable_prefix) if caching and previous else 0
            read = read if read >= CACHE_MIN_TOKENS else 0
            write = size + carried - read if caching else 0
            inp, cached, written = inp + size + carried, cached + read, written + write
            if price is not None:
                usd += price.cost(size + carried, out, read, write)
            previous, size, extends = size, size + new, True
            if size > limit and strategy == "compact":
                # the compaction: what leaves, a prefix of the request just sent (so
                # cached), and a summary
                leaving = previous - int(low_water * limit) + stable_prefix
                read = leaving if caching and leaving >= CACHE_MIN_TOKENS else 0
                inp, cached, compactions = inp + leaving, cached + read, compactions + 1
                if price is not None:
                    usd += price.cost(leaving, SUMMARY_TOKENS, read, 0)
                size, extends = max(int(low_water * limit) + SUMMARY_TOKENS,
                                    first_prompt), False
            elif size > limit:
                if strategy == "block":
                    size, extends = max(int(low_water * limit), first_prompt), False
                else:
                    drift += workload.sliding_extends
                    size, extends = limit, drift >= 1
                    drift -= int(drift)
        by_day.append(usd)
    requests = sum(per_day) + compactions
    return Forecast(requests, inp, cached, requests * out,
                    usd if price is not None else None, tuple(by_day))


def _capped(per_day: list[int], turns: int) -> list[int]:
    out = []
    for n in per_day:
        out.append(min(n, turns))
        turns -= out[-1]
    return out
