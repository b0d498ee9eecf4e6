"""A leaderboard built from a results file: the ranked rows and what the charts need."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..environment import (SALT_ENV, currency, find_scenario, metric_directions,
                           no_share, record_tables, scenario_metrics,
                           score_column, score_name, share_bounds, trial_metrics)
from ..results import PairKey, Store, anchors_for, shares, trial_score as score
from ._board import (CI_METHODS, INTERVAL_METHOD, T_METHOD, ModelRow, Roles, flags_of,
                     model_rows)
from ._data import Filters, Selection, select
from ._diagnostics import Diagnostics, diagnose_trials


UNKNOWN_BOUNDS = (-1.0, 1.25)     # a scenario's defaults, for a world not installed here


@dataclass
class Board:
    rows: list[ModelRow]
    selection: Selection
    trajectories: dict[str, list[list[float]]] = field(default_factory=dict)
    directions: dict[str, str] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)   # per trial: score, cost
    chart_notes: dict[str, str] = field(default_factory=dict)    # charts not drawn, and why
    ci: str = "t"                   # the shares' interval: "t" or "any-shape" (design §30)
    bounds: tuple[float, float] = UNKNOWN_BOUNDS     # what the shares lie in (design §34)
    # the metrics an operator that does nothing wins by default (design §34.3)
    idle_wins: frozenset[str] = frozenset()
    diagnosis: Diagnostics | None = None      # with --diagnostics (design §32.1)
    findings: list[dict[str, Any]] = field(default_factory=list)   # flags (design §32.2)

    @property
    def currency(self) -> str:
        return currency(self.selection.cohort["scenario"])

    @property
    def score_name(self) -> str:
        return score_name(self.selection.cohort["scenario"])

    def as_json(self) -> dict[str, Any]:
        s = self.selection
        harnesses = sorted({r.harness for r in self.rows})
        return {"rows": [r.as_json() for r in self.rows],
                "cohort": {**s.cohort, "harnesses": harnesses}, "runs": s.runs,
                "refused": s.refused, "set_apart": s.set_apart, "other_cohorts": s.others,
                "left_out_compare": s.left_out_compare,
                "interval_method": interval_method(self.ci),
                "share_bounds": list(self.bounds),
                "notes": ["unfinished trials score 0; harness errors are set apart",
                          "each model's latest attempt per world, seed and repeat is used",
                          "comparisons with the reference policies pair trials by world, "
                          "seed and repeat", *s.notes],
                **({"diagnostics": self.diagnosis.as_json()} if self.diagnosis else {}),
                **({"findings": self.findings} if self.screened else {})}

    @property
    def screened(self) -> bool:
        """Whether vendbench screen has read any of the ranked trials."""
        return any(r.screened for r in self.rows)


def interval_method(ci: str) -> str:
    """What the oracle share's interval is, in words."""
    return T_METHOD if ci == "t" else INTERVAL_METHOD


def build(db: str, run: str = "latest", filters: Filters = Filters(), ci: str = "t",
          diagnostics: bool = False,
          on_trial: Callable[[int, int], None] | None = None) -> Board:
    """Compute the leaderboard of ``run`` ("latest", "all" or a run id) in ``db``, among
    the runs ``filters`` admits (a horizon, a scenario); ``ci``: the oracle share's
    interval, "t" (Student's, over the seeds; the default) or "any-shape".
    ``diagnostics``: each trial diagnosed too (design §32.1; ``on_trial(done, total)``
    hears each)."""
    if ci not in CI_METHODS:
        raise ValueError(f"ci is one of {CI_METHODS}, not {ci!r}")
    with Store(db, read_only=True) as store:
        selection = select(store, run, filters)
        scenario = selection.cohort["scenario"]
        private = selection.cohort.get("world_salt_sha256")
        salt = _salt_for(store, selection) if private else None   # never stored
        if private and salt is None:
            selection.notes.append(
                "private worlds: pricing regret and assortment need the worlds' salt (set "
                "VENDBENCH_WORLD_SALT, or the run's world_salt_env, to compute them)")
        operations: dict[str, dict[str, float | None]] = {}
        trajectories: dict[str, list[list[float]]] = {}
        points: list[dict[str, Any]] = []
        column = score_column(scenario)          # the score's own quantity, day by day
        tables = record_tables(scenario)
        for t in selection.trials:
            rows = store.trial_records(t["trial_id"], tables)
            operations[t["trial_id"]] = trial_metrics(
                scenario, rows, rows["tool_calls"], t["world_seed"], world_salt=salt,
                private=bool(private))
            trajectories.setdefault(t["model"], []).append(
                [float(d[column]) for d in rows["days"]])
            points.append({"model": t["model"], "seed": t["seed"], "score": score(t),
                           "share": None,
                           "trial_id": t["trial_id"], "world_seed": t["world_seed"],
                           "repeat": t["repeat"],
                           "cost": float(t["cost_usd"]) if t["cost_usd"] is not None
                           else None, "status": t["status"]})
        shared = trial_shares(store, selection, salt)
        findings, screened = flags_of(store, [t["trial_id"] for t in selection.trials])
    for p in points:
        p["share"] = shared.by_trial.get(p["trial_id"])
    board = Board(model_rows(selection.trials, operations, shared.by_trial, shared.bounds,
                             Roles.of(scenario), ci=ci),
                  selection, trajectories, metric_directions(scenario), points, ci=ci,
                  bounds=shared.bounds,
                  idle_wins=frozenset(m.name for m in scenario_metrics(scenario)
                                      if m.idle_wins))
    for r in board.rows:
        if r.ci_doubt:
            selection.notes.append(f"{r.model}: {r.ci_doubt}")
    _flag_above_oracle(board)
    _flags(board, findings, screened)
    if diagnostics and selection.cohort.get("days") is not None \
            and find_scenario(scenario) is not None:
        with Store(db, read_only=True) as store:
            board.diagnosis = diagnose_trials(store, scenario, selection.cohort["days"],
                                              selection.trials, salt, bool(private),
                                              [r.model for r in board.rows], on_trial)
    return board


