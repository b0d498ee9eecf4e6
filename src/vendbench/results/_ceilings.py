"""A share's anchors (design §18.1, §34): what the scenario's oracle (its ceiling policy)
and doing nothing (its floor policy) score on each world, seed, salt and horizon, so that
each trial's score is a share between them, (score − idle) / (oracle − idle), floored and
capped, in known bounds whatever the scenario's currency or scale.

Both are deterministic: their scores for a key are computed once (the oracle's in under
a second for 30 days, about 1.3 s for 180 days of AutoVend; doing nothing's in 0.01-0.05
s) and kept in the ``ceilings`` and ``floors`` tables. A run computes its keys' beside its
trials, in a process of their own at a lower priority (``anchor_rows_apart``): played in
a thread of the scheduler, the oracles held its event loop's GIL for 11 ms an exchange
of a 50-trial zero-latency run (py-spy, session 20), the main part of the throughput lost
since 2a56c77. A reader of an older file computes what is missing in memory (a private
world's only with its salt in the environment): a file written before shares had a 0 is
re-scored from its stored scores, doing nothing's computed, never guessed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from ..environment import (Anchors, ceiling_score, divisible, find_scenario, floor_score,
                           share, scenario as described)
from ._log import now
from ._rows import CeilingRow, FloorRow
from ._store import Store
from ._trials import PairKey

Key = tuple[int, int]                       # (world seed, seed)
# one score to compute: its role ("floor" or "ceiling"), world seed and seed
Job = tuple[str, int, int]
ROLES = ("floor", "ceiling")


def salt_hash(salt: str | None) -> str | None:
    """The SHA-256 a run keeps of a private world's salt (None: a public world)."""
    return hashlib.sha256(salt.encode()).hexdigest() if salt else None


def missing_anchors(store: Store, scenario: str, days: int, keys: Iterable[Key],
                    salt: str | None) -> list[Job]:
    """The scores ``store`` does not keep yet for ``keys``: doing nothing's and the
    oracle's (none for a scenario without an oracle)."""
    entry = find_scenario(scenario)
    if entry is None or entry.ceiling is None:
        return []
    digest, wanted = salt_hash(salt), set(keys)
    return sorted((role, *key) for role in ROLES for key in wanted - _kept(
        store, entry.name, days, digest, role).keys())


def _kept(store: Store, scenario: str, days: int, salt_sha256: str | None, role: str
          ) -> dict[Key, float]:
    entry = described(scenario)
    if role == "floor":
        return store.ceilings(scenario, days, salt_sha256, entry.floor_key, floors=True)
    return store.ceilings(scenario, days, salt_sha256, entry.ceiling_key)


def anchor_rows(scenario: str, days: int, jobs: Iterable[Job], salt: str | None
                ) -> list[CeilingRow]:
    """The scores of ``jobs``, as rows to keep (plays the policies: run it in a
    thread)."""
    entry = described(scenario)
    digest = salt_hash(salt) or ""
    rows: list[CeilingRow] = []
    for role, world, seed in jobs:
        if role == "floor":
            rows.append(FloorRow(scenario, world, seed, digest, days, entry.floor_key,
                                 floor_score(scenario, seed=seed, days=days,
                                             world_seed=world, world_salt=salt), now()))
        elif (score := ceiling_score(scenario, seed=seed, days=days, world_seed=world,
                                     world_salt=salt)) is not None:
            rows.append(CeilingRow(scenario, world, seed, digest, days,
                                   entry.ceiling_key or "", score, now()))
    return rows


CEILING_NICE = 19              # the oracles' process yields to the run's own
KILL_WAIT_S = 5.0              # for a killed oracles' process to be reaped


