"""The scenario registry: one descriptor per world, its package loaded on first use.

A scenario outside vendbench registers through the entry-point group
``vendbench.scenarios``: one line in its distribution's metadata naming its descriptor,

    [project.entry-points."vendbench.scenarios"]
    lemonade = "lemonade_stand.scenario:SCENARIO"

looked up the first time a name is not one of the built-in worlds (or the list of them
is asked for), so choosing autovend never scans the installed distributions.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, unknown_name
from ._protocol import Environment, Match
from ._records import Metric, RecordTable

if TYPE_CHECKING:
    from ._diagnostics import Diagnosis, Diagnostic, FailureMode

# where a private world's secret salt is read from by default (never stored; see _world)
SALT_ENV = "VENDBENCH_WORLD_SALT"
DEFAULT_SCENARIO = "autovend"       # what every command plays unless told otherwise
DEFAULT_WORLD_SEED = 2026           # the paper's protocol: one frozen world, seeds vary demand


@dataclass(frozen=True)
class Workload:
    """What a busy operator asks of a model in a scenario, one tool call per request: the
    cost forecast replays it (design §16, §21). Measured by ``benchmarks/bench_workload.py``
    on the scenario's reference episode (seed 1, its long horizon)."""

    requests_by_month: tuple[int, ...]    # requests in each 30 days
    new_tokens_per_request: int           # a call, its result, a day's report
    output_tokens_per_request: int        # the assistant message carrying the call
    # sliding-window requests (window full) that still extended the previous prompt;
    # measured through the LLM path for AutoVend only (bench_cost), taken as is elsewhere
    sliding_extends: float = 0.39


