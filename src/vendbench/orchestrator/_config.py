"""Run configuration: CLI flags or a panel file expand into one frozen ``RunConfig``.

Unknown keys are errors (a typo in a nightly panel must not be silently ignored), money
is ``Decimal``, and every check says in plain words what to change.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .._secrets import mask_url
from ..environment import (DEFAULT_SCENARIO, DEFAULT_WORLD_SEED, SALT_ENV, arena_names,
                           find_scenario, policy_names, scenario_names)
from ..errors import ConfigError
from ..providers import CompletionRequest, ServerProfile, profile_for, wire_profile

MAX_SEED = 2**31 - 1          # results store seeds as INTEGER
MAX_PANEL_BYTES = 1 << 20     # a panel file of a thousand models is ~200 KB
MAX_SEATS = 4                 # an arena's operators in one match (design §23)
PositiveUSD = Annotated[Decimal, Field(gt=0, max_digits=18, decimal_places=9)]
NonNegUSD = Annotated[Decimal, Field(ge=0, max_digits=18, decimal_places=9)]


class ModelConfig(BaseModel):
    """One model of a panel (design §3.1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="litellm model string, or baseline/...")
    budget_usd: PositiveUSD | None = None
    input_usd_per_mtok: NonNegUSD | None = None
    output_usd_per_mtok: NonNegUSD | None = None
    cache_read_usd_per_mtok: NonNegUSD | None = Field(
        default=None, description="prompt tokens read from the provider's cache")
    cache_write_usd_per_mtok: NonNegUSD | None = Field(
        default=None, description="prompt tokens written to the provider's cache")
    reasoning_usd_per_mtok: NonNegUSD | None = None
    max_context_tokens: int = Field(default=60_000, ge=2_000, le=2_000_000)
    max_output_tokens: int = Field(default=4_096, ge=16, le=200_000)
    context_strategy: Literal["block", "sliding", "compact"] = Field(
        default="block", description="block: evict to the low-water mark, then only append "
                                     "(cacheable); sliding: drop the oldest exchange each "
                                     "time; compact: as block, but the model first "
                                     "summarises what leaves")
    context_low_water: float = Field(default=0.5, ge=0.1, le=0.9,
                                     description="block: share of the limit kept on eviction")
    prompt_caching: bool = Field(default=True, description="cache markers and cache key")
    tool_choice: Literal["auto", "required"] = "auto"
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    temperature: float | None = Field(default=None, ge=0, le=2)
    # nucleus sampling, and the provider's sampling seed (OpenAI's ``seed``: a request
    # param, not a trial's --seeds); part of the model's identity (design §35.7)
    top_p: float | None = Field(default=None, gt=0, le=1)
    sampling_seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    reasoning_effort: str | None = Field(
        default=None, min_length=1, max_length=20, pattern=r"^[a-z]+$",
        description="litellm's reasoning_effort (minimal, low, medium, high, ...): how it "
                    "turns into each provider's thinking, see docs/reasoning.md")
    thinking_budget_tokens: int | None = Field(
        default=None, ge=1, le=200_000,
        description="tokens the model may think before it answers (Anthropic's "
                    "budget_tokens, Gemini's thinkingBudget); part of max_output_tokens")
    rpm: int | None = Field(default=None, gt=0)
    tpm: int | None = Field(default=None, gt=0)
    max_concurrency: int = Field(default=8, ge=1, le=1_000)
    request_timeout_s: float | None = Field(
        default=None, gt=0, le=86_400,
        description="seconds a request may take; default 120, or 600 for a server on this "
                    "machine (a cold local prompt takes minutes on a small CPU)")

    @model_validator(mode="before")
    @classmethod
    def _from_label(cls, data: Any) -> Any:
        """An id written as a label (``anthropic/claude-sonnet-4-5 [effort=high]``) is the
        model string and its settings."""
        if isinstance(data, dict) and isinstance(data.get("id"), str) and "[" in data["id"]:
            parsed = model_entry(data["id"])
            for key, value in parsed.items():
                if key != "id" and data.get(key) not in (None, value):
                    raise ValueError(f"{data['id']!r} sets {key} = {value!r}, but {key} "
                                     f"= {data[key]!r} is given too")
            data = {**data, **parsed}
        return data

    @field_validator("id")
    @classmethod
    def _known_shape(cls, value: str) -> str:
        if "/" not in value:
            raise ValueError(f"{value!r} is not a litellm model string: use provider/model, "
                             "e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5")
        return value

    @model_validator(mode="after")
    def _prices_in_pairs(self) -> ModelConfig:
        if (self.input_usd_per_mtok is None) != (self.output_usd_per_mtok is None):
            raise ValueError(f"{self.id}: give both input_usd_per_mtok and "
                             "output_usd_per_mtok, or neither")
        if self.id.startswith("anthropic/") and self.api_base and \
                self.api_base.rstrip("/").endswith("/v1"):
            raise ValueError(f"{self.id}: api_base {self.api_base!r} ends in /v1, but litellm "
                             "appends /v1/messages to an Anthropic base itself (it would post "
                             f"to {self.api_base.rstrip('/')}/v1/messages): drop the /v1")
        if self.reasoning_effort is not None and self.thinking_budget_tokens is not None:
            raise ValueError(f"{self.id}: give reasoning_effort or thinking_budget_tokens, not "
                             "both (litellm turns an effort into a thinking budget itself)")
        if self.thinking_budget_tokens is not None and \
                self.thinking_budget_tokens >= self.max_output_tokens:
            raise ValueError(f"{self.id}: max_output_tokens ({self.max_output_tokens:,}) must "
                             f"be above thinking_budget_tokens "
                             f"({self.thinking_budget_tokens:,}): the thinking is part of the "
                             "output, and what is left is the answer's")
        if self.max_output_tokens >= self.max_context_tokens:
            raise ValueError(f"{self.id}: max_output_tokens ({self.max_output_tokens}) must be "
                             f"below max_context_tokens ({self.max_context_tokens}): the "
                             "difference is what the conversation may take")
        return self

    def price_fields(self) -> dict[str, Decimal]:
        """The prices this entry sets, USD per million tokens, by price field."""
        given = {"input": self.input_usd_per_mtok, "output": self.output_usd_per_mtok,
                 "cache_read": self.cache_read_usd_per_mtok,
                 "cache_write": self.cache_write_usd_per_mtok,
                 "reasoning": self.reasoning_usd_per_mtok}
        return {k: v for k, v in given.items() if v is not None}

    @property
    def in_process(self) -> bool:
        return self.id.startswith("baseline/")

    @property
    def label(self) -> str:
        """The model's identity on every board (design §24.2): its model string, and the
        settings that change what it does, when set (``openai/o4-mini [effort=high]``).
        Two entries of one model with other settings are two models; ``model_entry``
        reads a label back."""
        settings = [f"{short}={_setting(getattr(self, name))}" for short, name in IDENTITY
                    if getattr(self, name) not in (None, DEFAULTS.get(name))]
        return f"{self.id} [{', '.join(settings)}]" if settings else self.id

    @property
    def timeout_s(self) -> float:
        """How long one request may take: as configured, else its server profile's
        (120 s, or 600 s for a server on this machine)."""
        if self.request_timeout_s is not None:
            return self.request_timeout_s
        return self.profile.timeout_s

    @property
    def profile(self) -> ServerProfile:
        """The kind of server the model is served by, and its quirks."""
        return profile_for(self.id, self.api_base)

    def request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                **over: Any) -> CompletionRequest:
        """A request of this model's with its settings (``over``: fields set otherwise,
        e.g. a probe's smaller ``max_tokens``, a trial's cache key)."""
        given: dict[str, Any] = {
            "model": self.id, "messages": messages, "tools": tools,
            "max_tokens": self.max_output_tokens, "temperature": self.temperature,
            "top_p": self.top_p, "seed": self.sampling_seed,
            "reasoning_effort": self.reasoning_effort,
            "thinking_budget": self.thinking_budget_tokens, "api_base": self.api_base,
            "timeout_s": self.timeout_s, "tool_choice": self.tool_choice}
        return CompletionRequest(**{**given, **over})

    @property
    def wire(self) -> ServerProfile:
        """The profile of the model's API, wherever it is served (its wire format)."""
        return wire_profile(self.id)


