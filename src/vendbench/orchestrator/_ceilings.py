"""A share's anchors for a run's worlds and seeds (design §18.1, §34): what the oracle and
doing nothing score there, kept beside its trials."""

from __future__ import annotations

import asyncio
from typing import Any

from ..environment import installed
from ..results import (ResultsWriter, Store, anchor_rows, anchor_rows_apart, missing_anchors,
                       no_core_spare)
from ._clients import Clients
from ._config import RunConfig

IDLE_POLL_S = 0.5        # how often the oracle's scores look for spare CPU


def keep_ceilings(store: Store, writer: ResultsWriter, config: RunConfig,
                  clients: Clients, trials_ended: asyncio.Event) -> asyncio.Task[Any]:
    """Compute, beside the trials, what the scenario's oracle and doing nothing score on
    each of the run's worlds and seeds that the file does not keep yet (a share's 100 %
    and 0, design §34), and queue them for the file: in a process of their own at the
    lowest priority (``results.anchor_rows_apart``), started once a core's worth of the CPUs
    is idle or the trials have ended, so that a fixed cost a seed never takes CPU the trials want
    (design §25.1: in a thread of this process it cost a 50-trial zero-latency run a tenth
    of its throughput; started at once in its own process, still 0.92x)."""
    # an arena's too: its leaderboard takes each seat's earned score as a share of what
    # the oracle scores alone on the seed (design §29.2); not kept, every reading of it
    # computed them again (89 s for the matches of a 365-day arena)
    keys = [(w, s) for w in config.world_seeds for s in config.seeds]
    salt = clients.world_salt
    todo = missing_anchors(store, config.scenario, config.days, keys, salt)

    async def apart() -> list[Any]:
        """Niced while the trials run; once they have ended the run waits only for these
        scores, so a niced process still at work (starving on a loaded machine) gives way
        to one at the run's own priority."""
        if trials_ended.is_set():
            return await anchor_rows_apart(config.scenario, config.days, todo, salt,
                                            niced=False)
        niced = asyncio.create_task(anchor_rows_apart(config.scenario, config.days, todo,
                                                       salt))
        ended = asyncio.create_task(trials_ended.wait())
        try:
            await asyncio.wait({niced, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        if niced.done():
            return niced.result()
        niced.cancel()
        await asyncio.gather(niced, return_exceptions=True)
        return await anchor_rows_apart(config.scenario, config.days, todo, salt,
                                        niced=False)

    async def keep() -> None:
        if todo:
            while no_core_spare() and not trials_ended.is_set():
                await asyncio.sleep(IDLE_POLL_S)
            if installed(config.scenario):
                rows = await apart()
            else:       # registered in this process only: a fresh one would not find it
                rows = await asyncio.to_thread(anchor_rows, config.scenario, config.days,
                                               todo, salt)
            for row in rows:
                writer.put_row(row)

    return asyncio.create_task(keep(), name="ceilings")