@dataclass(frozen=True)
class Scenario:
    """A world behind the Environment protocol. Its package is named, not imported: it
    is loaded on first use, so choosing one scenario never imports another."""

    name: str
    package: str          # ".autovend" (relative to this package) or an absolute module
    env_class: str        # the Environment class in ``package``
    metrics: str | None   # its module with ``trial_metrics`` and ``METRICS`` (``Metric``s)
                          # and ``RECORDS`` (None: the package itself)
    summary: str
    currency: str = "CNY"  # what its amounts are in
    score_name: str = "net assets"   # what a completed trial scores, named once
    default_days: int = 180          # the horizon when none is given
    score_column: str = "net_assets"  # the score's quantity day by day: a ``days`` column
                                      # (and ``summary()`` key) whose last value it is
    policies: str = "policies"       # its module with ``POLICIES``: name -> builder(env)
    notes_tool: str | None = None    # the tool that writes the agent's notes (its memory)
    # scores on a known scale (design §18.1, §34): each trial's score as a share of what
    # the ceiling policy (privileged, deterministic) gains over the floor policy (it only
    # ends its days) on the same world, seed and horizon: (score − floor's) / (ceiling's
    # − floor's). A score below ``score_floor`` counts as the floor (what the worst
    # operator ends with: a bankrupt or unfinished trial's 0); a share below
    # ``share_low`` as that (a trial that lost more than the oracle gains), above
    # ``share_cap`` as the cap (no play of the adversarial suite reaches 1.05); where the
    # ceiling gains less than ``min_gain`` of its score over the floor, no share
    ceiling: str | None = "oracle"
    # raised when the ceiling policy's play changes: oracle scores kept in a results file
    # under another revision are computed again, never mixed with this one's
    ceiling_revision: int = 1
    floor: str = "idle"               # a policy every scenario has (``make_policy``)
    score_floor: float = 0.0          # never negative
    share_low: float = -1.0
    share_cap: float = 1.25
    min_gain: float = 0.05
    # the rule-based reference policy (seeing only what an agent sees): the leaderboard's
    # "vs base" column pairs every model's trials with its trials (None: no such column)
    reference: str | None = "order-up-to"
    # its module with the adversarial suite's ``families(draws)`` and ``NOT_APPLICABLE``
    # (design §12.4; None: no suite)
    adversarial: str | None = None
    # what its cost forecast replays (None: the forecast says it has no workload of its
    # own and replays AutoVend's)
    workload: Workload | None = None
    # its class in ``package`` that holds 2-4 operators in one market (design §23; None:
    # no arena): ``Class(seats, seed=, days=, world_seed=)`` with ``seats``, one
    # Environment per operator, ``waiting(seat)``, ``leave(seat)`` and ``nights``
    arena: str | None = None
    messages: tuple[str, ...] = ()   # an arena's tools that reach another operator
    day_tool: str = "end_day"        # the tool that ends the agent's day
    # the day's interaction budget (design §35.0): after this many tool calls in a day,
    # accepted or not, the world ends the day itself and says so (None: not declared)
    calls_per_day: int | None = None
    world_seed: int = DEFAULT_WORLD_SEED   # its world when none is named
    inspect: bool = False            # an Inspect AI task of its own: vendbench/<name>
    # its module with ``DIAGNOSTICS``, ``FAILURE_MODES``, ``NOT_APPLICABLE`` and
    # ``diagnose`` (design §32.1; None: no diagnostics)
    diagnostics: str | None = None

    @property
    def inspect_task(self) -> str | None:
        """Its Inspect AI task's name (design §22), if it has one."""
        return f"vendbench/{self.name}" if self.inspect else None

    def __post_init__(self) -> None:
        if self.score_floor < 0 or self.share_cap <= 1 or self.share_low >= 0 \
                or not 0 <= self.min_gain < 1:
            raise ValueError(f"scenario {self.name}: a score floor is at least 0, a share "
                             "cap above 1, the least share below 0, and the least gain "
                             "in [0, 1)")

    @property
    def reference_model(self) -> str | None:
        """The model id the reference policy runs under (``baseline/<name>``)."""
        return f"baseline/{self.reference}" if self.reference else None

    @property
    def ceiling_model(self) -> str | None:
        return f"baseline/{self.ceiling}" if self.ceiling else None

    @property
    def floor_key(self) -> str:
        """How its floor policy's scores are kept (``floors.policy``)."""
        return f"baseline/{self.floor}"

    @property
    def ceiling_key(self) -> str | None:
        """How its oracle scores are kept (``ceilings.policy``): the policy and, after
        its first, the revision of its play."""
        if self.ceiling_model is None:
            return None
        return self.ceiling_model + (f"@{self.ceiling_revision}"
                                     if self.ceiling_revision > 1 else "")

    def load(self, module: str | None = None) -> Any:
        return importlib.import_module(f"{self.package}{'.' + module if module else ''}",
                                       __package__)


REGISTRY: dict[str, Scenario] = {}
ENTRY_POINTS = "vendbench.scenarios"
_discovered = False
_INSTALLED: set[str] = set()     # built in or from an entry point: known to every process


def register(scenario: Scenario) -> None:
    REGISTRY[scenario.name] = scenario