@dataclass(frozen=True)
class TrialShares:
    """Each selected trial's share of the oracle's gain (None where it has none), and the
    bounds they lie in (``environment.share_bounds`` of their anchors)."""

    by_trial: dict[str, float | None]
    bounds: tuple[float, float]


def trial_shares(store: Store, selection: Selection, salt: str | None) -> TrialShares:
    """Each selected trial's share, (score − idle) / (oracle − idle) (design §34): the
    anchors kept in the file, or computed now for keys it lacks (an older file, an MCP
    session). Notes why some trials have none."""
    c = selection.cohort
    if find_scenario(c.get("scenario")) is None:      # a world not installed here
        return TrialShares({}, UNKNOWN_BOUNDS)
    if not selection.trials or c.get("days") is None:
        return TrialShares({}, share_bounds(c["scenario"]))
    keys = {PairKey.of(t).world for t in selection.trials}
    anchors = anchors_for(store, c["scenario"], c["days"], keys,
                          c.get("world_salt_sha256"), salt)
    if len(anchors) < len(keys):
        selection.notes.append("oracle shares need the worlds' salt for private worlds "
                               "(set VENDBENCH_WORLD_SALT or the run's world_salt_env)")
    if (why := no_share(anchors.values(), c["scenario"])) is not None:
        selection.notes.append(why)
    return TrialShares(shares(selection.trials, c["scenario"], anchors),
                       share_bounds(c["scenario"], anchors.values()))


def _flags(board: Board, findings: list[dict[str, Any]], screened: dict[str, list[str]]
           ) -> None:
    """Each model's flags over its screened trials, and the findings themselves."""
    for r in board.rows:
        mine = [t["trial_id"] for t in board.selection.trials if t["model"] == r.model]
        r.screened = sum(t in screened for t in mine)
        if r.screened:
            r.flags = sum(f["trial_id"] in mine for f in findings)
    board.findings = findings
    if board.screened:
        screened_trials = sum(r.screened for r in board.rows)
        board.selection.notes.append(
            f"flags: findings of vendbench screen at severity warning or high, "
            f"{len(findings)} in {screened_trials} screened trial(s); --flags lists them")


def _flag_above_oracle(board: Board) -> None:
    """A trial that beat the privileged oracle found an exploit or a bug: say which."""
    above = [p for p in board.points if p["share"] is not None and p["share"] > 1]
    for p in above:
        board.selection.notes.append(
            f"ABOVE THE ORACLE: {p['model']} world {p['world_seed']} seed {p['seed']} "
            f"scored {p['share']:.1%} of the oracle's score: an exploit or a bug? look at "
            f"it: vendbench view {p['trial_id']}")


def _salt_for(store: Store, selection: Selection) -> str | None:
    """The salt of the cohort's private worlds, if this environment has it (checked
    against the stored SHA-256; never stored itself)."""
    import hashlib
    import os

    names = {SALT_ENV}
    for run_id in selection.runs:
        name = json.loads(store.run(run_id)["config_json"]).get("world_salt_env")
        if name:
            names.add(name)
    for name in sorted(names):
        salt = os.environ.get(name)
        if salt and hashlib.sha256(salt.encode()).hexdigest() == \
                selection.cohort["world_salt_sha256"]:
            return salt
    return None
