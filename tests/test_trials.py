"""A trial's statuses, key and latest attempt, defined once (design §14) and used by
resume, the leaderboard and trends."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from vendbench.results import (FINISHED, RANKED, SET_APART, PairKey, TrialKey, TrialStatus,
                               latest_attempts)

SRC = Path(__file__).resolve().parent.parent / "src" / "vendbench"

T0 = dt.datetime(2026, 12, 1, 3, 0)


def row(model="m", world=2026, seed=1, repeat=1, attempt=1, minutes=0, status="completed"):
    return {"model": model, "world_seed": world, "seed": seed, "repeat": repeat,
            "attempt": attempt, "started_at": T0 + dt.timedelta(minutes=minutes),
            "status": status, "trial_id": f"{model}-w{world}-s{seed}-r{repeat}-a{attempt}"}


def test_every_status_is_finished_or_set_apart_never_both():
    assert FINISHED | SET_APART == set(TrialStatus) and not FINISHED & SET_APART
    assert RANKED == FINISHED
    assert {"error", "interrupted", "running", "not_started"} == SET_APART
    assert TrialStatus.NOT_STARTED == "not_started"        # stored as its string


def test_the_key_has_the_world_so_two_worlds_never_share_an_attempt():
    rows = [row(world=7, status="completed"), row(world=8, status="error")]
    latest = latest_attempts(rows)
    assert set(latest) == {TrialKey("m", 7, 1, 1), TrialKey("m", 8, 1, 1)}
    assert latest[TrialKey("m", 8, 1, 1)]["status"] == "error"


def test_the_latest_attempt_counts_never_the_best():
    rows = [row(attempt=1, minutes=0, status="completed"),
            row(attempt=2, minutes=5, status="error"),            # started later: counts
            row(seed=2, attempt=1, minutes=9), row(seed=2, attempt=2, minutes=9)]
    latest = latest_attempts(rows)
    assert latest[TrialKey("m", 2026, 1, 1)]["attempt"] == 2
    assert latest[TrialKey("m", 2026, 2, 1)]["attempt"] == 2   # a tie: the higher attempt
    assert latest_attempts(reversed(rows)) == latest           # whatever the order


def test_trials_of_two_models_pair_on_world_seed_and_repeat():
    a, b = row(model="a", world=7, seed=2, repeat=3), row(model="b", world=7, seed=2, repeat=3)
    assert PairKey.of(a) == PairKey.of(b) == TrialKey.of(a).pair == PairKey(7, 2, 3)
    assert PairKey.of(row(world=8, seed=2, repeat=3)) != PairKey.of(a)      # another world
    assert PairKey.of(row(world=7, seed=2, repeat=4)) != PairKey.of(a)      # another repeat
    assert PairKey.of(a).world == (7, 2)              # the oracle's ceiling: every repeat


def test_the_pair_key_is_written_once():
    """The key that decides which trials are compared is built in ``results/_trials.py``
    only: no other module picks a trial's world, seed and repeat out by hand (design §21)."""
    by_hand = re.compile(r"""[({]\s*\w+(\.get\(|\[)["']world_seed["']\)?\]?,\s*\w+\[["']seed["']\]""")
    found = [f"{p.relative_to(SRC)}: {m.group(0)}" for p in sorted(SRC.rglob("*.py"))
             if p.name != "_trials.py" for m in by_hand.finditer(p.read_text())]
    assert found == []


def test_the_oracles_scores_are_played_in_a_process_of_their_own(monkeypatch):
    """A run computes the oracle's scores beside its trials in a low-priority process
    (played in a thread, they held the scheduler's GIL: design §25.1); the rows are the
    ones computed in-process, a private world's salt included, and a cancelled job
    leaves no process behind."""
    import asyncio
    import os

    from vendbench.results import FloorRow, anchor_rows, anchor_rows_apart

    jobs = [("ceiling", 2026, 1), ("ceiling", 7, 2), ("floor", 7, 2)]
    here = anchor_rows("autovend", 10, jobs, "pepper")
    apart = asyncio.run(anchor_rows_apart("autovend", 10, jobs, "pepper"))
    assert [(type(r), r.world_seed, r.seed, r.salt_sha256, r.policy, r.score)
            for r in apart] == [(type(r), r.world_seed, r.seed, r.salt_sha256, r.policy,
                                 r.score) for r in here]
    assert len({r.score for r in apart}) == 3 and isinstance(apart[2], FloorRow)

    spawned: list[int] = []
    real = asyncio.create_subprocess_exec

    async def watched(*args, **kwargs):
        proc = await real(*args, **kwargs)
        spawned.append(proc.pid)
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", watched)

    async def cancelled() -> None:
        job = asyncio.create_task(anchor_rows_apart("autovend", 180, jobs * 2, None))
        while not spawned:
            await asyncio.sleep(0.01)
        job.cancel()
        try:
            await job
        except asyncio.CancelledError:
            pass

    asyncio.run(cancelled())
    gone = True
    try:
        os.kill(spawned[0], 0)
        gone = False
    except ProcessLookupError:
        pass
    assert gone
