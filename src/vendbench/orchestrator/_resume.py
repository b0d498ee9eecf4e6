"""Resuming a run (design §7): what a killed process left open is settled, finished
trials are kept, the others continue where they stopped (or, with ``--restart``, run
again from day 1); an arena's unfinished matches go on with all their operators."""

from __future__ import annotations

import logging
from dataclasses import replace
from collections.abc import Mapping
from typing import Any

from ..budgets import Budget
from ..environment import RecordTable, record_tables
from ..errors import ConfigError
from ..results import (FINISHED, RunEnded, Store, TrialKey, TrialRecord, TrialStatus,
                       latest_attempts)
from ._spec import TrialSpec

log = logging.getLogger(__name__)


def check_same_worlds(run: Mapping[str, Any], current: str | None, name: str) -> None:
    """A resumed run must play the worlds it played: the same salt (``current``: the
    SHA-256 of the one in environment variable ``name`` now), or none."""
    stored = run.get("world_salt_sha256")
    if stored == current:
        return
    if stored is None:
        raise ConfigError(f"run {run['run_id']} played public worlds, but {name} is set: "
                          f"unset it to resume the run")
    if current is None:
        raise ConfigError(f"run {run['run_id']} played private worlds (salt SHA-256 "
                          f"{stored[:12]}…): set {name} to the same salt to resume it")
    raise ConfigError(f"the salt in {name} (SHA-256 {current[:12]}…) is not the one run "
                      f"{run['run_id']} used ({stored[:12]}…)")


def plan_resume(store: Store, run_id: str, specs: list[TrialSpec], pool: Budget, *,
                restart: bool = False) -> tuple[list[dict[str, Any]], list[TrialSpec]]:
    """Keep what finished and continue the rest where it stopped, table by table (a
    match's seats together, or a trial alone: a table of one seat). A table whose every
    seat finished is kept; ``restart`` plays the others again from day 1 as a new attempt
    of all their seats; otherwise each seat goes on under its own id (an LLM trial from
    its log, a policy from day 1), a seat that never began as planned, and a match's seat
    that had finished before the others stopped is replayed until it left. Whatever a
    killed process left open is settled first, and the pool is what the run has spent."""
    settle_spend(store, run_id, pool)
    tables: dict[str, list[TrialSpec]] = {}
    for spec in specs:
        tables.setdefault(spec.match_id or spec.trial_id, []).append(spec)
    last = _last_attempts(store, run_id, specs)
    trials = {t["trial_id"]: t for t in store.trials(run_id)}
    records = record_tables(store.run(run_id)["scenario"])
    kept: list[dict[str, Any]] = []
    rerun: list[TrialSpec] = []
    for table in tables.values():
        rows = [last.get(spec.trial_id) for spec in table]
        if all(r is not None and r["status"] in FINISHED for r in rows):
            kept.extend(kept_json(trials[r["trial_id"]]) for r in rows if r is not None)
            continue
        if restart and any(rows):
            attempt = max(r["attempt"] for r in rows if r is not None) + 1
            rerun.extend(replace(spec, trial_id=f"{spec.trial_id}-a{attempt}",
                                 attempt=attempt) for spec in table)
            continue
        for spec, row in zip(table, rows):
            if row is None or row["status"] == TrialStatus.NOT_STARTED:
                rerun.append(spec)                  # it never began: as planned
            elif row["status"] in FINISHED:         # it left before the others stopped
                kept.append(kept_json(trials[row["trial_id"]]))
                rerun.append(replace(spec, trial_id=row["trial_id"], attempt=row["attempt"],
                                     resume=True, replay_only=True))
            else:
                rerun.append(_continued(store, spec, row, records))
    store.write(RunEnded(run_id, TrialStatus.RUNNING, None))      # running again
    return kept, rerun


def _last_attempts(store: Store, run_id: str, specs: list[TrialSpec]
                   ) -> dict[str, Mapping[str, Any]]:
    """Each planned trial's last attempt, by the planned trial id: a match's seat as its
    match seated it, a trial alone by its key (model, world, seed, repeat)."""
    if any(spec.match_id for spec in specs):
        seated = {(r["match_id"], r["seat"]): r for r in store.match_seats([run_id])}
        return {spec.trial_id: r for spec in specs
                if (r := seated.get((spec.match_id, spec.seat))) is not None}
    latest = latest_attempts(store.trials(run_id))
    return {spec.trial_id: row for spec in specs
            if (row := latest.get(TrialKey(spec.model.label, spec.world_seed, spec.seed,
                                           spec.repeat))) is not None}


def _continued(store: Store, spec: TrialSpec, last: Mapping[str, Any],
               tables: tuple[RecordTable, ...]) -> TrialSpec:
    """``spec`` going on as its stopped trial ``last``, under its id: an LLM trial from
    its log, an in-process policy from day 1 (free to run again; its rows forgotten)."""
    trial_id = last["trial_id"]
    if spec.model.in_process:
        store.forget_progress(trial_id, tables)
    return replace(spec, trial_id=trial_id, attempt=last["attempt"],
                   segment=store.segments(trial_id) + 1, resume=not spec.model.in_process,
                   spent_before=store.trial_spent(trial_id))


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
