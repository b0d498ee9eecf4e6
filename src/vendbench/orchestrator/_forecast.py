"""A run's cost forecast before it starts: per model and for the panel (design §16).

Each LLM model's trial is forecast from its scenario's measured operator
(``environment.Workload``, replayed by ``budgets.forecast``) at the model's prices, strategy, window and horizon; a model's total is its trials'
(seeds × worlds × repeats), each capped by its budget, the panel's by the run's pool.
``--max-forecast USD`` refuses a run whose panel forecast is above it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from ..budgets import Forecast, forecast
from ..environment import DEFAULT_SCENARIO, MAX_SILENT_REPLIES, Workload, scenario
from ..errors import ConfigError
from ._clients import Clients
from ._config import ModelConfig, RunConfig
from ._preflight import preflight, run_prices


@dataclass(frozen=True, slots=True)
class ModelForecast:
    """One LLM model's forecast: a trial's, what its requests reserve, its trials' total."""

    model: str
    trials: int
    trial: Forecast
    first_reserve: Decimal
    full_reserve: Decimal
    budget: Decimal | None
    full_rate_cache: bool = False     # cached input priced as plain input (no cache price)
    # reasoning: its thinking tokens a request (its budget, a ceiling), or None when the
    # model reasons with no stated budget (not in the forecast; billed as output)
    thinking: int | None = 0
    # the most requests a trial can make (its days × the day's calls × MAX_SILENT_REPLIES,
    # or its --max-turns), None when its scenario declares no daily budget (design §35.0)
    most_requests: int | None = None

    @property
    def most(self) -> Decimal | None:
        """The most a trial can spend: its budget, or without one every request it can
        make at its full reservation (None: unbounded, or unpriced)."""
        if self.budget is not None:
            return self.budget
        if self.most_requests is None or self.trial.usd is None:
            return None
        return self.most_requests * self.full_reserve

    @property
    def days_covered(self) -> int | None:
        """Days a trial's budget lasts at this forecast (None: no budget or no price)."""
        if self.budget is None or self.trial.usd is None:
            return None
        return self.trial.days_within(self.budget, self.full_reserve)

    @property
    def total(self) -> Decimal | None:
        """What the model's trials are forecast to spend, each within its budget."""
        if self.trial.usd is None:
            return None
        each = self.trial.usd if self.budget is None else min(self.trial.usd, self.budget)
        return each * self.trials

    def as_json(self) -> dict[str, Any]:
        t = self.trial
        return {"model": self.model, "trials": self.trials, "requests": t.requests,
                "input_tokens": t.input_tokens, "cached_share": round(t.cached_share, 4),
                "output_tokens": t.output_tokens,
                "trial_usd": str(t.usd) if t.usd is not None else None,
                "first_request_reserves_usd": str(self.first_reserve),
                "full_request_reserves_usd": str(self.full_reserve),
                "budget_usd": str(self.budget) if self.budget is not None else None,
                "days_covered": self.days_covered,
                "cached_at_full_rate": self.full_rate_cache,
                "thinking_tokens_per_request": self.thinking,
                "most_requests": self.most_requests,
                "most_usd": str(self.most) if self.most is not None else None,
                "total_usd": str(self.total) if self.total is not None else None}


@dataclass(frozen=True, slots=True)
class PanelForecast:
    models: list[ModelForecast]
    pool: Decimal | None
    operator: str = ""        # whose measured workload it replays, in words
    missing_keys: tuple[str, ...] = ()    # API keys a run would need (a keyless forecast)

    @property
    def total(self) -> Decimal | None:
        """The panel's forecast, within the run's pool (None: an LLM model unpriced)."""
        totals = [m.total for m in self.models]
        if any(t is None for t in totals):
            return None
        total = sum((t for t in totals if t is not None), Decimal(0))
        return total if self.pool is None else min(total, self.pool)

    def as_json(self) -> dict[str, Any]:
        total = self.total
        return {"models": [m.as_json() for m in self.models],
                "total_usd": str(total) if total is not None else None,
                "operator": self.operator,
                "pool_usd": str(self.pool) if self.pool is not None else None}