def _discover() -> None:
    """Register the scenarios installed distributions declare (once a process)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINTS):
        if point.name in REGISTRY:
            continue                                  # a built-in or a registered name
        try:
            found = point.load()
        except Exception as e:                        # a broken plug-in: say which
            raise ConfigError(f"scenario {point.name!r} (entry point {point.value}) does "
                              f"not load: {type(e).__name__}: {e}") from e
        if not isinstance(found, Scenario) or found.name != point.name:
            raise ConfigError(f"entry point {point.name} = {point.value} must name a "
                              f"vendbench.environment.Scenario called {point.name!r}")
        register(found)
        _INSTALLED.add(found.name)


def installed(name: str) -> bool:
    """Whether a fresh process finds scenario ``name`` too (built in, or installed with
    an entry point), not only this one (``register`` at run time)."""
    return find(name) is not None and name in _INSTALLED


def find(name: str | None) -> Scenario | None:
    """The scenario ``name``, looking among the installed ones when it is not built in
    (None: unknown, e.g. a results file's scenario whose package is not installed)."""
    if name is None:
        return None
    if name not in REGISTRY:
        _discover()
    return REGISTRY.get(name)


def names() -> tuple[str, ...]:
    """Every scenario: built in, registered, installed."""
    _discover()
    return tuple(REGISTRY)


register(Scenario(DEFAULT_SCENARIO, ".autovend", "AutoVendEnv", "_metrics",
                  "AutoVend: 20 machines of five site types, one warehouse, 180 days",
                  notes_tool="write_notes", adversarial="_adversarial", arena="Market",
                  messages=("email_operator", "pay_operator"), inspect=True,
                  diagnostics="_diagnostics",
                  calls_per_day=40,        # the paper's budget (autovend.DAILY_TOOL_CALLS)
                  # bench_workload: 2,639 requests in 180 days; bench_cost's LLM path
                  # measured 2,239 and 390 (5.91M new, 1.03M output tokens)
                  workload=Workload((301, 380, 425, 477, 511, 545), 2_239, 390)))
register(Scenario("network", ".network", "NetworkEnv", "_metrics",
                  "Prosus-style network: six machines at three locations, suppliers by "
                  "search and e-mail, marketing, a working day; 30 days", "EUR",
                  "final bank balance", 30, "cash", notes_tool="write_note",
                  adversarial="_adversarial", arena="Market",
                  messages=("email_operator", "pay_operator"), inspect=True,
                  day_tool="wait_for_next_day", diagnostics="_diagnostics",
                  calls_per_day=100,       # network.toml's [clock] calls_per_day
                  ceiling_revision=3,     # 2: the oracle markets on a weekly schedule;
                                          # 3: it buys ahead while a unit is cheap
                  # bench_workload: 6,447 requests in 365 days, short tool results
                  workload=Workload((585, 519, 526, 526, 538, 529, 525, 529, 531, 526, 527,
                                     525), 503, 38)))
_INSTALLED.update(REGISTRY)


def scenario(name: str) -> Scenario:
    """The registered scenario ``name`` (ConfigError naming the others otherwise)."""
    entry = find(name)
    if entry is None:
        raise ConfigError(unknown_name("scenario", name, names()))
    return entry


def currency(name: str) -> str:
    """The currency of scenario ``name``'s amounts (CNY for an unknown one, as stored
    runs of an older vendbench are autovend's)."""
    entry = find(name)
    return entry.currency if entry is not None else "CNY"


def default_days(name: str) -> int:
    """Scenario ``name``'s horizon when none is given."""
    return scenario(name).default_days


def score_name(name: str) -> str:
    """What scenario ``name``'s trials score ("net assets", "reward")."""
    entry = find(name)
    return entry.score_name if entry is not None else "net assets"


def score_column(name: str) -> str:
    """The ``days`` column that holds scenario ``name``'s score quantity day by day."""
    entry = find(name)
    return entry.score_column if entry is not None else "net_assets"


def standing(env: Environment) -> float:
    """What ``env``'s trial would score on its score's quantity now (net assets for
    AutoVend, the bank balance for the network), for progress displays."""
    column = score_column(getattr(env, "scenario", ""))
    value = env.summary().get(column) if hasattr(env, "summary") else None
    return float(value) if value is not None else env.final_state()["score"]


def scenario_class(name: str) -> type:
    """The environment class of scenario ``name``; its package is imported on first use."""
    entry = scenario(name)
    cls: type = getattr(entry.load(), entry.env_class)
    return cls


def make(scenario: str = "autovend", **kwargs: Any) -> Environment:
    """Create a fresh environment of ``scenario`` (keyword arguments go to its constructor)."""
    cls = scenario_class(scenario)
    try:
        env: Environment = cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"{scenario}: {exc}") from None
    return env


def make_market(scenario_name: str, seats: int, **kwargs: Any) -> Match:
    """A fresh market of ``seats`` operators of ``scenario_name`` (design §23)."""
    entry = scenario(scenario_name)
    if entry.arena is None:
        raise ConfigError(f"scenario {scenario_name} has no arena; these have one: "
                          f"{', '.join(arena_names()) or 'none'}")
    market: Match = getattr(entry.load(), entry.arena)(seats, **kwargs)
    return market


