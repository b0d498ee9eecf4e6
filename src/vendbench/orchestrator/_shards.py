"""LLM trials spread over worker processes, each with its own event loop (``--processes``).

One event loop spends ~10 ms of CPU per exchange (litellm alone ~8 ms), so on its own it
tops out near 100 exchanges/s however slow the provider is. With many trials in flight
the scheduler therefore hands LLM trials to worker processes and keeps for itself what
must stay single: the run's budget pool, the one results writer, the progress display
and the signals.

    parent (scheduler)                        worker i  (python -m ..._shard_main)
      earmark trial budget   --RunTrial-->    run_trial with a local Budget(limit)
      writer.put + flush     <---Rows----     rows at each durability point
                             ----Ack---->     … then the next request is sent
      progress display       <--Progress-
      budget.charge(cost)    <--Finished-    the outcome
      Ctrl-C / SIGTERM       ---Cancel-->    trial recorded ``interrupted``

Budgets stay exact: a worker only runs trials whose budget is self-contained (a
per-trial budget earmarked from the pool before the trial starts, or no pool cap at
all), and reserves and settles against it locally, request by request, before anything
is sent. Provider limits are split: each worker gets its share of a model's
concurrency, rpm and tpm (shares sum to the configured figure), and runs AIMD on it.
A worker that dies takes only its running trials with it: they are recorded ``error``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..budgets import Budget, Price
from ..errors import ConfigError
from ..providers import LimitEvent
from ..results import Append, TrialStatus
from ._config import ModelConfig, RunConfig
from ._link import Link, LinkClosed
from ._messages import (Ack, Cancel, Close, Finished, FromWorker, Init, LimitEvents, Progress,
                        Ready, Rows, RunTrial, Started)
from ._spec import TrialOutcome, TrialSpec

log = logging.getLogger(__name__)

AUTO_MIN_TRIALS = 16      # LLM trials in flight per worker at least (a worker costs ~300 MB)
AUTO_MAX_PROCESSES = 8
CANCEL_GRACE_S = 15.0     # how long a cancelled trial may take to record itself


def plan_processes(config: RunConfig) -> int:
    """How many worker processes run the LLM trials (0: they run in this process).

    ``processes`` None is automatic: one a core, the scheduler beside them (design §25.1,
    session 23, 2 cores, four alternating runs in one sitting: at zero latency 50 trials
    made a median 207 exchanges/s over 2 workers against 199 over 3, the workers spending
    about 0.5 ms less CPU an exchange and 2.9 s less starting; three at 1 s latency: 100
    trials kept a median 86 % of the ideal rate over 2 against 85 % over 3, in 1,125
    against 1,425 MB PSS), but no more than one per 16 LLM trials in flight (each worker
    holds its own litellm and tokenizer, ~300 MB), and only if the run allows it: on one
    core the trials run in this process. An explicit figure that the run cannot honour
    is an error that says why.
    """
    llm = [m for m in config.models if not m.in_process]
    in_flight = min(len(llm) * len(config.seeds) * config.repeats, config.workers)
    wanted = config.processes if config.processes is not None else \
        min(os.cpu_count() or 1, AUTO_MAX_PROCESSES, in_flight // AUTO_MIN_TRIALS)
    if wanted <= 1 or not llm:
        return 0
    problems = []
    if config.total_budget_usd is not None and any(config.trial_budget(m) is None for m in llm):
        problems.append("with a total budget, each worker process needs self-contained "
                        "trial budgets: give a per-trial budget (--budget) as well")
    for m in llm:
        for what, value in (("max_concurrency", m.max_concurrency), ("rpm", m.rpm),
                            ("tpm", m.tpm)):
            if value is not None and value < wanted:
                problems.append(f"{m.label}: {what}={value} cannot be split over {wanted} "
                                "processes")
    if problems:
        if config.processes is not None:
            raise ConfigError(f"--processes {wanted}: " + "; ".join(problems)
                              + " (or use --processes 1)")
        log.info("running LLM trials in one process: %s", "; ".join(problems))
        return 0
    return wanted


def _share(total: int | None, index: int, n: int) -> int | None:
    """Worker ``index``'s share of ``total``: the shares sum to ``total`` exactly."""
    if total is None:
        return None
    return total // n + (1 if index < total % n else 0)


