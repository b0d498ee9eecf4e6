"""A match (design §23): the trials of two to four operators sharing one world.

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
from collections.abc import Callable
from dataclasses import replace

from ..environment import Environment, Match
from ..results import MatchSeat
from ._replay import ReplayMismatch, replay_in_turns
from ._spec import TrialContext, TrialOutcome, TrialSpec
from ._trial import run_trial

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


async def run_match(specs: list[TrialSpec], contexts: list[TrialContext], match: Match,
                    on_done: Callable[[TrialOutcome], None] = lambda out: None
                    ) -> list[TrialOutcome]:
    """Run the match's trials (``specs[i]`` in seat i, with ``contexts[i]``) to their
    ends, concurrently, in ``match``'s world; a resumed match's operator that had already
    finished (``replay_only``) replays its log until it left, and has no outcome.
    ``on_done``: called with each trial's outcome as it ends."""
    turns = Turns(match)

    async def seat(i: int) -> TrialOutcome | None:
        operator: Environment = match.seats[i]

        async def turn() -> None:
            await turns.wait(i)

        spec = specs[i]
        try:
            if spec.replay_only:      # it had finished: it plays again only until it left
                assert spec.history is not None
                try:
                    await replay_in_turns(spec.history, operator, turn)
                except ReplayMismatch as exc:        # the others will find out too
                    log.warning("%s: its log does not replay (%s); it leaves the match "
                                "here", spec.trial_id, exc)
                return None
            ctx = replace(contexts[i], make_env=lambda seed, world: operator, turn=turn)
            out = await run_trial(spec, ctx)
            on_done(out)              # as each operator's trial ends, not the match
            return out
        finally:
            match.leave(spec.seat)    # its machines go idle; the others may now sleep
            turns.wake()

    done = await asyncio.gather(*(seat(i) for i in range(len(specs))))
    return [out for out in done if out is not None]


def seat_rows(specs: list[TrialSpec], match: Match) -> list[MatchSeat]:
    """The match's rows of ``match_seats``: which trial sits in which seat."""
    return [MatchSeat(spec.match_id or "", spec.attempt, spec.seat, spec.trial_id,
                      spec.run_id, spec.model.label, spec.world_seed, spec.seed, spec.repeat,
                      match.seats[spec.seat].summary().get("operator", f"seat {spec.seat}"))
            for spec in specs]