def panel_forecast(config: RunConfig, clients: Clients) -> PanelForecast:
    """The forecast of every LLM model of ``config`` (clients built, prices resolved)."""
    trials = len(config.seeds) * len(config.world_seeds) * config.repeats
    workload, operator = _workload(config.scenario)
    # an arena's model plays one trial a match per seat it takes (several: --mirror)
    per = {m.label: config.seats.count(m.label) if config.seats else 1 for m in config.models}
    return PanelForecast([_one(config, clients, m, trials * per[m.label], workload)
                          for m in config.models if not m.in_process],
                         config.total_budget_usd, operator)


def _workload(name: str) -> tuple[Workload, str]:
    """The scenario's measured workload, and whose it is in words (a scenario without
    one replays AutoVend's, and says so)."""
    entry = scenario(name)
    if entry.workload is not None:
        return entry.workload, f"{name}'s {entry.reference_model or 'reference operator'}"
    fallback = scenario(DEFAULT_SCENARIO)
    assert fallback.workload is not None
    return fallback.workload, (f"autovend's {fallback.reference_model} ({name} has no "
                               "measured workload of its own)")


def _one(config: RunConfig, clients: Clients, model: ModelConfig,
         trials: int, workload: Workload) -> ModelForecast:
    calibration = clients.calibration(model)
    plan = clients.reasoning(model)
    thinking = (plan.budget or 0) if plan.on else 0
    trial = forecast(clients.prices.get(model.label), workload=workload, days=config.days,
                     window=model.max_context_tokens, max_output=model.max_output_tokens,
                     first_prompt=calibration.scale(clients.first_prompt_tokens(model)),
                     stable_prefix=calibration.scale(clients.stable_prefix_tokens(model)),
                     strategy=model.context_strategy, low_water=model.context_low_water,
                     caching=model.prompt_caching, max_turns=config.max_turns,
                     thinking=thinking, thinking_input=model.wire.thinking_input)
    price = clients.prices.get(model.label)
    return ModelForecast(model.label, trials, trial, clients.first_request_cost(model),
                         clients.full_request_cost(model), config.trial_budget(model),
                         full_rate_cache=price is not None and price.cache_read is None
                         and trial.cached_share > 0,
                         thinking=plan.budget if plan.on else 0,
                         most_requests=most_requests(config))


def most_requests(config: RunConfig) -> int | None:
    """The most requests a trial of ``config`` can make: every day's interaction budget
    used one call a request, each after the replies without a call the loop allows
    (the next one stops the trial), or ``--max-turns`` if lower; None when the scenario
    declares no daily budget and no --max-turns bounds it (design §35.0)."""
    calls = scenario(config.scenario).calls_per_day
    bound = None if calls is None else config.days * calls * MAX_SILENT_REPLIES
    if config.max_turns is not None:
        bound = config.max_turns if bound is None else min(bound, config.max_turns)
    return bound


def refuse_above(panel: PanelForecast, limit: Decimal | None) -> None:
    """``--max-forecast``: a panel forecast above ``limit`` does not start."""
    if limit is None:
        return
    total = panel.total
    if total is None:
        raise ConfigError("--max-forecast needs every LLM model priced (a model without a "
                          "price has no forecast)")
    if total > limit:
        raise ConfigError(f"the run is forecast at ${total:.2f}, above --max-forecast "
                          f"${limit:.2f}: fewer days, seeds or models, a smaller window or "
                          "a cheaper model costs less")


def forecast_run(config: RunConfig, *, keys: bool = True) -> PanelForecast:
    """The forecast of a run of ``config`` as ``execute`` would make it, without running:
    models checked, prices resolved (an unknown price is an error), clients built.
    ``keys`` False: a forecast that sends nothing needs no API key (``compare --plan``);
    the keys missing are in the forecast's ``missing_keys``."""
    preflight(config)
    clients = Clients(config, run_prices(config), keys=keys)
    clients.prepare()
    return replace(panel_forecast(config, clients),
                   missing_keys=tuple(clients.missing_keys.values()))
