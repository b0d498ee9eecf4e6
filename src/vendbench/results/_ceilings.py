"""Oracle shares (design §18.1): each trial's score as a share of its scenario's oracle on
the same world, seed, salt and horizon, floored and capped, so that scores lie in known
bounds whatever the scenario's currency or scale.

The oracle is deterministic: its score for a key is computed once (under a second for
30 days, about 1.3 s for 180 days of AutoVend) and kept in the ``ceilings`` table. A run
computes its keys' beside its trials, in a process of their own at a lower priority
(``ceiling_rows_apart``): played in a thread of the scheduler, the oracles held its
event loop's GIL for 11 ms an exchange of a 50-trial zero-latency run (py-spy, session
20), the main part of the throughput lost since 2a56c77. A reader of an older file
computes what is missing in memory (a private world's only with its salt in the
environment).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from ..environment import ceiling_score, find_scenario, oracle_share, scenario as described
from ._log import now
from ._rows import CeilingRow
from ._store import Store
from ._trials import PairKey

Key = tuple[int, int]                       # (world seed, seed)


def salt_hash(salt: str | None) -> str | None:
    """The SHA-256 a run keeps of a private world's salt (None: a public world)."""
    return hashlib.sha256(salt.encode()).hexdigest() if salt else None


def missing_ceilings(store: Store, scenario: str, days: int, keys: Iterable[Key],
                     salt: str | None) -> list[Key]:
    """The keys whose oracle score ``store`` does not keep yet (none for a scenario
    without an oracle)."""
    entry = find_scenario(scenario)
    if entry is None or entry.ceiling is None:
        return []
    return sorted(set(keys) - store.ceilings(scenario, days, salt_hash(salt),
                                             entry.ceiling_key).keys())


def ceiling_rows(scenario: str, days: int, keys: Iterable[Key], salt: str | None
                 ) -> list[CeilingRow]:
    """The oracle's scores for ``keys``, as rows to keep (plays the oracle: run it in a
    thread)."""
    entry = described(scenario)
    digest = salt_hash(salt)
    rows = []
    for world, seed in keys:
        score = ceiling_score(scenario, seed=seed, days=days, world_seed=world,
                              world_salt=salt)
        if score is not None:
            rows.append(CeilingRow(scenario, world, seed, digest or "", days,
                                   entry.ceiling_key or "", score, now()))
    return rows


CEILING_NICE = 19              # the oracles' process yields to the run's own
KILL_WAIT_S = 5.0              # for a killed oracles' process to be reaped


async def ceiling_rows_apart(scenario: str, days: int, keys: list[Key], salt: str | None,
                             *, niced: bool = True) -> list[CeilingRow]:
    """``ceiling_rows`` in a process of its own (the salt goes through its stdin, never
    its command line), ``niced`` at a lower priority than the run; killed if cancelled.
    A niced process starves on a loaded machine (at nice 19 beside busy processes it
    gets about 1.5 % of a core): only use it while the run has work of its own."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vendbench.results._ceilings", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    job = json.dumps({"scenario": scenario, "days": days, "keys": keys, "salt": salt,
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
    return [CeilingRow(**{**row, "computed_at": dt.datetime.fromisoformat(
        row["computed_at"])}) for row in json.loads(out)]


def _main() -> None:
    """``python -m vendbench.results._ceilings``: a job on stdin, the rows on stdout."""
    _die_with_parent()
    job = json.loads(sys.stdin.read())
    if job.get("nice"):
        os.nice(int(job["nice"]))
    rows = ceiling_rows(job["scenario"], job["days"], [tuple(k) for k in job["keys"]],
                        job["salt"])
    json.dump([{**{k: getattr(r, k) for k in r.__slots__},
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


def ceilings_for(store: Store, scenario: str, days: int, keys: Iterable[Key],
                 salt_sha256: str | None, salt: str | None, compute: bool = True
                 ) -> dict[Key, float]:
    """The oracle's score for each of ``keys``: kept, or computed now (not kept: the
    store may be read-only; ``compute`` False: only those kept). A private world's key
    without its ``salt`` (whose SHA-256 must be ``salt_sha256``) stays missing."""
    entry = find_scenario(scenario)
    kept = store.ceilings(scenario, days, salt_sha256, entry.ceiling_key if entry else None)
    missing = set(keys) - kept.keys()
    if not missing or not compute or (salt_sha256 and salt_hash(salt) != salt_sha256):
        return kept
    if entry is None or entry.ceiling is None:
        return kept
    out = dict(kept)
    for world, seed in missing:
        score = ceiling_score(scenario, seed=seed, days=days, world_seed=world,
                              world_salt=salt if salt_sha256 else None)
        if score is not None:
            out[(world, seed)] = score
    return out


def trial_score(trial: Mapping[str, Any]) -> float:
    """What a trial counts for: its score if it completed, else 0 (unfinished)."""
    if trial["status"] == "completed" and trial.get("score") is not None:
        return float(trial["score"])
    return 0.0


def shares(trials: Iterable[Mapping[str, Any]], scenario: str,
           ceilings: dict[Key, float]) -> dict[str, float | None]:
    """Each trial's oracle share, by trial id (None where its key has no oracle score)."""
    return {t["trial_id"]: oracle_share(trial_score(t), ceilings.get(
        PairKey.of(t).world), scenario) for t in trials}


if __name__ == "__main__":
    _main()
