"""Why a model lost (design §32.1): the scenario's diagnostics per trial, and per model
their means over its trials with a 95 % interval, beside the reference policies' (each
a row of the same cohort); the failure modes' instances per trial, counted the same
way; and every trial's values and instances, for JSON and the viewer.

The interval is Student's t over the trials (two or more; it assumes roughly normal
values, as the leaderboard's default does). A diagnostic undefined for a trial (no
complete visit cycle, a window the trial did not reach) is left out of its mean, and the
row says over how many trials it stands.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..environment import (Diagnosis, Diagnostic, FailureMode, diagnose, diagnostics,
                           failure_modes, not_applicable, record_tables)
from ..results import Store
from ._board import t_interval

UNBOUNDED = (float("-inf"), float("inf"))


@dataclass
class DiagnosticRow:
    """One model's diagnostics over its trials."""

    model: str
    trials: int
    means: dict[str, float | None]
    intervals: dict[str, tuple[float, float] | None]
    defined: dict[str, int]                  # trials the diagnostic is defined for
    per_trial: dict[str, float]              # failure-mode instances per trial
    per_trial_intervals: dict[str, tuple[float, float] | None]
    readings: dict[str, int]                 # the growth reading: trials each

    def as_json(self) -> dict[str, Any]:
        return {"model": self.model, "trials": self.trials,
                "diagnostics": {k: {"mean": v, "ci": self.intervals[k],
                                    "trials": self.defined[k]}
                                for k, v in self.means.items()},
                "failure_modes": {k: {"per_trial": v, "ci": self.per_trial_intervals[k]}
                                  for k, v in self.per_trial.items()},
                "growth_readings": self.readings}


@dataclass
class Diagnostics:
    """A cohort's diagnostics: what its scenario declares, one row per model (in the
    leaderboard's order), and each trial's diagnosis."""

    scenario: str
    declared: tuple[Diagnostic, ...]
    modes: tuple[FailureMode, ...]
    not_applicable: dict[str, str]
    rows: list[DiagnosticRow] = field(default_factory=list)
    trials: dict[str, Diagnosis] = field(default_factory=dict)     # by trial id
    models: dict[str, str] = field(default_factory=dict)           # trial id -> model
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario,
                "declared": [{"name": d.name, "header": d.header, "better": d.direction,
                              "unit": d.unit, "source": d.source} for d in self.declared],
                "failure_modes": [{"kind": m.kind, "header": m.header, "what": m.words,
                                   "source": m.source} for m in self.modes],
                "not_applicable": self.not_applicable,
                "rows": [r.as_json() for r in self.rows],
                "trials": {tid: {"model": self.models[tid], **d.as_json()}
                           for tid, d in self.trials.items()},
                "seconds": self.seconds, "notes": self.notes}


def diagnose_trials(store: Store, scenario: str, days: int, trials: Sequence[dict[str, Any]],
                    salt: str | None, private: bool, order: Sequence[str],
                    on_trial: Callable[[int, int], None] | None = None) -> Diagnostics:
    """Every trial's diagnosis (``trials``: rows of the trials table), and the per-model
    rows in ``order`` (the leaderboard's). ``on_trial(done, total)`` hears progress."""
    out = Diagnostics(scenario, diagnostics(scenario), failure_modes(scenario),
                      not_applicable(scenario))
    if not out.declared:
        out.notes.append(f"{scenario} declares no diagnostics")
        return out
    tables = record_tables(scenario)
    start = time.perf_counter()
    for n, t in enumerate(trials, 1):
        found = diagnose(scenario, store.trial_records(t["trial_id"], tables),
                         store.trial_calls(t["trial_id"]), seed=t["seed"],
                         world_seed=t["world_seed"], days=days,
                         initial=float(t["initial_cash"] or 0.0), world_salt=salt,
                         private=private)
        if found is not None:
            out.trials[t["trial_id"]] = found
            out.models[t["trial_id"]] = t["model"]
        if on_trial is not None:
            on_trial(n, len(trials))
    out.seconds = time.perf_counter() - start
    for model in order:
        mine = [d for tid, d in out.trials.items() if out.models[tid] == model]
        if mine:
            out.rows.append(_row(model, mine, out))
    if any(d.notes and "private world" in " ".join(d.notes) for d in out.trials.values()):
        out.notes.append("private worlds: what needs the replayed world needs the worlds' "
                         "salt (VENDBENCH_WORLD_SALT)")
    return out


def _row(model: str, found: list[Diagnosis], out: Diagnostics) -> DiagnosticRow:
    means: dict[str, float | None] = {}
    intervals: dict[str, tuple[float, float] | None] = {}
    defined: dict[str, int] = {}
    for d in out.declared:
        values = [v for f in found if (v := f.values.get(d.name)) is not None]
        defined[d.name] = len(values)
        means[d.name] = statistics.fmean(values) if values else None
        intervals[d.name] = t_interval(values, bounds=UNBOUNDED)
    kinds = [m.kind for m in out.modes]
    counts = [f.counts(kinds) for f in found]
    per_trial = {k: statistics.fmean(c[k] for c in counts) for k in kinds}
    per_trial_intervals = {k: t_interval([float(c[k]) for c in counts],
                                         bounds=(0.0, float("inf"))) for k in kinds}
    readings: dict[str, int] = {}
    for f in found:
        for note in f.notes:
            if note.startswith("growth: "):
                reading = note.removeprefix("growth: ")
                readings[reading] = readings.get(reading, 0) + 1
    return DiagnosticRow(model, len(found), means, intervals, defined, per_trial,
                         per_trial_intervals, readings)


def diagnostics_tables(d: Diagnostics) -> list[tuple[str, list[str], list[list[str]]]]:
    """The diagnostics as tables: (title, headers, rows) for the diagnostics and for the
    failure modes, one row per model."""
    def cell(mean: float | None, scale: float, places: int, n: int, trials: int) -> str:
        if mean is None:
            return "—"
        text = f"{mean * scale:,.{places}f}"
        return text if n == trials else f"{text} ({n})"

    first = ("diagnostics (means over trials; (n): over n of them; intervals in JSON)",
             ["model", *(x.header for x in d.declared)],
             [[r.model, *(cell(r.means[x.name], x.scale, x.decimals, r.defined[x.name],
                               r.trials) for x in d.declared)] for r in d.rows])
    second = ("failure modes (instances per trial)", ["model", *(m.header for m in d.modes)],
              [[r.model, *(f"{r.per_trial[m.kind]:,.1f}" for m in d.modes)] for r in d.rows])
    return [first, second]


def diagnostics_footer(d: Diagnostics) -> list[str]:
    """What the tables' columns are, and what the scenario does not have."""
    lines = [f"{x.header}: {x.name.replace('_', ' ')} ({x.unit}; {x.source})"
             for x in d.declared]
    lines += [f"{m.header}: {m.words} ({m.kind}; {m.source})" for m in d.modes]
    lines += [f"not in {d.scenario}: {k.replace('_', ' ')} ({why})"
              for k, why in d.not_applicable.items()]
    lines.append(f"diagnosed {len(d.trials)} trial(s) in {d.seconds:.1f} s, from the "
                 "results file and each trial's world replayed; no model was asked")
    return [*lines, *d.notes]
