"""``vendbench compare``: paired batches until the evidence decides or the budget ends.

Each batch is a run of the same results file (named ``compare ID batch K``): every model
still in the race plays the same worlds and seeds, so each (world, seed) is a pair.
After it, every pairwise confidence sequence is updated (``_race.assess``) and the step
stored. Before the next batch its cost is forecast (``orchestrator.forecast_run``); a
batch that would pass the budget is not started: the comparison ends inconclusive, with
a guess at what deciding would take, and a budget that cannot pay for the first batch
is refused before anything runs.

Scores are shares of the oracle's gain (design §34: (score − idle) / (oracle − idle) on the
same world, seed and horizon, idle an operator that only ends its days; an unfinished
trial's 0 included, floored and capped), so they lie in known bounds and the sequence
holds for any shape of scores. The bounds are fixed before the first batch and stored
with the comparison: above, the scenario's cap; below, the least score the world allows
(0) as a share on the first batch's worlds and seeds, with room for one whose oracle
gains a fifth less (``BOUNDS_ROOM``); a share below that (an unfinished trial on a seed
whose oracle gains still less) counts as it. A pair with a harness
error or an interrupted trial is dropped, never scored, and so is a pair one of whose
trials the comparison's own budget stopped (its next request no longer fit the pool):
that is the budget's doing, not the model's. Each model's share of unfinished trials and
of trials above the oracle is kept beside every verdict. A comparison continues after a
crash from what its runs hold (``resume``): the scores are always read back from the
runs, never kept apart from them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..environment import find_scenario, no_share, share_bounds
from ..errors import ConfigError, ResultsError
from ..budgets import POOL_SCOPE
from ..orchestrator import RunConfig, execute, forecast_run
from ..results import (SET_APART, ComparisonRow, PairKey, ComparisonStep, Store, anchor_rows,
                       anchors_for, comparison, comparison_steps, latest_attempts,
                       missing_anchors, new_run_id, run_named, salt_hash as _salt_hash,
                       shares)
from ._plan import PLAN_REPS, Plan, plan
from ._race import INCONCLUSIVE, WINNER, Assessment, assess, pairs_to_decide

Events = Callable[[str, dict[str, Any]], None]


class CompareSpec(BaseModel):
    """What a comparison runs and when it stops (stored with it, as JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: RunConfig                       # the models, horizon, worlds, per-trial budgets
    budget_usd: Decimal | None = Field(default=None, gt=0)
    # 200: identical steady play is found equivalent within 5 % of the oracle's gain
    # after about 180 pairs in shares within [-0.5, 1.25] (docs/compare.md); at 50 an
    # "equivalent" could never be reached
    max_pairs: int = Field(default=200, ge=2, le=10_000)
    # in oracle shares, fixed before the first pair (not scaled by any running mean)
    margin: float = Field(default=0.05, gt=0, lt=1)
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    batch: int = Field(default=2, ge=1, le=1_000)
    estimand: Literal["mean", "win-rate"] = "mean"
    assume: Literal["gaussian"] | None = None
    # the interval its shares are kept in, fixed before the first batch (``fix_bounds``;
    # None: a comparison stored before shares of the oracle's gain, design §34)
    bounds: tuple[float, float] | None = None

    @model_validator(mode="after")
    def _gaussian_for_the_mean(self) -> CompareSpec:
        if self.assume == "gaussian" and self.estimand != "mean":
            raise ValueError("--assume gaussian is for the mean difference, not a win rate")
        return self

    @property
    def models(self) -> list[str]:
        return [m.label for m in self.base.models]

    @property
    def seeds_per_batch(self) -> int:
        return max(1, math.ceil(self.batch / len(self.base.world_seeds)))


@dataclass
class Outcome:
    """Where a comparison ended (or stands)."""

    row: ComparisonRow
    steps: list[ComparisonStep]
    assessment: Assessment | None
    dropped: int = 0
    would_take: str | None = None
    scores: dict[str, list[float]] = field(default_factory=dict)
    costs: dict[str, list[Decimal]] = field(default_factory=dict)    # per trial, by model
    # per model: (unfinished trials, trials above the oracle, trials scored)
    shares: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    empty_batches: int = 0               # the last batches in a row that added no pair
    spec: CompareSpec | None = None      # what it runs, as stored (its bounds fixed)


def _name(comparison_id: str, step: int) -> str:
    return f"compare {comparison_id} batch {step}"


async def compare(spec: CompareSpec, db: str, *, resume: str | None = None,
                  on_event: Events | None = None, replay_only: bool = False,
                  extend: bool = False, on_run_event: Events | None = None) -> Outcome:
    """Run (or continue) a comparison into ``db`` (``replay_only``: only read back where
    the stored comparison ``resume`` stands; ``extend``: continue one that ended
    inconclusive, under the new budget or pair cap stored with it; ``on_run_event``
    hears each batch's run as ``execute``'s ``on_event`` does, for a live line)."""
    if len(spec.models) < 2:                  # (the run config refuses a model twice)
        raise ConfigError("compare needs two or more different models")
    emit = on_event or (lambda kind, data: None)
    if (entry := find_scenario(spec.base.scenario)) is None or entry.ceiling is None:
        raise ConfigError(f"compare decides on oracle shares, and scenario "
                          f"{spec.base.scenario} declares no oracle")
    if resume is None:
        _first_batch_fits(spec)               # fail early: the file untouched, nothing run
        spec = await fix_bounds(spec, db)
        row = ComparisonRow(f"cmp-{new_run_id()}", dt.datetime.now(dt.UTC).replace(tzinfo=None),
                            spec.base.scenario, spec.base.days, spec.models,
                            spec.model_copy(update={"base": spec.base.stored()}
                                            ).model_dump_json(), "running", None, None, None, 0,
                            Decimal(0), None)
        with Store(db) as store:
            store.write(row)
        steps: list[ComparisonStep] = []
    else:
        with Store(db, read_only=True) as store:
            row = comparison(store, resume)
            steps = comparison_steps(store, row.comparison_id)
        spec = CompareSpec.model_validate_json(row.config_json)
        again = extend and row.status == "decided" and row.verdict == INCONCLUSIVE
        if (row.status == "decided" and not again) or replay_only:
            state = _replay(spec, db, row, steps)
            return replace(state, row=replace(state.row, status=row.status,
                                              verdict=row.verdict, reason=row.reason))
        if spec.bounds is None:
            raise ConfigError(f"comparison {row.comparison_id} was made in shares of the "
                              "oracle's score, before shares of its gain over doing "
                              "nothing: its stored steps are in another unit, so it cannot "
                              "go on (--show prints it); start a new comparison")
        if row.status != "running":           # interrupted: it runs again
            row = _with(row, status="running")
            with Store(db) as store:
                store.write(row)
    state = _replay(spec, db, row, steps)
    emit("started", {"comparison_id": row.comparison_id, "resumed": resume is not None,
                     "steps": len(steps), "spec": spec})
    try:
        while True:
            a = state.assessment
            if a is not None and a.verdict is not None:
                return _finish(db, spec, state, a.verdict, _reason(a, spec))
            step = len(state.steps) + 1
            survivors = a.survivors if a is not None else spec.models
            seeds = list(range((step - 1) * spec.seeds_per_batch + 1,
                               step * spec.seeds_per_batch + 1))
            pairs_next = len(seeds) * len(spec.base.world_seeds)
            pairs_now = state.row.pairs
            if pairs_now + pairs_next > spec.max_pairs:
                return _finish(db, spec, state, INCONCLUSIVE,
                               f"{pairs_now} pairs of at most {spec.max_pairs} (--max-pairs)")
            config = spec.base.model_copy(update={
                "models": [m for m in spec.base.models if m.label in survivors],
                "seeds": seeds, "name": _name(row.comparison_id, step),
                "comparison": row.comparison_id})
            forecast = _batch_forecast(config, state.costs, pairs_next)
            spent = state.row.spent_usd
            if spec.budget_usd is not None:
                if forecast is None:
                    raise ConfigError("a compare --budget needs every LLM model priced")
                left = spec.budget_usd - spent
                if left <= 0 or forecast > left:
                    return _finish(db, spec, state, INCONCLUSIVE,
                                   f"the next batch is forecast at ${forecast:.2f}, and "
                                   f"${left:.2f} of the ${spec.budget_usd:.2f} budget is left")
                # a batch starts only when what is left covers what its trials may
                # spend: a trial cut short by the pool drops its pair, its money spent for
                # nothing (design §35.1)
                trials, most = _batch_budgets(config, pairs_next)
                if most is not None and most > left:
                    return _finish(db, spec, state, INCONCLUSIVE,
                                   f"${left:.2f} of the ${spec.budget_usd:.2f} budget is "
                                   f"left, less than the next batch's {trials} trials may "
                                   f"spend at their --trial-budget (${most:.2f})")
                config = config.model_copy(update={"total_budget_usd": left})
            emit("batch", {"step": step, "seeds": seeds, "models": survivors,
                           "forecast": forecast})
            with Store(db, read_only=True) as store:
                earlier = run_named(store, config.name)
            finished = await _run_batch(config, db, earlier, on_run_event)
            empty = state.empty_batches
            state = _replay(spec, db, state.row, state.steps, add=(step, finished))
            state.empty_batches = empty + 1 if state.row.pairs == pairs_now else 0
            emit("step", {"outcome": state})
            if state.empty_batches >= 2:
                return _finish(db, spec, state, INCONCLUSIVE,
                               "two batches in a row added no pair: every pair had a trial "
                               "set apart (a harness or provider error, an interruption, or "
                               "the comparison's budget); see vendbench runs for their "
                               "reasons")
    except BaseException:
        with Store(db) as store:
            store.write(_with(state.row, status="interrupted"))
        raise


def _first_batch_fits(spec: CompareSpec) -> None:
    """Refuse, before anything is written or run, a comparison whose first batch the
    budget cannot pay for (forecast as ``run`` forecasts; models and prices checked)."""
    seeds = list(range(1, spec.seeds_per_batch + 1))
    config = spec.base.model_copy(update={"seeds": seeds})
    forecast = forecast_run(config)
    if spec.budget_usd is None:
        return
    total = forecast.total
    if total is None:
        raise ConfigError("a compare --budget needs every LLM model priced")
    trials, most = _batch_budgets(config, spec.seeds_per_batch * len(spec.base.world_seeds))
    if most is not None and most > spec.budget_usd:
        raise ConfigError(f"the first batch's {trials} trials may spend ${most:.2f} at their "
                          f"--trial-budget, above the --budget ${spec.budget_usd:.2f}: "
                          "nothing was run. Raise --budget, or lower --batch or "
                          "--trial-budget")
    if total > spec.budget_usd:
        raise ConfigError(f"the first batch ({len(seeds) * len(spec.base.world_seeds)} pairs) "
                          f"is forecast at ${total:.2f}, above the --budget "
                          f"${spec.budget_usd:.2f}: nothing was run. Raise --budget, or "
                          "lower --batch, --days or --trial-budget")


BOUNDS_ROOM = 1.25     # the least share allowed for: the first batch's, x this


def _first_keys(spec: CompareSpec) -> list[tuple[int, int]]:
    return [(w, s) for w in spec.base.world_seeds for s in range(1, spec.seeds_per_batch + 1)]


async def fix_bounds(spec: CompareSpec, db: str | None = None) -> CompareSpec:
    """``spec`` with the bounds its shares are kept in, from the anchors of its first
    batch's worlds and seeds (computed now, and kept in ``db`` so the batch's run does
    not play them again); ConfigError where the oracle gains too little over doing
    nothing there to make shares of."""
    if spec.bounds is not None:
        return spec
    keys, salt = _first_keys(spec), spec.base.world_salt()
    scenario, days = spec.base.scenario, spec.base.days
    kept: list[Any] = []
    if db is not None:
        with Store(db) as store:
            todo = missing_anchors(store, scenario, days, keys, salt)
        kept = await asyncio.to_thread(anchor_rows, scenario, days, todo, salt)
        with Store(db) as store:
            for row in kept:
                store.write(row)
            anchors = anchors_for(store, scenario, days, keys, _salt_hash(salt), salt)
    else:
        anchors = await asyncio.to_thread(_anchors_in_memory, scenario, days, keys, salt)
    if (why := no_share(anchors.values(), scenario)) is not None:
        raise ConfigError(f"compare decides on shares of the oracle's gain, and at {days} "
                          f"days there is {why}; choose a longer --days")
    low, high = share_bounds(scenario, anchors.values())
    floor = find_scenario(scenario)
    least = floor.share_low if floor is not None else low
    return spec.model_copy(update={"bounds": (max(least, low * BOUNDS_ROOM), high)})


def bounds_of(spec: CompareSpec) -> tuple[float, float]:
    """The bounds ``spec``'s shares are kept in: its own, or for one stored before they
    were (design §34), those its first batch's anchors give, computed in memory."""
    if spec.bounds is not None:
        return spec.bounds
    anchors = _anchors_in_memory(spec.base.scenario, spec.base.days, _first_keys(spec),
                                 spec.base.world_salt())
    return share_bounds(spec.base.scenario, anchors.values())


def _anchors_in_memory(scenario: str, days: int, keys: list[tuple[int, int]],
                       salt: str | None) -> dict[tuple[int, int], Any]:
    from ..environment import reference_anchors

    out = {}
    for world, seed in keys:
        found = reference_anchors(scenario, seed=seed, days=days, world_seed=world,
                                  world_salt=salt)
        if found is not None:
            out[(world, seed)] = found
    return out


def _batch_budgets(config: RunConfig, pairs: int) -> tuple[int, Decimal | None]:
    """The next batch's LLM trials, and what they may spend at most: the sum of their
    trial budgets (None when one has none: the forecast alone governs it)."""
    llms = [m for m in config.models if not m.in_process]
    budgets = [config.trial_budget(m) for m in llms]
    if not llms or any(b is None for b in budgets):
        return pairs * len(llms), None
    return pairs * len(llms), sum((b for b in budgets if b is not None), Decimal(0)) * pairs


def _batch_forecast(config: RunConfig, costs: dict[str, list[Decimal]], pairs: int
                    ) -> Decimal | None:
    """What the next batch will cost: per model, its dearest trial so far (what it
    measurably spends), or before its first trial the forecast ``run`` prints (an
    operator as busy as the reference policy). None when a model has no price."""
    llms = [m for m in config.models if not m.in_process]
    unseen = [m for m in llms if not costs.get(m.label)]
    profile = {f.model: f.total for f in forecast_run(
        config.model_copy(update={"models": unseen})).models} if unseen else {}
    total = Decimal(0)
    for model in llms:
        seen = costs.get(model.label)
        each = max(seen) * pairs if seen else profile.get(model.label)
        if each is None:
            return None
        total += each
    return total


async def _run_batch(config: RunConfig, db: str, earlier: str | None,
                     on_event: Events | None = None) -> str:
    """The batch's run id, run (or continued, after a crash) to its end."""
    if earlier is not None:
        with Store(db, read_only=True) as store:
            status = store.run(earlier)["status"]
        if status in ("completed", "completed_with_errors", "failed"):
            return earlier
        return (await execute(config, db, resume=earlier, on_event=on_event)).run_id
    return (await execute(config, db, on_event=on_event)).run_id


def _replay(spec: CompareSpec, db: str, row: ComparisonRow, steps: list[ComparisonStep],
            add: tuple[int, str] | None = None) -> Outcome:
    """Scores (oracle shares), survivors and the assessment, read back from the steps'
    runs (and one new run, ``add``, recorded as a step)."""
    runs = [s.run_id for s in steps] + ([add[1]] if add else [])
    scores: dict[str, list[float]] = {m: [] for m in spec.models}
    costs: dict[str, list[Decimal]] = {m: [] for m in spec.models}
    counted = {m: [0, 0, 0] for m in spec.models}     # unfinished, above the oracle, scored
    survivors, assessment, dropped, spent = spec.models, None, 0, Decimal(0)
    salt = spec.base.world_salt()
    bounds = bounds_of(spec)
    new_steps = list(steps)
    with Store(db, read_only=True) as store:
        for i, run_id in enumerate(runs):
            spent += store.run_spend(run_id)
            trials = list(latest_attempts(store.trials(run_id)).values())
            run = store.run(run_id)
            keys = {PairKey.of(t).world for t in trials}
            anchors = anchors_for(store, spec.base.scenario, spec.base.days, keys,
                                  run.get("world_salt_sha256"), salt)
            share = {t: None if v is None else min(max(v, bounds[0]), bounds[1])
                     for t, v in shares(trials, spec.base.scenario, anchors).items()}
            by_pair: dict[PairKey, dict[str, Mapping[str, Any]]] = {}
            for t in trials:
                by_pair.setdefault(PairKey.of(t), {})[t["model"]] = t
                if t["cost_usd"] is not None and t["status"] not in SET_APART:
                    costs[t["model"]].append(t["cost_usd"])
            for key in sorted(by_pair):
                got = by_pair[key]
                if any(m not in got or got[m]["status"] in SET_APART or cut_by_pool(got[m])
                       or share.get(got[m]["trial_id"]) is None for m in survivors):
                    dropped += 1
                    continue
                for m in survivors:
                    value = share[got[m]["trial_id"]]
                    assert value is not None        # pairs without one were dropped
                    if not math.isfinite(value):
                        raise ResultsError(f"trial {got[m]['trial_id']} has a score of "
                                           f"{value}: not a number to compare")
                    scores[m].append(value)
                    counted[m][0] += got[m]["status"] != "completed"
                    counted[m][1] += value > 1
                    counted[m][2] += 1
            alive = {m: scores[m] for m in survivors}
            if all(alive.values()):
                assessment = assess(alive, survivors, started_with=len(spec.models),
                                    alpha=spec.alpha, margin=spec.margin, bounds=bounds,
                                    estimand=spec.estimand, assume=spec.assume)
            if add and i == len(runs) - 1:
                after = assessment.survivors if assessment else survivors
                new_steps.append(ComparisonStep(
                    row.comparison_id, add[0], run_id, len(scores[survivors[0]]), after,
                    [p.as_json() for p in assessment.pairwise] if assessment else [],
                    spent, dt.datetime.now(dt.UTC).replace(tzinfo=None)))
            if assessment is not None:       # a model out of the race plays no more
                survivors = assessment.survivors
    row = _with(row, pairs=len(scores[survivors[0]]), spent_usd=spent,
                best=assessment.best if assessment else None)
    if add:
        with Store(db) as store:
            store.write(new_steps[-1])
            store.write(row)
    return Outcome(row, new_steps, assessment, dropped, scores=scores, costs=costs,
                   shares={m: (c[0], c[1], c[2]) for m, c in counted.items()}, spec=spec)


def cut_by_pool(trial: Mapping[str, Any]) -> bool:
    """Whether a trial ended because the run's shared budget (the comparison's) could
    not hold its next request: the budget's doing, not the model's (a trial's own
    budget running out is the model's, and scores 0)."""
    return trial["status"] == "budget_exhausted" and \
        (trial.get("reason") or "").startswith(f"{POOL_SCOPE} budget")


def _finish(db: str, spec: CompareSpec, state: Outcome, verdict: str, reason: str
            ) -> Outcome:
    would_take = None
    planned = plan_from(spec, state) if verdict == INCONCLUSIVE else None
    if planned is not None and planned.median is not None:
        p90 = f"{planned.p90:,}" if planned.p90 is not None else "more"
        would_take = (f"about {planned.median:,} pairs in all would likely decide it (90 %: "
                      f"{p90}; a forecast by simulation from the {state.row.pairs} so far)")
    elif verdict == INCONCLUSIVE and state.assessment is not None:
        guesses = [g for p in state.assessment.pairwise
                   if p.a in state.assessment.survivors and p.b in state.assessment.survivors
                   and (g := pairs_to_decide(p, spec.margin)) is not None]
        if guesses:
            would_take = (f"about {max(guesses)} pairs in all would likely decide it "
                          f"(a guess from the interval's width; {state.row.pairs} so far)")
    row = _with(state.row, status="decided", verdict=verdict, reason=reason,
                finished_at=dt.datetime.now(dt.UTC).replace(tzinfo=None))
    with Store(db) as store:
        store.write(row)
    return Outcome(row, state.steps, state.assessment, state.dropped, would_take,
                   state.scores, state.costs, state.shares, spec=spec)


def _reason(a: Assessment, spec: CompareSpec) -> str:
    if a.verdict == WINNER and a.estimand == "win-rate":
        return (f"{a.best} beats every other model on more worlds than it loses (each "
                "interval of its share of worlds won excludes one half)")
    if a.verdict == WINNER:
        return f"{a.best} is better than every other model (each interval excludes 0)"
    return (f"{', '.join(a.survivors)} are within ±{spec.margin:.1%} of the oracle's gain "
            "of each other (every interval inside the margin)")


def _with(row: ComparisonRow, **changes: Any) -> ComparisonRow:
    return replace(row, **changes)





def usd_per_pair(spec: CompareSpec) -> tuple[Decimal | None, tuple[str, ...]]:
    """What one pair of the comparison's models is forecast to cost (``run``'s forecast:
    an operator as busy as the reference policy; None when a model has no price), and
    the API keys a run of it would need that are missing: a forecast sends nothing and
    needs none (design §35.2)."""
    one_seed = spec.base.model_copy(update={"seeds": [1]})
    forecast = forecast_run(one_seed, keys=False)
    total = forecast.total
    return (None if total is None else total / len(spec.base.world_seeds),
            forecast.missing_keys)


def plan_ahead(spec: CompareSpec, difference: float, spread: float,
               observed: list[float] | None = None, usd: Decimal | None = None,
               reps: int = PLAN_REPS) -> Plan:
    """The comparison's plan (``_plan.plan``) under its own alpha, bounds, cap and
    batch."""
    return plan(difference, spread, alpha=spec.alpha, bounds=bounds_of(spec),
                max_pairs=spec.max_pairs, batch=spec.batch, observed=observed or [],
                usd_per_pair=usd, started_with=len(spec.models), reps=reps,
                margin=spec.margin if spec.estimand == "mean" else None)


def plan_from(spec: CompareSpec, outcome: Outcome, usd: Decimal | None = None,
              reps: int = PLAN_REPS // 4) -> Plan | None:
    """The plan from where a two-model comparison stands: its observed mean difference
    and spread (None before two pairs, or for a race or a win rate)."""
    if len(spec.models) != 2 or spec.estimand != "mean":
        return None
    a, b = (outcome.scores.get(m, []) for m in spec.models)
    diffs = [y - x for x, y in zip(a, b)]
    if len(diffs) < 2:
        return None
    mean = sum(diffs) / len(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
    return plan_ahead(spec, mean, sd, diffs, usd, reps)