def arena_names() -> tuple[str, ...]:
    """The scenarios whose operators can compete in one market."""
    return tuple(n for n in names() if scenario(n).arena is not None)


def trial_metrics(scenario_name: str, records: dict[str, list[dict[str, Any]]],
                  tool_calls: list[dict[str, Any]], world_seed: int | None = None,
                  world_salt: str | None = None, private: bool = False
                  ) -> dict[str, float | None]:
    """A scenario's operational metrics for one trial, from its logged rows: its record
    tables' (``records``, by table) and its tool calls (``private``: the world was salted;
    metrics of its hidden model need ``world_salt``)."""
    entry = scenario(scenario_name)
    metrics: dict[str, float | None] = entry.load(entry.metrics).trial_metrics(
        records, tool_calls, world_seed, world_salt, private)
    return metrics


def record_tables(scenario_name: str) -> tuple[RecordTable, ...]:
    """The tables scenario ``scenario_name``'s trials record (``days`` among them)."""
    entry = scenario(scenario_name)
    return tuple(entry.load(entry.metrics).RECORDS)


def display_columns(scenario_name: str) -> tuple[tuple[str, str, float, int], ...]:
    """How a leaderboard shows the scenario's metrics: (metric, header, scale,
    decimals), in order."""
    return tuple((m.name, m.header, m.scale, m.decimals) for m in metrics(scenario_name)
                 if m.header is not None)


def metric_directions(scenario_name: str) -> dict[str, str]:
    """Which way each operational metric is better: "higher", "lower", or "neither" (a
    description, not a merit: tool calls a day are as low for an idle agent as for a
    frugal one)."""
    return {m.name: m.direction for m in metrics(scenario_name)}


def metrics(scenario_name: str) -> tuple[Metric, ...]:
    """Scenario ``scenario_name``'s operational metrics, each declared once."""
    entry = scenario(scenario_name)
    return tuple(entry.load(entry.metrics).METRICS)


def diagnostics_module(scenario_name: str) -> Any:
    """Scenario ``scenario_name``'s diagnostics module (design §32.1), or None."""
    entry = scenario(scenario_name)
    return entry.load(entry.diagnostics) if entry.diagnostics else None


def diagnostics(scenario_name: str) -> tuple[Diagnostic, ...]:
    """The diagnostics scenario ``scenario_name`` declares, each once."""
    module = diagnostics_module(scenario_name)
    return tuple(module.DIAGNOSTICS) if module is not None else ()


def failure_modes(scenario_name: str) -> tuple[FailureMode, ...]:
    """The failure modes scenario ``scenario_name``'s diagnostics look for."""
    module = diagnostics_module(scenario_name)
    return tuple(module.FAILURE_MODES) if module is not None else ()


def not_applicable(scenario_name: str) -> dict[str, str]:
    """The paper's diagnostics scenario ``scenario_name`` does not have, and why."""
    module = diagnostics_module(scenario_name)
    return dict(module.NOT_APPLICABLE) if module is not None else {}


def diagnose(scenario_name: str, records: dict[str, list[dict[str, Any]]],
             calls: list[dict[str, Any]], *, seed: int, world_seed: int, days: int,
             initial: float, world_salt: str | None = None, private: bool = False
             ) -> Diagnosis | None:
    """One trial's diagnostics (None: its scenario declares none): ``records`` its
    record tables' rows, ``calls`` its tool calls with their numbers, exchanges and
    arguments, ``days`` its horizon and ``initial`` its starting score quantity."""
    module = diagnostics_module(scenario_name)
    if module is None:
        return None
    found: Diagnosis = module.diagnose(records, calls, seed=seed, world_seed=world_seed,
                                       days=days, initial=initial, world_salt=world_salt,
                                       private=private)
    return found
