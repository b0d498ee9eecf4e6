"""Reading trials for a leaderboard: which runs, which attempts, what may be compared."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._text import count, days as days_text
from ..errors import ResultsError
from ..results import SET_APART, Store, latest_attempts




@dataclass
class Selection:
    """The trials one ranking uses, and what was refused or set apart."""

    cohort: dict[str, Any]
    trials: list[dict[str, Any]]
    refused: list[dict[str, Any]] = field(default_factory=list)
    set_apart: list[dict[str, Any]] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)   # the file's other cohorts
    db: str = ""
    left_out_compare: int = 0      # compare batches not ranked (no --include-compare)


def _cohort(run: dict[str, Any], initial_cash: float | None) -> dict[str, Any]:
    """What must match for two trials to share a ranking: the same task (scenario,
    horizon, starting cash, prompts, tools) in the same worlds (world seeds, salt)."""
    return {"scenario": run["scenario"], "days": run["days"], "initial_cash": initial_cash,
            "world_seeds": sorted(json.loads(run.get("world_seeds") or "[2026]")),
            "world_salt_sha256": run.get("world_salt_sha256"),
            "prompt_sha256": run["prompt_sha256"], "tools_sha256": run["tools_sha256"]}


@dataclass(frozen=True)
class Filters:
    """Which runs a ranking may draw on, besides ``--run``: a horizon, a scenario."""

    days: int | None = None
    scenario: str | None = None
    include_compare: bool = False

    def admits(self, run: Mapping[str, Any]) -> bool:
        """Whether ``run`` may be ranked here: never an arena run (design §23.5: those
        are ranked by ``leaderboard --arena`` only), a compare batch only when asked
        (design §31.2)."""
        from ._arena import arena_seats

        return ((self.days is None or run["days"] == self.days)
                and (self.scenario is None or run["scenario"] == self.scenario)
                and not arena_seats(run)
                and (self.include_compare or not run.get("comparison")))

    def describe(self) -> str:
        parts = [f"scenario {self.scenario}" if self.scenario else "",
                 days_text(self.days) if self.days else ""]
        return ", ".join(p for p in parts if p) or "any"


def run_cohorts(store: Store, runs: Sequence[Mapping[str, Any]]
                ) -> dict[str, dict[str, Any]]:
    """Each run's cohort key (see ``_cohort``), by run id; the starting cash from its
    trials."""
    cash = store.initial_cash_by_run()
    return {r["run_id"]: _cohort(store.run(r["run_id"]), cash.get(r["run_id"])) for r in runs}


def select(store: Store, which: str = "latest", filters: Filters = Filters(), *,
           others: bool = True) -> Selection:
    """The trials of ``which`` (a run id, "latest" or "all") among the runs ``filters``
    admits, latest attempt per model, world, seed and repeat, restricted to one
    comparable cohort: the newest chosen run's (``others``: also list the file's other
    cohorts)."""
    every = store.runs()
    if not every:
        raise ResultsError(f"no runs in {store.path}; run `vendbench run` first")
    runs = [r for r in every if filters.admits(r)]
    batches = [r for r in every if r.get("comparison") and not filters.include_compare]
    if which not in ("all", "latest"):      # a run asked for by its id is shown
        asked = next((r for r in batches if r["run_id"] == which), None)
        if asked is not None:
            batches.remove(asked)
            runs.append(asked)
    if not runs and all(not Filters(include_compare=True).admits(r) for r in every):
        raise ResultsError(f"{store.path} holds only arena runs; rank them with "
                           f"vendbench leaderboard --arena --db {store.path}")
    if not runs and batches:
        raise ResultsError(f"{store.path} holds only the batches of comparisons "
                           f"({len(batches)} runs); rank them with --include-compare, or see "
                           f"vendbench compare --show latest --db {store.path}")
    if not runs:
        kinds = sorted({f"{r['scenario']} {days_text(r['days'])}" for r in every})
        raise ResultsError(f"no run in {store.path} matches {filters.describe()}; it holds "
                           f"{', '.join(kinds)}")
    chosen: list[Mapping[str, Any]]
    if which == "all":
        chosen = list(runs)
    elif which == "latest":
        chosen = [max(runs, key=lambda r: r["created_at"])]
    else:
        chosen = [store.run(which)]
        if not Filters(include_compare=True).admits(chosen[0]):
            raise ResultsError(f"run {which} is an arena run: rank it with "
                               f"vendbench leaderboard --arena --run {which}")
        if not replace(filters, include_compare=True).admits(chosen[0]):
            raise ResultsError(f"run {which} is {chosen[0]['scenario']}, "
                               f"{days_text(chosen[0]['days'])}: not {filters.describe()}")
    chosen_ids = [r["run_id"] for r in chosen]
    full = {r["run_id"]: store.run(r["run_id"]) for r in chosen}
    rows: list[dict[str, Any]] = []
    for run_id in chosen_ids:
        rows.extend({**t, "_run": full[run_id]} for t in store.trials(run_id))
    # the newest run decides the cohort; the others must match it
    newest = max(full.values(), key=lambda r: r["created_at"])
    cash = next((t["initial_cash"] for t in rows if t["_run"] is newest
                 and t["initial_cash"] is not None), None)
    cohort = _cohort(newest, cash)
    kept, refused = [], []
    for t in rows:
        theirs = _cohort(t["_run"], t["initial_cash"] if t["initial_cash"] is not None
                         else cash)
        diff = [k for k in cohort if theirs[k] != cohort[k]]
        if diff:
            refused.append({"trial_id": t["trial_id"], "model": t["model"],
                            "run_id": t["run_id"], "differs_in": diff,
                            "reason": "; ".join(_differs(k, theirs[k], cohort[k])
                                                for k in diff)})
        else:
            kept.append(t)
    latest = latest_attempts(kept)       # each model's latest attempt, never its best
    ranked = [t for t in latest.values() if t["status"] not in SET_APART]
    apart = [{"trial_id": t["trial_id"], "model": t["model"], "world_seed": t["world_seed"],
              "seed": t["seed"], "repeat": t["repeat"], "status": t["status"],
              "reason": t["reason"]}
             for t in latest.values() if t["status"] in SET_APART]
    for t in ranked:
        t.pop("_run", None)
    used = sorted({t["run_id"] for t in kept}, key=chosen_ids.index) or [newest["run_id"]]
    selection = Selection(cohort, ranked, refused, apart, used,
                          left_out_compare=len(batches))
    if batches:
        selection.notes.append(
            f"left out {count(len(batches), 'run')} of vendbench compare (its batches; rank "
            "them with --include-compare, or see vendbench compare --show)")
    if others:
        left_out = {r["run_id"] for r in batches}
        selection.others = _other_cohorts(
            store, [r for r in every if r["run_id"] not in left_out], cohort, used)
    selection.db = store.path
    return selection


def _other_cohorts(store: Store, runs: Sequence[Mapping[str, Any]], cohort: dict[str, Any],
                   used: list[str]) -> list[dict[str, Any]]:
    """The file's other cohorts, newest first, each with the command that ranks it."""
    keys = run_cohorts(store, runs)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        key = keys[r["run_id"]]
        if key == cohort or (key["initial_cash"] is None and r["run_id"] in used):
            continue
        groups.setdefault(json.dumps(key, sort_keys=True, default=str), []).append(r)
    out = []
    for members in groups.values():
        newest = max(members, key=lambda r: r["created_at"])
        key = keys[newest["run_id"]]
        unique = sum(1 for g in groups.values()
                     if (g[0]["scenario"], g[0]["days"]) == (newest["scenario"], newest["days"]))
        same_kind = (key["scenario"], key["days"]) == (cohort["scenario"], cohort["days"])
        how = (f"--run {newest['run_id']}" if same_kind or unique > 1 else
               f"--run all --scenario {key['scenario']} --days {key['days']}")
        out.append({"scenario": key["scenario"], "days": key["days"],
                    "world_seeds": key["world_seeds"], "runs": len(members),
                    "newest_run": newest["run_id"], "select": how,
                    "created_at": newest["created_at"]})
    out.sort(key=lambda o: o["created_at"], reverse=True)
    for o in out:
        o["created_at"] = str(o["created_at"])[:19]
    return out


def _differs(key: str, theirs: Any, ours: Any) -> str:
    if key == "world_salt_sha256":
        what = {None: "public worlds"}
        return (f"{what.get(theirs, 'private worlds')} vs {what.get(ours, 'private worlds')}"
                if (theirs is None) != (ours is None) else "another world salt")
    return f"{key} differs" if "sha" in key else f"{key} {theirs!r} vs {ours!r}"