# the settings that are part of a model's identity, as a label writes them
IDENTITY = (("effort", "reasoning_effort"), ("thinking", "thinking_budget_tokens"),
            ("temperature", "temperature"), ("top_p", "top_p"), ("seed", "sampling_seed"),
            ("context", "context_strategy"))
DEFAULTS = {"context_strategy": "block"}          # a setting at its default is not shown
_LABEL = re.compile(r"^(?P<id>[^\s\[\]]+)\s*\[(?P<settings>[^\[\]]*)\]$")


def _setting(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def model_entry(text: str) -> dict[str, Any]:
    """A model as a panel entry, from its model string or its label
    (``anthropic/claude-sonnet-4-5 [effort=high, thinking=2048]``, see
    ``ModelConfig.label``); a ConfigError says what is wrong with a label."""
    if "[" not in text and "]" not in text:
        return {"id": text}
    match = _LABEL.match(text.strip())
    if match is None:
        raise ConfigError(f"{text!r} is not a model label: write it as MODEL [name=value, "
                          "...], e.g. 'anthropic/claude-sonnet-4-5 [effort=high]'")
    names = dict(IDENTITY)
    entry: dict[str, Any] = {"id": match["id"]}
    for item in filter(None, (part.strip() for part in match["settings"].split(","))):
        name, equals, value = (x.strip() for x in item.partition("="))
        if not equals or name not in names or not value:
            raise ConfigError(f"{text!r}: {item!r} is not a setting; a label sets "
                              f"{', '.join(f'{n}=...' for n in names)}")
        field = names[name]
        if field in entry:
            raise ConfigError(f"{text!r} sets {name} twice")
        entry[field] = value
    return entry


class RunConfig(BaseModel):
    """Everything a run needs; stored with the run so that it can be resumed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="adhoc", min_length=1, max_length=200)
    scenario: str = DEFAULT_SCENARIO
    days: int = Field(default=180, ge=1, le=365)
    seeds: list[int] = Field(default_factory=lambda: [1], min_length=1)
    repeats: int = Field(default=1, ge=1, le=100)
    workers: int = Field(default=8, ge=1, le=10_000)
    processes: int | None = Field(default=None, ge=1, le=64,
                                  description="processes running LLM trials (None: auto)")
    total_budget_usd: PositiveUSD | None = None
    max_forecast_usd: PositiveUSD | None = Field(
        default=None, description="refuse a run whose cost forecast is above it")
    budget_usd: PositiveUSD | None = Field(default=None, description="default per trial")
    timeout_s: float | None = Field(default=None, gt=0, description="wall clock per trial")
    max_turns: int | None = Field(default=None, ge=1, description="LLM requests per trial")
    allow_unpriced: bool = False
    max_attempts: int = Field(default=6, ge=1, le=50, description="per request, retries incl.")
    retry_backoff_s: float = Field(default=1.0, gt=0, le=600)
    world_seeds: list[int] = Field(
        default_factory=lambda: [DEFAULT_WORLD_SEED], min_length=1,
        description="frozen worlds; trials are models × worlds × seeds × repeats")
    world_salt_env: str | None = Field(
        default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="the environment variable holding a secret salt that makes every world "
                    f"private (default {SALT_ENV}, when set); the salt is never stored")
    models: list[ModelConfig] = Field(min_length=1)
    seats: list[str] | None = Field(
        default=None, description="an arena (design §23): the model id of each operator of a "
                                  "match, in seat order for the first seed; the seats rotate "
                                  "over the seeds")
    mirror: bool = Field(default=False, description="an arena may list a model more than "
                                                    "once (identical operators)")
    comparison: str | None = Field(
        default=None, description="the comparison this run is a batch of (design §31.2: "
                                  "leaderboard and trend leave such runs out unless asked)")

    @model_validator(mode="before")
    @classmethod
    def _scenario_defaults(cls, data: Any) -> Any:
        """No horizon or world given: the scenario's own (180 days for autovend, 30 for
        network; the paper's frozen world)."""
        if not isinstance(data, dict):
            return data
        entry = find_scenario(data.get("scenario") or DEFAULT_SCENARIO)
        if entry is not None and data.get("days") is None:
            data = {**data, "days": entry.default_days}
        if entry is not None and data.get("world_seeds") is None and \
                data.get("world_seed") is None:
            data = {**data, "world_seeds": [entry.world_seed]}
        return data

    @model_validator(mode="before")
    @classmethod
    def _one_world_seed(cls, data: Any) -> Any:
        """``world_seed = W`` (a panel or a stored config of before) is ``world_seeds = [W]``."""
        if isinstance(data, dict) and "world_seed" in data:
            data = dict(data)
            single = data.pop("world_seed")
            if single is not None:
                if data.get("world_seeds") not in (None, [single]):
                    raise ValueError("give world_seeds or world_seed, not both")
                data["world_seeds"] = [single]
        return data

    @field_validator("scenario")
    @classmethod
    def _known_scenario(cls, value: str) -> str:
        if find_scenario(value) is None:
            raise ValueError(f"unknown scenario {value!r}; known: "
                             f"{', '.join(scenario_names())}")
        return value

    @field_validator("seeds", "world_seeds")
    @classmethod
    def _seeds(cls, seeds: list[int]) -> list[int]:
        if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be distinct non-negative integers")
        if any(s > MAX_SEED for s in seeds):
            raise ValueError(f"seeds must be at most {MAX_SEED:,} (they are stored as "
                             "32-bit integers)")
        return seeds

    @property
    def names_worlds(self) -> bool:
        """Whether trials say which world they play (anything but the scenario's one
        world)."""
        entry = find_scenario(self.scenario)
        return self.world_seeds != [entry.world_seed if entry else DEFAULT_WORLD_SEED]

    def salt_env(self) -> str:
        """The environment variable a private world's salt is read from."""
        return self.world_salt_env or SALT_ENV

    def world_salt(self) -> str | None:
        """The secret salt, from the environment (never from the config), or None. A
        panel that names a variable requires it to be set."""
        import os

        salt = os.environ.get(self.salt_env(), "")
        if not salt and self.world_salt_env:
            raise ConfigError(f"world_salt_env names {self.world_salt_env}, which is not set: "
                              f"export {self.world_salt_env}=<your secret salt> (it is never "
                              "stored; only its SHA-256 is)")
        return salt or None

    @model_validator(mode="after")
    def _distinct_models(self) -> RunConfig:
        labels = [m.label for m in self.models]
        if len(set(labels)) != len(labels):
            twice = sorted({x for x in labels if labels.count(x) > 1})
            raise ValueError(f"a model is listed twice with the same settings: "
                             f"{', '.join(twice)} (give one entry other settings, e.g. "
                             "reasoning_effort, to rank both)")
        policies = policy_names(self.scenario, arena=bool(self.seats))   # its own
        for model in self.models:
            if model.in_process and model.id.removeprefix("baseline/") not in policies:
                raise ValueError(f"unknown reference policy {model.id!r} for {self.scenario}; "
                                 "available: " + ", ".join(f"baseline/{p}" for p in policies))
        return self

    @model_validator(mode="before")
    @classmethod
    def _seats_by_label(cls, data: Any) -> Any:
        """Each seat names a model by its label, or by its model string where only one
        entry has it (``arena A B --reasoning-effort low`` seats A's entry)."""
        if not isinstance(data, dict) or not data.get("seats") or not data.get("models"):
            return data
        try:
            labels = [ModelConfig.model_validate(m).label for m in data["models"]]
        except ValidationError:
            return data                       # the models' own errors are said below
        ids = [label.split(" [", 1)[0] for label in labels]
        seats = []
        for seat in data["seats"]:
            entry = model_entry(seat) if isinstance(seat, str) else {"id": seat}
            named = ModelConfig.model_validate(entry).label if len(entry) > 1 else seat
            if named not in labels and ids.count(named) == 1:
                named = labels[ids.index(named)]
            seats.append(named)
        return {**data, "seats": seats}

    @model_validator(mode="after")
    def _arena(self) -> RunConfig:
        if self.seats is None:
            if self.mirror:
                raise ValueError("mirror applies to an arena (seats) only")
            return self
        problem = arena_problem(self.scenario, self.seats, len(self.seeds), self.mirror)
        if problem:
            raise ValueError(problem)
        if sorted(set(self.seats)) != sorted(m.label for m in self.models):
            raise ValueError(f"seats {self.seats} must name exactly the models "
                             f"{[m.label for m in self.models]}")
        if self.processes not in (None, 1) and any(not m.in_process for m in self.models):
            raise ValueError("an arena's operators share one world in one process: "
                             "processes does not apply")
        return self

    def model(self, label: str) -> ModelConfig:
        """The run's model whose label (``ModelConfig.label``) is ``label``."""
        return next(m for m in self.models if m.label == label)

    def lineup(self, index: int) -> list[str]:
        """The model in each seat of the match on the ``index``-th seed: the seats
        rotate one place a seed (over k seeds each model takes each seat once)."""
        assert self.seats is not None
        k = len(self.seats)
        return [self.seats[(seat + index) % k] for seat in range(k)]

    def trial_budget(self, model: ModelConfig) -> Decimal | None:
        return model.budget_usd if model.budget_usd is not None else self.budget_usd

    def stored(self) -> RunConfig:
        """The config as a results file keeps it: the user and password of every
        endpoint (``http://user:pass@host/v1``) masked, should one be there (preflight
        refuses such an endpoint: litellm cannot send them)."""
        return self.model_copy(update={"models": [
            m.model_copy(update={"api_base": mask_url(m.api_base)}) if m.api_base else m
            for m in self.models]})


def arena_problem(scenario: str, seats: list[str], seeds: int, mirror: bool) -> str | None:
    """What is wrong with an arena of ``seats`` (model ids in seat order) over ``seeds``
    seeds, in one line, or None: a match has 2-4 operators, each model once unless
    ``mirror``, and the seeds rotate the seats evenly (a cyclic Latin square)."""
    entry = find_scenario(scenario)
    if entry is None or entry.arena is None:
        return (f"scenario {scenario} has no arena; these have one: "
                f"{', '.join(arena_names()) or 'none'}")
    k = len(seats)
    if not 2 <= k <= MAX_SEATS:
        return f"a match has 2-{MAX_SEATS} operators (models), got {k}"
    twice = sorted({m for m in seats if seats.count(m) > 1})
    if twice and not mirror:
        return (f"{', '.join(twice)} is listed twice: a model plays itself only with "
                "--mirror (identical operators)")
    if seeds % k:
        fit = " or ".join(str(n) for n in range(k, 3 * k + 1, k))
        return (f"{seeds} seed(s) cannot rotate {k} seats evenly (each model takes each "
                f"seat equally often): give a multiple of {k}, e.g. {fit} seeds")
    return None


def model_slugs(models: list[str]) -> dict[str, str]:
    """A readable id part per model string; models whose slugs would collide
    (``openai/fake-a`` and ``openai/Fake_A``) get a short hash of the exact string too."""
    slugs = {m: re.sub(r"[^A-Za-z0-9]+", "-", m).strip("-").lower() for m in models}
    taken = [s for s in slugs.values()]
    return {m: s if taken.count(s) == 1 else
            f"{s}-{hashlib.sha256(m.encode()).hexdigest()[:6]}" for m, s in slugs.items()}


def load_panel(path: str | Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Read a panel TOML file (design §3.1); ``overrides`` are CLI flags given with it."""
    file = Path(path)
    if file.exists() and not file.is_dir() and not file.is_file():
        # a named pipe or a device (/dev/zero) would be read without end
        raise ConfigError(f"panel file {path} is not a regular file; give the .toml file")
    if file.is_file() and file.stat().st_size > MAX_PANEL_BYTES:
        raise ConfigError(f"panel file {path} is {file.stat().st_size:,} bytes; a panel is "
                          f"at most {MAX_PANEL_BYTES:,} (is it the right file?)")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"panel file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"panel file {path} is a directory; give the .toml file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"panel file {path} is not UTF-8 text (byte {exc.start}); save it "
                          "as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"panel file {path} cannot be read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"panel file {path} is not valid TOML: {exc}") from None
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return build_config(data, source=str(path))


def build_config(data: dict[str, Any], source: str = "flags") -> RunConfig:
    """Validate a config dict into a RunConfig, or raise ConfigError saying what is wrong."""
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        problems = [_problem(err) for err in exc.errors(include_url=False)]
        if len(problems) == 1:          # one line, in the user's words (design §35.6)
            raise ConfigError(f"invalid run configuration ({source}): {problems[0]}") \
                from None
        raise ConfigError(f"invalid run configuration ({source}):\n  " + "\n  ".join(problems))\
            from None


def _problem(err: Any) -> str:
    """One of pydantic's errors as a user reads it: its message without pydantic's
    "Value error, ", after where it is (a model's id names itself: a "models.0.id: Value
    error, ..." dump said less than the message alone)."""
    message = str(err["msg"]).removeprefix("Value error, ")
    loc = [str(p) for p in err["loc"]]
    if loc[:1] == ["models"] and loc[-1:] == ["id"]:
        return message
    return f"{'.'.join(loc) or 'config'}: {message}"