def shard_config(config: RunConfig, index: int, n: int) -> RunConfig:
    """The run's config as worker ``index`` of ``n`` applies it: its share of each
    model's concurrency and rate limits."""
    models = [m if m.in_process else m.model_copy(update={
        "max_concurrency": _share(m.max_concurrency, index, n),
        "rpm": _share(m.rpm, index, n), "tpm": _share(m.tpm, index, n)})
        for m in config.models]
    return config.model_copy(update={"models": models})


class WorkerDied(Exception):
    """A worker process exited with trials running; ``outcome`` is what was known of one.
    ``began`` says whether the worker had started it (before that, nothing was sent, so
    the trial can go to another worker)."""

    def __init__(self, message: str, outcome: TrialOutcome | None = None,
                 began: bool = False) -> None:
        super().__init__(message)
        self.outcome, self.began = outcome, began


@dataclass
class _Running:
    spec: TrialSpec
    outcome: TrialOutcome          # kept up to date by the worker's progress messages
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc)
                                 .replace(tzinfo=None))
    done: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop()
                                 .create_future())
    began: bool = False            # the worker said it started the trial
    # a progress report waits for the worker's next rows: the rows it counts were still
    # queued in the worker when it was sent (they go with the next flush, and a worker
    # that dies before that flush never had them committed)
    pending: Progress | None = None


class Worker:
    """One worker process, seen from the scheduler."""

    def __init__(self, index: int, proc: asyncio.subprocess.Process, link: Link,
                 writer: Any, on_event: Callable[[str, dict[str, Any]], None],
                 record: Callable[[TrialOutcome, dt.datetime], None]) -> None:
        self.index, self.proc, self.link = index, proc, link
        self.writer, self.on_event, self.record = writer, on_event, record
        self.running: dict[str, _Running] = {}
        self.events: list[LimitEvent] = []
        self.closed = asyncio.get_running_loop().create_future()
        self._acks: set[asyncio.Task[Any]] = set()
        self._reader = asyncio.create_task(self._read(), name=f"worker-{index}-reader")

    def load(self, model: ModelConfig) -> tuple[int, int]:
        return (sum(1 for r in self.running.values() if r.spec.model.label == model.label),
                len(self.running))

    async def run(self, spec: TrialSpec, budget: Budget, priced: bool) -> TrialOutcome:
        """Run a trial in the worker; raises WorkerDied if the process goes."""
        if self.closed.done():
            raise WorkerDied(f"worker process {self.index + 1} is not running",
                             TrialOutcome(spec, priced=priced))
        entry = _Running(spec, TrialOutcome(spec, priced=priced))
        self.running[spec.trial_id] = entry
        try:
            try:
                self.link.send(RunTrial(spec, budget.limit))
            except LinkClosed:
                raise WorkerDied(f"worker process {self.index + 1} is not running",
                                 entry.outcome) from None
            try:
                return await asyncio.shield(entry.done)
            except asyncio.CancelledError:
                if not entry.done.done():
                    try:
                        self.link.send(Cancel(spec.trial_id))
                        await asyncio.wait_for(asyncio.shield(entry.done), CANCEL_GRACE_S)
                    except (LinkClosed, asyncio.TimeoutError, WorkerDied):
                        pass
                if not entry.done.done() or entry.done.exception() is not None:
                    # the worker never said how the trial ended: record it here
                    out = entry.outcome
                    out.status = TrialStatus.INTERRUPTED
                    out.reason = ("the run was interrupted (Ctrl-C or SIGTERM); its worker "
                                  "process did not answer")
                    self.record(out, entry.started)
                raise
        finally:
            self.running.pop(spec.trial_id, None)

    async def _read(self) -> None:
        try:
            while True:
                self._handle(await self.link.recv())
        except LinkClosed:
            pass
        except Exception:                       # a bug of ours: fail the trials, loudly
            log.exception("worker %d: bad message", self.index + 1)
            self.proc.kill()
        code = await self.proc.wait()
        why = f"worker process {self.index + 1} exited unexpectedly (exit code {code})"
        for entry in list(self.running.values()):       # every message it sent is read
            if not entry.done.done():
                entry.done.set_exception(WorkerDied(why, entry.outcome, entry.began))
        if not self.closed.done():
            self.closed.set_result(code)

    def _handle(self, message: FromWorker) -> None:
        match message:
            case Rows(flush_id, items):
                for item in items:
                    if isinstance(item, Append):
                        self.writer.put(item.table, item.rows, item.columns)
                    else:
                        self.writer.put_row(item)
                if flush_id is not None:
                    task = asyncio.create_task(self._ack(flush_id))
                    self._acks.add(task)
                    task.add_done_callback(self._acks.discard)
                for live in self.running.values():         # now covered by received rows
                    if live.pending is not None:
                        report, live.pending = live.pending, None
                        for name, value in report.fields.items():
                            setattr(live.outcome, name, value)
                        self.on_event("trial_progress", {"outcome": live.outcome,
                                                         "day": report.day,
                                                         "net_assets": report.net_assets})
            case Started(trial_id):
                entry = self.running.get(trial_id)
                if entry is not None:
                    entry.began = True
                    self.on_event("trial_started", {"spec": entry.spec})
            case Progress(trial_id):
                entry = self.running.get(trial_id)
                if entry is not None:
                    entry.pending = message
            case Finished(trial_id, outcome):
                entry = self.running.get(trial_id)
                if entry is not None and not entry.done.done():
                    outcome.spec = entry.spec
                    entry.done.set_result(outcome)
            case LimitEvents(events):
                self.events.extend(events)
            case _:
                raise TypeError(f"unknown message {message!r}")

    async def _ack(self, flush_id: int) -> None:
        try:
            await self.writer.flush()
            failure = None
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        try:
            self.link.send(Ack(flush_id, failure))
        except LinkClosed:
            pass

    async def close(self) -> None:
        """Ask the worker to finish and exit; kill it if it does not."""
        try:
            self.link.send(Close())
        except LinkClosed:
            pass
        try:
            await asyncio.wait_for(asyncio.shield(self.closed), CANCEL_GRACE_S)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.closed
        self.link.close()
        if self._acks:
            await asyncio.gather(*self._acks, return_exceptions=True)