async def anchor_rows_apart(scenario: str, days: int, jobs: list[Job], salt: str | None,
                            *, niced: bool = True) -> list[CeilingRow]:
    """``anchor_rows`` in a process of its own (the salt goes through its stdin, never
    its command line), ``niced`` at a lower priority than the run; killed if cancelled.
    A niced process starves on a loaded machine (at nice 19 beside busy processes it
    gets about 1.5 % of a core): only use it while the run has work of its own."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vendbench.results._ceilings", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    job = json.dumps({"scenario": scenario, "days": days, "jobs": jobs, "salt": salt,
                      "nice": CEILING_NICE if niced else 0})
    try:
        out, err = await proc.communicate(job.encode())
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            try:            # never hang a cancellation on a child already reaped elsewhere
                await asyncio.wait_for(proc.wait(), KILL_WAIT_S)
            except (asyncio.TimeoutError, ProcessLookupError):
                pass
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"the oracle's scores could not be computed: "
                           f"{err.decode(errors='replace').strip().splitlines()[-1:]}")
    return [(FloorRow if row.pop("table") == FloorRow.TABLE else CeilingRow)(
        **{**row, "computed_at": dt.datetime.fromisoformat(row["computed_at"])})
        for row in json.loads(out)]


def _main() -> None:
    """``python -m vendbench.results._ceilings``: a job on stdin, the rows on stdout."""
    _die_with_parent()
    job = json.loads(sys.stdin.read())
    if job.get("nice"):
        os.nice(int(job["nice"]))
    rows = anchor_rows(job["scenario"], job["days"], [tuple(j) for j in job["jobs"]],
                       job["salt"])
    json.dump([{**{f.name: getattr(r, f.name) for f in fields(r)}, "table": r.TABLE,
                "computed_at": r.computed_at.isoformat()} for r in rows], sys.stdout)


def _die_with_parent() -> None:
    """Linux: end with the run that started it (a run killed with -9 leaves no oracle
    playing on); elsewhere it ends when its work is done."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:              # the parent died before the line above ran
        sys.exit(1)


def anchors_for(store: Store, scenario: str, days: int, keys: Iterable[Key],
                salt_sha256: str | None, salt: str | None, compute: bool = True
                ) -> dict[Key, Anchors]:
    """Doing nothing's and the oracle's scores for each of ``keys``: kept, or computed now
    (not kept: the store may be read-only; ``compute`` False: only those kept). A key
    without both is left out; a private world's key without its ``salt`` (whose SHA-256
    must be ``salt_sha256``) stays missing."""
    entry = find_scenario(scenario)
    if entry is None or entry.ceiling is None:
        return {}
    keys = set(keys)
    scores = {role: _kept(store, scenario, days, salt_sha256, role) for role in ROLES}
    can = compute and not (salt_sha256 and salt_hash(salt) != salt_sha256)
    out = {}
    for world, seed in keys:
        found = {role: scores[role].get((world, seed)) for role in ROLES}
        if can and None in found.values():
            kw: dict[str, Any] = {"seed": seed, "days": days, "world_seed": world,
                                  "world_salt": salt if salt_sha256 else None}
            found["floor"] = found["floor"] if found["floor"] is not None \
                else floor_score(scenario, **kw)
            found["ceiling"] = found["ceiling"] if found["ceiling"] is not None \
                else ceiling_score(scenario, **kw)
        if found["floor"] is not None and found["ceiling"] is not None:
            out[(world, seed)] = Anchors(found["floor"], found["ceiling"])
    return out


def trial_score(trial: Mapping[str, Any]) -> float:
    """What a trial counts for: its score if it completed, else 0 (unfinished)."""
    if trial["status"] == "completed" and trial.get("score") is not None:
        return float(trial["score"])
    return 0.0


def shares(trials: Iterable[Mapping[str, Any]], scenario: str,
           anchors: Mapping[Key, Anchors]) -> dict[str, float | None]:
    """Each trial's share of the oracle's gain (design §34), by trial id: None where its
    key has no anchors (a private world without its salt), and for every trial when the
    oracle gains too little to divide by on any of their keys (``no_share`` says why)."""
    trials = list(trials)
    if any(not divisible(a, scenario) for a in anchors.values()):
        return {t["trial_id"]: None for t in trials}
    return {t["trial_id"]: share(trial_score(t), anchors.get(PairKey.of(t).world), scenario)
            for t in trials}


if __name__ == "__main__":
    _main()
