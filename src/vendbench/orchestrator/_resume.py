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
from ._trial import TrialSpec

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
    """Keep finished trials and continue the others where they stopped, under their own
    ids (``restart``: run them again from day 1 as new attempts). Whatever a killed
    process left open is settled first, and the pool is what the run has spent: every
    attempt's charge, in-flight requests at their reservation."""
    settle_spend(store, run_id, pool)
    latest = latest_attempts(store.trials(run_id))
    tables = record_tables(store.run(run_id)["scenario"])
    kept, rerun = [], []
    for spec in specs:
        last = latest.get(TrialKey(spec.model.label, spec.world_seed, spec.seed, spec.repeat))
        if last is not None and last["status"] in FINISHED:
            kept.append(kept_json(last))
            continue
        if last is None:
            rerun.append(spec)
        elif restart:
            attempt = last["attempt"] + 1
            rerun.append(replace(spec, trial_id=f"{spec.trial_id}-a{attempt}", attempt=attempt))
        else:
            rerun.append(_continued(store, spec, last, tables))
    store.write(RunEnded(run_id, TrialStatus.RUNNING, None))      # running again
    return kept, rerun


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


def plan_match_resume(store: Store, run_id: str, specs: list[TrialSpec], pool: Budget, *,
                      restart: bool = False) -> tuple[list[dict[str, Any]], list[TrialSpec]]:
    """An arena's resume: a match whose every operator finished is kept; the others go
    on where they stopped, all their operators in step (the match's scheduler replays
    each LLM operator's logged calls day by day beside the others, plays each policy
    again from day 1, and replays an operator that had already finished until it left).
    ``restart``: play them again from day 1 as a new attempt of all their seats. What
    every earlier attempt spent stays in the run's total."""
    settle_spend(store, run_id, pool)
    seats: dict[str, list[dict[str, Any]]] = {}
    for row in store.match_seats([run_id]):
        seats.setdefault(row["match_id"], []).append(row)
    trials = {t["trial_id"]: t for t in store.trials(run_id)}
    tables = record_tables(store.run(run_id)["scenario"])
    matches: dict[str, list[TrialSpec]] = {}
    for spec in specs:
        matches.setdefault(spec.match_id or "", []).append(spec)
    kept: list[dict[str, Any]] = []
    rerun: list[TrialSpec] = []
    for match_id, match in matches.items():
        last = {r["seat"]: r for r in seats.get(match_id, [])}
        if len(last) == len(match) and all(r["status"] in FINISHED for r in last.values()):
            kept.extend(kept_json(trials[r["trial_id"]]) for r in last.values())
            continue
        if restart and last:
            attempt = next(iter(last.values()))["attempt"] + 1
            rerun.extend(replace(spec, trial_id=f"{spec.trial_id}-a{attempt}",
                                 attempt=attempt) for spec in match)
            continue
        for spec in match:
            seated = last.get(spec.seat)
            if seated is None or seated["status"] == TrialStatus.NOT_STARTED:
                rerun.append(spec)                  # it never began: as planned
                continue
            trial_id = seated["trial_id"]
            if seated["status"] in FINISHED:        # it left before the others stopped
                kept.append(kept_json(trials[trial_id]))
                rerun.append(replace(spec, trial_id=trial_id, attempt=seated["attempt"],
                                     resume=True, replay_only=True))
                continue
            rerun.append(_continued(store, spec, seated, tables))
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
