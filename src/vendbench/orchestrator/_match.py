"""A match (SPEC 23): the trials of two to four operators sharing one world.

Each seat is an ordinary trial (its agent, budget, log and limits) whose environment is
the seat's operator in the match's world. The trials run concurrently; a trial that has
ended its day waits at ``Turns`` until every other operator has ended it too and the
world has run the night. A trial that ends for any reason (completed, budget, error,
turn cap) leaves the match: its operator plays no more, and the others go on.

Like the scheduler, this knows nothing of vending: only the ``Match`` protocol.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..budgets import Budget
from ..environment import Environment, Match
from ..results import (FINISHED, MatchSeat, ResultsWriter, RunEnded, Store, TrialRecord,
                       TrialStatus)
from ._trial import TrialContext, TrialOutcome, TrialSpec, run_trial

if TYPE_CHECKING:
    from ._scheduler import Scheduler

log = logging.getLogger(__name__)


class Turns:
    """A match's day barrier. The night runs inside the call of the last operator to
    end the day (or when the last one still playing leaves); every trial passes here
    after its day, so whoever comes next wakes those that wait."""

    def __init__(self, match: Match) -> None:
        self.match = match
        self._nights = match.nights
        self._moved = asyncio.Event()

    def wake(self) -> None:
        """Release the waiting trials if a night has run since they began to wait."""
        if self.match.nights != self._nights:
            self._nights = self.match.nights
            self._moved.set()
            self._moved = asyncio.Event()

    async def wait(self, seat: int) -> None:
        """Return once ``seat`` may play: at once unless it has ended its day."""
        self.wake()
        while self.match.waiting(seat):
            await self._moved.wait()


async def run_match(specs: list[TrialSpec], contexts: list[TrialContext], match: Match
                    ) -> list[TrialOutcome]:
    """Run the match's trials (``specs[i]`` in seat i, with ``contexts[i]``) to their
    ends, concurrently, in ``match``'s world."""
    turns = Turns(match)

    async def seat(i: int) -> TrialOutcome:
        operator: Environment = match.seats[i]

        async def turn() -> None:
            await turns.wait(i)

        ctx = replace(contexts[i], make_env=lambda seed, world: operator, turn=turn)
        try:
            return await run_trial(specs[i], ctx)
        finally:
            match.leave(i)            # its machines go idle; the others may now sleep
            turns.wake()

    return list(await asyncio.gather(*(seat(i) for i in range(len(specs)))))


async def run_matches(scheduler: Scheduler, specs: list[TrialSpec], writer: ResultsWriter
                      ) -> list[TrialOutcome]:
    """An arena's matches, each one's trials together, for ``scheduler``
    (``--workers`` bounds the trials in flight, so a match of k operators takes k)."""
    k = len(scheduler.config.seats or ())
    sem = asyncio.Semaphore(max(1, scheduler.config.workers // k))
    outcomes: list[TrialOutcome] = []
    matches: dict[str, list[TrialSpec]] = {}
    for spec in specs:
        matches.setdefault(spec.match_id or "", []).append(spec)

    async def one(seats: list[TrialSpec]) -> None:
        async with sem:
            budgets: list[Budget] = []
            try:
                for spec in seats:          # every seat's budget, or none starts
                    budget = await scheduler._earmark(spec)
                    if budget is None:
                        scheduler._not_started(writer, seats, outcomes)
                        return
                    budgets.append(budget)
                match = scheduler.clients.make_match(seats[0].seed, seats[0].world_seed)
                for spec in seats:
                    writer.put_row(MatchSeat(
                        spec.match_id or "", spec.attempt, spec.seat, spec.trial_id,
                        spec.run_id, spec.model.id, spec.world_seed, spec.seed,
                        spec.repeat, match.seats[spec.seat].summary().get(
                            "operator", f"seat {spec.seat}")))
                contexts = [scheduler.clients.trial_context(
                    spec, budget, writer, scheduler._progress)
                    for spec, budget in zip(seats, budgets)]
                for spec in seats:
                    scheduler.on_event("trial_started", {"spec": spec})
                with writer.taking_part():
                    done = await run_match(seats, contexts, match)
                for out in done:
                    outcomes.append(out)
                    scheduler.waiting.ended(out.spec.trial_id)
                    scheduler.on_event("trial_finished", {"outcome": out})
            finally:
                for budget in budgets:
                    budget.close()
                async with scheduler._freed:
                    scheduler._freed.notify_all()

    await scheduler._gather([one(seats) for seats in matches.values()])
    return outcomes


def plan_match_resume(store: Store, run_id: str, specs: list[TrialSpec], pool: Budget, *,
                      restart: bool = True) -> tuple[list[dict[str, Any]], list[TrialSpec]]:
    """An arena's resume: a match whose every operator finished is kept; any other is
    played again from day 1 as a new attempt of all its seats (its operators share one
    world, so one cannot continue without the others). What earlier attempts spent
    stays in the run's total."""
    settle_spend(store, run_id, pool)
    seats: dict[str, list[dict[str, Any]]] = {}
    for row in store.match_seats([run_id]):
        seats.setdefault(row["match_id"], []).append(row)
    trials = {t["trial_id"]: t for t in store.trials(run_id)}
    matches: dict[str, list[TrialSpec]] = {}
    for spec in specs:
        matches.setdefault(spec.match_id or "", []).append(spec)
    kept: list[dict[str, Any]] = []
    rerun: list[TrialSpec] = []
    for match_id, match in matches.items():
        last = seats.get(match_id, [])
        if len(last) == len(match) and all(r["status"] in FINISHED for r in last):
            kept.extend(kept_json(trials[r["trial_id"]]) for r in last)
            continue
        attempt = last[0]["attempt"] + 1 if last else 1
        rerun.extend(replace(spec, trial_id=f"{spec.trial_id}-a{attempt}", attempt=attempt)
                     if attempt > 1 else spec for spec in match)
    store.write(RunEnded(run_id, TrialStatus.RUNNING, None))      # running again
    return kept, rerun


def settle_spend(store: Store, run_id: str, pool: Budget) -> None:
    """Before a run resumes: whatever a killed process left open is settled (requests in
    flight charged their reservations), and the pool is what the run has spent."""
    settled = store.close_interrupted(run_id)
    if settled:
        log.info("%s: %d request(s) were in flight when the run stopped; charged their "
                 "reservations", run_id, settled)
    pool.spent = store.run_spend(run_id)


def kept_json(row: dict[str, Any]) -> dict[str, Any]:
    """A kept trial (``--resume``) as the run prints its trials: never one to rerun."""
    return TrialRecord.of(row).as_json() | {"resumable": False}