class Workers:
    """The worker processes of one run."""

    def __init__(self, workers: list[Worker]) -> None:
        self.workers = workers

    @classmethod
    async def start(cls, n: int, config: RunConfig, prices: dict[str, Price | None],
                    writer: Any, on_event: Callable[[str, dict[str, Any]], None],
                    record: Callable[[TrialOutcome, dt.datetime], None]) -> Workers:
        """Start ``n`` workers and wait until each is ready. ``record`` writes the trial
        row of a trial whose worker could not (it died, or did not answer a cancel)."""
        links: list[tuple[asyncio.subprocess.Process, Link]] = []
        try:
            for i in range(n):
                # a process group of its own: Ctrl-C at the terminal (SIGINT to the
                # foreground group) reaches the scheduler only, which cancels the trials
                # in each worker; one that arrived while a worker's interpreter was still
                # starting, before it could ignore SIGINT, killed it with a traceback
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "vendbench.orchestrator._shard_main",
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    limit=2**24, process_group=0)
                assert proc.stdin is not None and proc.stdout is not None
                link = Link(proc.stdout, proc.stdin)
                link.send(Init(shard_config(config, i, n), prices))
                links.append((proc, link))
            # trials are handed out only once every worker is ready (litellm imported, its
            # tokenizer loaded), so that the scheduler's staggered starts stay staggered
            for i, (proc, link) in enumerate(links):
                try:
                    message = await link.recv()
                except LinkClosed:
                    code = await proc.wait()
                    raise ConfigError(f"worker process {i + 1} could not start (exit code "
                                      f"{code}; its error is printed above)") from None
                if not isinstance(message, Ready):
                    raise TypeError(f"worker {i + 1} sent {message!r} before it was ready")
        except BaseException:       # one could not start, or the run was interrupted
            for proc, _ in links:
                if proc.returncode is None:
                    proc.kill()
            raise
        # each Worker reads its link from here on (a ready worker sends nothing more
        # until it is handed a trial)
        return cls([Worker(i, proc, link, writer, on_event, record)
                    for i, (proc, link) in enumerate(links)])

    def pick(self, model: ModelConfig) -> Worker:
        """The live worker with the fewest trials of this model running (then overall)."""
        alive = [w for w in self.workers if not w.closed.done()] or self.workers
        return min(alive, key=lambda w: w.load(model))

    def any_alive(self) -> bool:
        return any(not w.closed.done() for w in self.workers)

    def limit_events(self) -> list[LimitEvent]:
        return [e for w in self.workers for e in w.events]

    async def close(self) -> None:
        await asyncio.gather(*(w.close() for w in self.workers), return_exceptions=True)
