"""The scheduler: expand a run into trials and run them concurrently (design §3).

It knows environments, models and their clients only through ``Clients`` (the
Environment protocol, ModelClient), money only through Budget, and storage only through
the results writer.
``--workers`` bounds trials in flight; each provider/model has its own concurrency and
rate limits. A trial starts only when the run's pool can cover its budget.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from .._heap import settle
from ..budgets import POOL_SCOPE, Budget, Price
from ..environment import Environment, standing
from ..errors import ConfigError, ResultsError
from ..providers import LimitEvent
from ..results import (ProviderEventRow, ResultsWriter, RunEnded, Store, being_written,
                       TrialHistory, TrialStatus, begin_run, dumps,
                       new_run_id)
from ._ceilings import keep_ceilings
from ._clients import Clients
from ._config import RunConfig, model_slugs
from ._context import COMPACT_PROMPT
from ._forecast import PanelForecast, panel_forecast, refuse_above
from ._preflight import preflight, run_prices
from ._shards import WorkerDied, Workers, plan_processes
from ._match import run_match, seat_rows
from ._resume import check_same_worlds, plan_resume
from ._spec import TrialOutcome, TrialSpec
from ._trial import run_trial
from ._waiting import Waiting

log = logging.getLogger(__name__)

START_SPREAD_S = 0.02    # between the starts of the first trials


@dataclass
class RunResult:
    run_id: str
    status: str
    outcomes: list[TrialOutcome] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)    # finished earlier (resume)
    pool: Budget | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
    forecast: PanelForecast | None = None

    def as_json(self) -> dict[str, Any]:
        trials = [*self.kept, *(o.as_json() for o in self.outcomes)]
        priced = [t["cost_usd"] for t in trials if t.get("cost_usd") is not None]
        return {"run_id": self.run_id, "status": self.status, "trials": trials,
                # unknown when nothing was priced (an --allow-unpriced run): never $0
                "total_cost_usd": float(sum(priced)) if priced else None,
                "warnings": [{"model": w["model"], "kind": w["kind"], "message": w["message"]}
                             for w in self.warnings],
                "forecast": self.forecast.as_json() if self.forecast else None}


def finished_status(result: RunResult) -> str:
    """A run that ran to its end: ``completed`` when every trial finished (however well
    the model did), ``failed`` when every trial ended in a harness or provider error,
    else ``completed_with_errors``."""
    statuses = [t["status"] for t in result.kept] + [o.status for o in result.outcomes]
    errors = statuses.count("error")
    if not errors:
        return "completed"
    return "failed" if errors == len(statuses) else "completed_with_errors"


Events = Callable[[str, dict[str, Any]], None]


class Scheduler:
    """Runs one run (or resumes one) against a results store."""

    def __init__(self, config: RunConfig, *, prices: dict[str, Price | None],
                 on_event: Events | None = None) -> None:
        self.config, self.prices = config, prices
        self.clients = Clients(config, prices)
        self.on_event = on_event or (lambda kind, data: None)
        self.pool = Budget(POOL_SCOPE, config.total_budget_usd)
        self._freed = asyncio.Condition()
        self._worker_events: list[LimitEvent] = []
        self._history: Callable[[str], TrialHistory] | None = None
        self.waiting = Waiting()          # requests sent and not yet answered

    # -- the run ------------------------------------------------------------------------------
    def specs(self, run_id: str) -> list[TrialSpec]:
        """Trials seed by seed, models interleaved, so a cut-short panel stays balanced."""
        names = model_slugs([m.label for m in self.config.models])
        if self.config.seats:
            return self._match_specs(run_id, names)
        out = []
        for repeat in range(1, self.config.repeats + 1):
            for world in self.config.world_seeds:
                for seed in self.config.seeds:
                    for model in self.config.models:
                        # the paper's one world keeps the short ids; others are named
                        where = f"-w{world}" if self.config.names_worlds else ""
                        out.append(TrialSpec(
                            f"{run_id}-{names[model.label]}{where}-s{seed}-r{repeat}", run_id,
                            model, seed, repeat, self.config.trial_budget(model),
                            world_seed=world))
        return out

    def _match_specs(self, run_id: str, names: dict[str, str]) -> list[TrialSpec]:
        """An arena's trials, match by match: one match per world, seed and repeat, its
        seats taken by the lineup of the seed's place in the list (design §23.4)."""
        out = []
        for repeat in range(1, self.config.repeats + 1):
            for world in self.config.world_seeds:
                for index, seed in enumerate(self.config.seeds):
                    where = f"-w{world}" if self.config.names_worlds else ""
                    match_id = f"{run_id}-m{where}-s{seed}-r{repeat}"
                    for seat, model_id in enumerate(self.config.lineup(index)):
                        model = self.config.model(model_id)
                        out.append(TrialSpec(
                            f"{match_id}-{seat}-{names[model_id]}", run_id, model, seed,
                            repeat, self.config.trial_budget(model), world_seed=world,
                            match_id=match_id, seat=seat))
        return out

    async def run(self, run_id: str, specs: list[TrialSpec], writer: ResultsWriter,
                  history: Callable[[str], TrialHistory] | None = None) -> list[TrialOutcome]:
        """Run ``specs``; a spec marked ``resume`` gets its trial's ``history`` (what the
        results file holds of it) when it starts, and continues from there."""
        self.clients.prepare()
        self._history = history
        writer.watch(self.waiting.rows)
        processes = plan_processes(self.config)     # checked once already, in ``execute``
        workers = None
        if processes and not self.config.seats and any(not s.model.in_process for s in specs):
            workers = await Workers.start(processes, self.config, self.prices, writer,
                                          self.on_event,
                                          lambda out, started: self._record(writer, out, started))
            self.clients.limits.clear()     # the workers own the provider limits (and their history)
            self.on_event("workers_started", {"processes": processes})
        try:
            return await self._run_tables(specs, writer, workers)
        finally:
            if workers is not None:
                await asyncio.shield(workers.close())
                self._worker_events = workers.limit_events()

    async def _run_tables(self, specs: list[TrialSpec], writer: ResultsWriter,
                          workers: Workers | None) -> list[TrialOutcome]:
        """Every table of the run: a match's seats together, or a trial alone (a table of
        one seat); ``--workers`` bounds the trials in flight (a match of k takes k)."""
        tables: dict[str, list[TrialSpec]] = {}
        for spec in specs:
            tables.setdefault(spec.match_id or spec.trial_id, []).append(spec)
        size = max((len(t) for t in tables.values()), default=1)
        sem = asyncio.Semaphore(max(1, self.config.workers // size))
        outcomes: list[TrialOutcome] = []

        async def one(index: int, seats: list[TrialSpec]) -> None:
            # the first wave starts spread over a moment, so that the trials' requests do
            # not stay in lockstep (a lockstep wave of replies queues up on one CPU)
            await asyncio.sleep(min(index, self.config.workers) * START_SPREAD_S)
            async with sem:
                await self._play_table(seats, writer, workers, outcomes)

        await self._gather([one(i, t) for i, t in enumerate(tables.values())])
        return outcomes

    async def _play_table(self, seats: list[TrialSpec], writer: ResultsWriter,
                          workers: Workers | None, outcomes: list[TrialOutcome]) -> None:
        """One table to its end: every seat's budget earmarked at once (or none starts:
        two matches each holding part of what both need would wait for ever), then its
        trial, in a worker process if it has one, or its match."""
        first = seats[0]
        match = self.clients.make_match(first.seed, first.world_seed) \
            if first.match_id is not None else None
        if match is not None and not any(spec.resume for spec in seats):
            for row in seat_rows(seats, match):
                writer.put_row(row)
        playing = [spec for spec in seats if not spec.replay_only]
        earmarked = await self._earmark(playing)
        if earmarked is None:
            self._not_started(writer, playing, outcomes)
            return
        seats = [replace(spec, history=self._history(spec.trial_id))
                 if spec.resume and self._history is not None else spec for spec in seats]

        def ended(out: TrialOutcome) -> None:
            out.spec = replace(out.spec, history=None)      # it may be large
            outcomes.append(out)
            self.waiting.ended(out.spec.trial_id)
            self.on_event("trial_finished", {"outcome": out})

        try:
            with writer.taking_part():
                if match is None:
                    ended(await self._alone(seats[0], earmarked[0], writer, workers))
                else:
                    budgets = iter(earmarked)
                    contexts = [self.clients.trial_context(
                        spec, Budget("replayed", Decimal(0)) if spec.replay_only
                        else next(budgets), writer, self._progress) for spec in seats]
                    for spec in playing:
                        self.on_event("trial_started", {"spec": spec})
                    await run_match(seats, contexts, match, ended)
        finally:
            for budget in earmarked:
                budget.close()
            async with self._freed:
                self._freed.notify_all()

    async def _alone(self, spec: TrialSpec, budget: Budget, writer: ResultsWriter,
                     workers: Workers | None) -> TrialOutcome:
        """A trial alone at its table: in a worker process if the run has them."""
        if workers is not None and not spec.model.in_process:
            return await self._run_in_worker(spec, budget, workers, writer)
        self.on_event("trial_started", {"spec": spec})
        return await run_trial(spec, self.clients.trial_context(spec, budget, writer,
                                                                self._progress))

    def _progress(self, out: TrialOutcome, env: Environment) -> None:
        self.on_event("trial_progress", {"outcome": out, "day": env.day,
                                         "net_assets": standing(env)})

    def _not_started(self, writer: ResultsWriter, specs: list[TrialSpec],
                     outcomes: list[TrialOutcome]) -> None:
        """Trials the run's total budget could not cover: set apart, not the models'
        failure, and run again by --resume."""
        for spec in specs:
            out = TrialOutcome(spec, status=TrialStatus.NOT_STARTED,
                               reason="not started: the run's total budget could not "
                                      "cover this trial's budget")
            out.priced = self.prices.get(spec.model.label) is not None
            self._record(writer, out, dt.datetime.now(dt.timezone.utc).replace(tzinfo=None))
            outcomes.append(out)
            self.on_event("trial_finished", {"outcome": out})

    @staticmethod
    async def _gather(jobs: list[Awaitable[None]]) -> None:
        """Run ``jobs`` (trials, or matches) to their ends; on a failure for good (the
        results file) the rest are stopped."""
        tasks = [asyncio.ensure_future(job) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            # every trial has its cancel already; gather raises at the first one done, so
            # wait for the others to record themselves (a worker may take its grace)
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _earmark(self, specs: list[TrialSpec]) -> list[Budget] | None:
        """Wait until the pool can cover what is left of the budgets of ``specs`` (a trial,
        or a match's trials: all at once, so that two matches never each hold part of
        what both need) — what earlier segments spent is already in the pool; None if it
        never will."""
        left = [None if s.budget_usd is None else max(Decimal(0), s.budget_usd - s.spent_before)
                for s in specs]
        need = sum((x if x is not None else self.clients.first_request_cost(s.model)
                    for x, s in zip(left, specs)), Decimal(0))
        async with self._freed:
            while True:
                if self.pool.can_cover(need):
                    return [self.pool.earmark("trial", x) for x in left]
                if not self.pool.has_open_earmarks() and self.pool.reserved == 0:
                    return None            # nothing running will give money back
                await self._freed.wait()

    async def _run_in_worker(self, spec: TrialSpec, budget: Budget, workers: Workers,
                             writer: ResultsWriter) -> TrialOutcome:
        """Run an LLM trial in a worker process; the parent keeps the budget exact."""
        started = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        priced = self.prices.get(spec.model.label) is not None
        try:
            while True:
                try:
                    out = await workers.pick(spec.model).run(spec, budget, priced)
                    break
                except WorkerDied as exc:
                    # a worker that died before it started the trial sent nothing for it:
                    # the trial goes to another worker, if one is alive
                    if exc.began or not workers.any_alive():
                        raise
                    log.info("%s: its worker died before it started; handed to another",
                             spec.trial_id)
        except WorkerDied as exc:
            # its last requests' outcomes are unknown: the whole earmark counts as spent
            out = exc.outcome or TrialOutcome(spec, priced=priced)
            out.status, out.reason = TrialStatus.ERROR, str(exc)
            for name, value in (await writer.committed(spec.trial_id)).items():
                setattr(out, name, max(getattr(out, name), value))   # all it got to log
            budget.charge(budget.limit - budget.spent if budget.limit is not None
                          else out.cost - spec.spent_before)
            self._record(writer, out, started)
            return out
        budget.charge(out.cost - spec.spent_before)     # earlier segments: in the pool
        return out

    def _record(self, writer: ResultsWriter, out: TrialOutcome, started: dt.datetime) -> None:
        """The trial row of a trial that did not record itself."""
        from ..results import TrialLog

        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        TrialLog(writer, out.spec.trial_id, out.spec.model.label).trial(
            out.record(started, now))

    def limit_events(self) -> list[LimitEvent]:
        """How each provider's limits moved, here and in the worker processes."""
        return self.clients.limit_events() \
            + self._worker_events

    def provider_events(self, run_id: str) -> list[ProviderEventRow]:
        return [ProviderEventRow(run_id, e.provider, e.at_seconds, e.event, e.concurrency,
                                 e.retry_after) for e in self.limit_events()]


async def execute(config: RunConfig, db: str, *, resume: str | None = None,
                  restart: bool = False, on_event: Events | None = None) -> RunResult:
    """Run (or resume) a run, writing everything to ``db``. Cancellation-safe.

    Every check that can fail on the user's input (prices, keys, budgets) runs before
    the results file is touched.
    """
    if (busy := being_written(db)) is not None:     # before anything is printed
        raise ResultsError(busy)
    scheduler, forecast = _ready(config, resume is None, on_event)
    store = Store(db, read_only=False) if resume is None else _open_existing(db)
    try:
        run_id = store.run(resume)["run_id"] if resume is not None else new_run_id()
        store.serve_readers({"run_id": run_id})      # `runs`, `leaderboard` meanwhile
        specs = scheduler.specs(run_id)
        kept: list[dict[str, Any]] = []
        async with ResultsWriter(store) as writer:
            if resume is None:
                _record_run(store, run_id, config, scheduler, scheduler.prices)
            else:
                check_same_worlds(store.run(run_id), scheduler.clients.world_salt_sha256(),
                                  config.salt_env())
                kept, specs = plan_resume(store, run_id, specs, scheduler.pool,
                                          restart=restart)
            on_event and on_event("run_started", {"run_id": run_id, "trials": len(specs),
                                                  "kept": len(kept), "pool": scheduler.pool,
                                                  "waiting": scheduler.waiting})
            result = RunResult(run_id, "running", kept=kept, pool=scheduler.pool,
                               forecast=forecast)
            settle()            # what the run keeps is loaded: out of the collector's walks
            await _play(scheduler, store, writer, specs, result, db)
            result.warnings = store.warnings(run_id)
        return result
    finally:
        store.close()


def _ready(config: RunConfig, new: bool, on_event: Events | None
           ) -> tuple[Scheduler, PanelForecast | None]:
    """What a run checks before its file is touched: models and endpoints, prices,
    budgets a price can enforce, clients, the first request, the forecast (a new run's)
    and the processes asked for."""
    preflight(config)
    prices = run_prices(config)
    unpriced = [m for m, p in prices.items() if p is None]
    if unpriced and (config.total_budget_usd or config.budget_usd or
                     any(m.budget_usd for m in config.models)):
        raise ConfigError(f"{', '.join(unpriced)} has no price, so a USD budget cannot "
                          "be enforced for it: give its price or drop the budget")
    scheduler = Scheduler(config, prices=prices, on_event=on_event)
    scheduler.clients.prepare()
    _check_first_request(scheduler, config)
    forecast = panel_forecast(config, scheduler.clients) if new else None
    if forecast is not None:
        on_event and on_event("forecast", {"forecast": forecast})
        refuse_above(forecast, config.max_forecast_usd)
    plan_processes(config)              # an explicit --processes the run cannot honour
    return scheduler, forecast


async def _play(scheduler: Scheduler, store: Store, writer: ResultsWriter,
                specs: list[TrialSpec], result: RunResult, db: str) -> None:
    """The run's trials to their end, the oracle's scores beside them, and the run's end
    recorded however it ends."""
    config, run_id = scheduler.config, result.run_id
    trials_ended = asyncio.Event()
    ceilings = keep_ceilings(store, writer, config, scheduler.clients, trials_ended)
    try:
        result.outcomes = await _unless_writer_fails(
            scheduler.run(run_id, specs, writer, store.history), writer)
        trials_ended.set()
        await ceilings
        result.status = finished_status(result)
    except asyncio.CancelledError:
        result.status = TrialStatus.INTERRUPTED
        raise
    except ResultsError:
        if writer.failure is None:
            raise
        raise _stopped(writer.failure, run_id, db) from None
    finally:
        ceilings.cancel()
        if writer.failure is None:
            writer.add(scheduler.provider_events(run_id))
            writer.put_row(RunEnded(
                run_id, result.status if result.status != TrialStatus.RUNNING
                else TrialStatus.INTERRUPTED,
                dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)))
            await asyncio.shield(writer.flush())


async def _unless_writer_fails(run: Awaitable[list[TrialOutcome]], writer: ResultsWriter
                               ) -> list[TrialOutcome]:
    """Run the trials, but stop them all at once if a commit fails: nothing after it could
    be recorded, so going on would only spend money that leaves no trace."""
    task = asyncio.ensure_future(run)
    failed = asyncio.ensure_future(writer.failed.wait())
    try:
        await asyncio.wait([task, failed], return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:          # Ctrl-C, SIGTERM: the trials record themselves
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    finally:
        failed.cancel()
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert writer.failure is not None
        raise writer.failure
    return task.result()


def _stopped(failure: ResultsError, run_id: str, db: str) -> ResultsError:
    return ResultsError(f"{failure}. The run stopped; what was committed before is kept. "
                        f"Fix the cause, then resume it: vendbench run --resume {run_id} "
                        f"--db {db}")


def _open_existing(db: str) -> Store:
    if not os.path.exists(db):
        raise ResultsError(f"no results database at {db}; pass the --db the run used")
    return Store(db)


def _check_first_request(scheduler: Scheduler, config: RunConfig) -> None:
    """A first request that cannot fit the context, or that a budget cannot pay for, is
    said plainly, before anything runs."""
    for model in config.models:
        if model.in_process:
            continue
        tokens = scheduler.clients.first_prompt_tokens(model)
        room = model.max_context_tokens - model.max_output_tokens
        if tokens > room:
            raise ConfigError(
                f"{model.label}: the first request alone takes {tokens:,} tokens (tool schemas, "
                f"system prompt, the first daily report), but max_context_tokens − "
                f"max_output_tokens leaves {room:,}; raise max_context_tokens or lower "
                "max_output_tokens")
        budget = config.trial_budget(model)
        first = scheduler.clients.first_request_cost(model)
        for scope, cap in (("per-trial", budget), ("total", config.total_budget_usd)):
            if cap is not None and first > cap:
                raise ConfigError(
                    f"{model.label}: one request reserves about ${first:.4f} ({tokens:,} input "
                    f"tokens + max_output_tokens={model.max_output_tokens} at its price, "
                    f"with a safety margin), more than the {scope} budget of ${cap}; raise "
                    "the budget or lower max_output_tokens")


def _record_run(store: Store, run_id: str, config: RunConfig, scheduler: Scheduler,
                prices: dict[str, Price | None]) -> None:
    env = scheduler.clients.make_env(config.seeds[0], config.world_seeds[0])
    begin_run(store, run_id=run_id, name=config.name, scenario=config.scenario,
              days=config.days, config_json=config.stored().model_dump_json(), env=env,
              prices_json=dumps({m: (p.to_json() if p else None) for m, p in prices.items()}),
              total_budget=config.total_budget_usd, world_seeds=config.world_seeds,
              compaction=COMPACT_PROMPT if any(m.context_strategy == "compact"
                                               for m in config.models) else None)
