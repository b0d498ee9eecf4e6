"""What a process needs to run a run's trials: each model's client, token counter and
calibration, and the run's worlds. The scheduler holds one; so does each worker
process, which needs nothing else of the scheduler."""

from __future__ import annotations

import os
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from .._secrets import mask_url
from ..budgets import Budget, Price
from ..environment import Environment, Match, make, make_market, record_tables
from ..errors import ConfigError
from ..providers import (AdaptiveLimit, LimitEvent, ModelClient, RateLimits, ReasoningPlan,
                         TokenCounter, make_provider, reasoning_plan)
from ._calibration import Calibration
from ._config import ModelConfig, RunConfig
from ._context import Carried
from ._spec import TrialContext, TrialOutcome, TrialSpec


class Clients:
    """A run's per-model plumbing, built on first use."""

    def __init__(self, config: RunConfig, prices: dict[str, Price | None], *,
                 keys: bool = True) -> None:
        """``keys`` False: a forecast only, which sends nothing (a missing API key is kept
        in ``missing_keys`` as a warning, never an error: design §35.2)."""
        self.config, self.prices, self.keys = config, prices, keys
        self.missing_keys: dict[str, str] = {}     # model label -> what it lacks
        self._salt = config.world_salt()       # from the environment; never stored
        self.limits: dict[str, AdaptiveLimit] = {}
        self._clients: dict[str, ModelClient] = {}
        self._token_counters: dict[str, tuple[TokenCounter, int]] = {}
        self._calibrations: dict[str, Calibration] = {}
        self._first_prompt: dict[str, tuple[int, int]] = {}  # (stable prefix, whole)
        self._plans: dict[str, ReasoningPlan] = {}
        self._probe_env: Environment | None = None

    def client(self, model: ModelConfig) -> ModelClient | None:
        if model.in_process:
            return None
        if model.label not in self._clients:
            api_key, lacks = None, None
            if model.api_key_env:
                api_key = os.environ.get(model.api_key_env)
                if not api_key:
                    lacks = (f"{model.label}: environment variable {model.api_key_env} "
                             "(api_key_env) is not set")
            provider = make_provider(model.id, api_key)
            plan = self.reasoning(model)
            if plan.problems:             # the provider would refuse every request
                raise ConfigError(f"{model.label}: {'; '.join(plan.problems)}")
            missing = provider.missing_keys(model.api_base) if lacks is None else []
            if missing:
                lacks = (f"{model.id} needs {' or '.join(missing)} in the environment (for a "
                         "local OpenAI-compatible server any non-empty value works), or "
                         "api_key_env in the panel file naming the variable that holds the "
                         "key")
            if lacks is not None:
                if self.keys:
                    raise ConfigError(lacks)
                self.missing_keys[model.label] = lacks
            # the endpoint names the provider's limits (and their events in the results
            # file): its user and password, if any, masked
            key = mask_url(model.api_base) if model.api_base else model.id.split("/", 1)[0]
            limit = self.limits.setdefault(key, AdaptiveLimit(key, model.max_concurrency))
            limit.ceiling = max(limit.ceiling, model.max_concurrency)
            self._clients[model.label] = ModelClient(
                provider, self.prices.get(model.label), limit, RateLimits(model.rpm, model.tpm),
                max_attempts=self.config.max_attempts, backoff_s=self.config.retry_backoff_s,
                extra_output=plan.beyond_max_tokens)
        return self._clients[model.label]

    def reasoning(self, model: ModelConfig) -> ReasoningPlan:
        """What the model's reasoning settings ask of its provider (read off the body
        litellm renders for them; nothing is sent)."""
        if model.label not in self._plans:
            self._plans[model.label] = reasoning_plan(make_provider(model.id),
                                                      model.request([], []))
        return self._plans[model.label]

    def counter(self, model: ModelConfig) -> tuple[TokenCounter, int]:
        """The model's token counter, and the tokens of the tool schemas."""
        if model.id not in self._token_counters:
            counter = TokenCounter(model.id)
            self._token_counters[model.id] = (counter, counter.tools(self.probe().tools))
        return self._token_counters[model.id]

    def calibration(self, model: ModelConfig) -> Calibration:
        """The model's token calibration, shared by its trials in this process."""
        if model.label not in self._calibrations:
            _, tools_tokens = self.counter(model)
            self._calibrations[model.label] = Calibration(model.max_context_tokens, tools_tokens,
                                                       model.profile)
        return self._calibrations[model.label]

    def first_prompt_tokens(self, model: ModelConfig) -> int:
        """Our count of a trial's first request: tool schemas, system prompt, day 1."""
        return self._first_counts(model)[1]

    def stable_prefix_tokens(self, model: ModelConfig) -> int:
        """Our count of what every request starts with: tool schemas, system prompt."""
        return self._first_counts(model)[0]

    def _first_counts(self, model: ModelConfig) -> tuple[int, int]:
        if model.id not in self._first_prompt:
            counter, tools_tokens = self.counter(model)
            env = self.probe()
            system, report = counter.count_now([{"role": "system", "content": env.instructions},
                                                {"role": "user", "content": env.observe()}])
            self._first_prompt[model.id] = (tools_tokens + system,
                                            tools_tokens + system + report)
        return self._first_prompt[model.id]

    def full_request_cost(self, model: ModelConfig) -> Decimal:
        """What a request reserves once the window is full (0 for an in-process policy)."""
        client = self._clients.get(model.label)
        if client is None:
            return Decimal(0)
        return client.reservation(model.max_context_tokens - model.max_output_tokens,
                                  model.max_output_tokens)

    def make_env(self, seed: int, world_seed: int) -> Environment:
        """A fresh world; in an arena, the first operator of a fresh market (what a
        run records as its prompts and tools)."""
        if self.config.seats:
            seat: Environment = self.make_match(seed, world_seed).seats[0]
            return seat
        return make(self.config.scenario, **self._world(seed, world_seed))

    def make_match(self, seed: int, world_seed: int) -> Match:
        """A fresh market of the arena's operators (design §23)."""
        assert self.config.seats is not None
        return make_market(self.config.scenario, len(self.config.seats),
                           **self._world(seed, world_seed))

    def _world(self, seed: int, world_seed: int) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"seed": seed, "days": self.config.days,
                                  "world_seed": world_seed}
        if self._salt:
            kwargs["world_salt"] = self._salt
        return kwargs

    def first_request_cost(self, model: ModelConfig) -> Decimal:
        """What a trial's first request reserves (0 for an in-process policy)."""
        client = self._clients.get(model.label)
        if client is None:
            return Decimal(0)
        tokens = self.calibration(model).scale(self.first_prompt_tokens(model))
        return client.reservation(tokens, model.max_output_tokens)

    def prepare(self) -> None:
        """Build every model's client, and fail early on missing API keys: every model
        that misses one named at once (a panel missing three keys once named the
        first, and the user fixed them one run at a time)."""
        problems = []
        for model in self.config.models:
            try:
                self.client(model)
            except ConfigError as exc:
                problems.append(str(exc))
        if len(problems) == 1:
            raise ConfigError(problems[0])
        if problems:
            raise ConfigError(f"{len(problems)} models cannot be reached:\n"
                              + "\n".join(f"  {p}" for p in problems))

    def warm_up(self) -> None:
        """Everything a first trial would otherwise load: clients, tokenizers, a world."""
        self.prepare()
        for model in self.config.models:
            if not model.in_process:
                self.counter(model)

    def trial_context(self, spec: TrialSpec, budget: Budget, writer: Any,
                      on_progress: Callable[[TrialOutcome, Environment], None]
                      ) -> TrialContext:
        """What ``run_trial`` needs for ``spec``: this scheduler's client and counter."""
        counter, tools_tokens = (None, 0) if spec.model.in_process else \
            self.counter(spec.model)
        return TrialContext(
            make_env=self.make_env, writer=writer, budget=budget,
            client=self._clients.get(spec.model.label),
            count_tokens=counter.count if counter is not None else None,
            tools_tokens=tools_tokens,
            carried=None if counter is None or not spec.model.wire.sent_back else
            Carried(counter.count_carried, spec.model.wire.turn_only),
            calibration=None if spec.model.in_process else self.calibration(spec.model),
            days=self.config.days, timeout_s=self.config.timeout_s,
            max_turns=self.config.max_turns, on_progress=on_progress,
            records=record_tables(self.config.scenario))

    @property
    def world_salt(self) -> str | None:
        """The run's secret salt (from the environment), for the oracle's private worlds."""
        return self._salt

    def world_salt_sha256(self) -> str | None:
        """The SHA-256 of the salt this run's worlds are generated with (None: public)."""
        return self.probe().summary().get("world_salt_sha256")

    def probe(self) -> Environment:
        if self._probe_env is None:
            self._probe_env = self.make_env(self.config.seeds[0], self.config.world_seeds[0])
        return self._probe_env

    def limit_events(self) -> list[LimitEvent]:
        """How each provider's limits moved in this process."""
        return [e for limit in self.limits.values() for e in limit.events]
