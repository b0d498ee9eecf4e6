"""Trends across runs (nights) of one cohort, and the regressions worth a red cron job.

A night is one run. Per model and night: trials, completed, mean net assets with its
bootstrap CI, cost, API efficiency — the leaderboard's numbers for that run alone.

A model regresses when its latest night is worse than its previous one beyond noise:
the trials of the two nights are paired by world, seed and repeat (the same demand
draws), and the 95 % bootstrap CI of the paired differences lies below 0. Or when its
share of failed (unfinished or errored) trials jumps by ``FAILED_JUMP`` or more.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from .._text import count
from .._text import days as days_text
from ..environment import currency, score_name
from ..errors import ResultsError
from ..results import SET_APART, Store
from ._board import bootstrap_ci, model_rows, score
from ._data import Filters, run_cohorts, select

FAILED_JUMP = 0.2         # a rise in the failed share this large is flagged
# fewer paired trials cannot tell a regression from noise: with n pairs, the percentile
# bootstrap's interval lies below 0 whenever all n differences are negative, which
# chance alone does with probability 2^-n (one night in eight with three seeds)
MIN_PAIRS = 5


@dataclass
class Night:
    """One model's numbers in one run."""

    model: str
    run_id: str
    date: str
    trials: int
    completed: int
    failed: int                        # unfinished or harness errors, of trials
    mean_net_assets: float | None
    ci_net_assets: tuple[float, float] | None
    cost_total_usd: float | None
    cost_mean_usd: float | None
    api_efficiency: float | None
    scores: dict[tuple, float] = field(default_factory=dict, repr=False)

    @property
    def failed_share(self) -> float:
        return self.failed / self.trials if self.trials else 0.0

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "scores"}
        out["ci_net_assets"] = list(self.ci_net_assets) if self.ci_net_assets else None
        out["failed_share"] = self.failed_share
        return out


@dataclass
class Trend:
    cohort: dict[str, Any]
    runs: list[dict[str, Any]]              # run_id, name, date; oldest first
    nights: list[Night]
    regressions: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)  # every model checked

    def models(self) -> list[str]:
        return list(dict.fromkeys(n.model for n in self.nights))

    def of(self, model: str) -> list[Night]:
        return [n for n in self.nights if n.model == model]

    def as_json(self) -> dict[str, Any]:
        return {"cohort": self.cohort, "runs": self.runs,
                "nights": [n.as_json() for n in self.nights],
                "regressions": self.regressions, "comparisons": self.comparisons,
                "notes": self.notes}


def _pair(trial: dict[str, Any]) -> tuple:
    return trial["world_seed"], trial["seed"], trial["repeat"]


def build_trend(db: str, *, models: list[str] | None = None, last: int | None = None,
                filters: Filters = Filters()) -> Trend:
    """The nights of the newest run's cohort (among the runs ``filters`` admits)."""
    with Store(db, read_only=True) as store:
        newest = select(store, "latest", filters, others=False)
        cohort = newest.cohort
        runs = [r for r in store.runs() if filters.admits(r)]
        keys = run_cohorts(store, runs)
        runs = [r for r in runs if keys[r["run_id"]] == cohort
                or (keys[r["run_id"]]["initial_cash"] is None
                    and r["run_id"] in newest.runs)]
        runs.sort(key=lambda r: r["created_at"])
        if last is not None:
            runs = runs[-last:]
        nights: list[Night] = []
        for run in runs:
            chosen = select(store, run["run_id"], others=False)   # one run: one night
            apart = [a for a in chosen.set_apart if a["status"] != "running"]
            by_model: dict[str, list[dict[str, Any]]] = {}
            for t in chosen.trials:
                by_model.setdefault(t["model"], []).append(t)
            for a in apart:
                by_model.setdefault(a["model"], [])
            for row in model_rows(chosen.trials, {}):
                ts = by_model[row.model]
                errs = sum(1 for a in apart if a["model"] == row.model)
                nights.append(Night(
                    row.model, run["run_id"], str(run["created_at"])[:16],
                    row.trials + errs, row.completed, row.trials - row.completed + errs,
                    row.mean_net_assets, row.ci_net_assets, row.cost_total_usd,
                    row.cost_mean_usd, row.api_efficiency,
                    {_pair(t): score(t) for t in ts}))
            for model in by_model:            # only harness errors this night
                if not any(n.model == model and n.run_id == run["run_id"] for n in nights):
                    errs = sum(1 for a in apart if a["model"] == model)
                    nights.append(Night(model, run["run_id"], str(run["created_at"])[:16],
                                        errs, 0, errs, None, None, None, None, None))
    if models:
        unknown = [m for m in models if m not in {n.model for n in nights}]
        if unknown:
            known = ", ".join(sorted({n.model for n in nights}))
            raise ResultsError(f"no model {', '.join(unknown)} in this cohort's runs; "
                               f"models here: {known}")
        nights = [n for n in nights if n.model in models]
    trend = Trend(cohort, [{"run_id": r["run_id"], "name": r["name"],
                            "date": str(r["created_at"])[:16], "status": r["status"]}
                           for r in runs], nights, [])
    trend.comparisons = compare(trend)
    trend.regressions = [c for c in trend.comparisons if c["regressed"]]
    few = [c["model"] for c in trend.comparisons if c["kind"] == "score"
           and c["pairs"] < MIN_PAIRS]
    if few:
        trend.notes.append(f"score regressions need {MIN_PAIRS}+ trials paired by world, "
                           f"seed and repeat; fewer for {', '.join(few)}: not tested")
    if len(runs) < 2:
        trend.notes.append("one run in this cohort: a trend needs at least two")
    return trend


def compare(trend: Trend) -> list[dict[str, Any]]:
    """Each model's latest night against its previous one (see the module's doc): a
    ``score`` and a ``failures`` check per model, each with its evidence and whether it
    flags a regression."""
    out = []
    for model in trend.models():
        nights = trend.of(model)
        if len(nights) < 2:
            continue
        before, latest = nights[-2], nights[-1]
        base = {"model": model, "previous_run": before.run_id, "latest_run": latest.run_id}
        pairs = sorted(set(before.scores) & set(latest.scores), key=str)
        diffs = [latest.scores[k] - before.scores[k] for k in pairs]
        ci = bootstrap_ci(diffs) if len(diffs) >= MIN_PAIRS else None
        mean = statistics.fmean(diffs) if diffs else None
        if ci is None:
            evidence = f"{count(len(diffs), 'paired trial')}, fewer than {MIN_PAIRS}: not tested"
        else:
            evidence = (f"paired by world, seed and repeat over {len(diffs)} trials: mean "
                        f"difference {mean:+,.0f}, 95% CI [{ci[0]:+,.0f}, {ci[1]:+,.0f}]"
                        + (" below 0" if ci[1] < 0 else ""))
        out.append({**base, "kind": "score", "regressed": ci is not None and ci[1] < 0,
                    "pairs": len(diffs), "mean_difference": mean,
                    "ci_difference": list(ci) if ci else None,
                    "previous_mean": before.mean_net_assets,
                    "latest_mean": latest.mean_net_assets, "evidence": evidence})
        jump = latest.failed_share - before.failed_share
        out.append({**base, "kind": "failures",
                    "regressed": jump >= FAILED_JUMP and latest.failed > before.failed,
                    "previous_failed": before.failed, "previous_trials": before.trials,
                    "latest_failed": latest.failed, "latest_trials": latest.trials,
                    "evidence": f"failed trials {before.failed}/{before.trials} → "
                                f"{latest.failed}/{latest.trials} "
                                f"({before.failed_share:.0%} → {latest.failed_share:.0%})"})
    return out


def trend_table(trend: Trend) -> tuple[list[str], list[list[str]]]:
    headers = ["model", "run (UTC)", "done", score_name(trend.cohort["scenario"]), "95% CI",
               "cost $",
               f"{currency(trend.cohort['scenario'])}/$"]
    rows = []
    for model in trend.models():
        for i, n in enumerate(trend.of(model)):
            ci = ("" if n.ci_net_assets is None else
                  f"{n.ci_net_assets[0]:,.0f}–{n.ci_net_assets[1]:,.0f}")
            rows.append([model if i == 0 else "", n.date, f"{n.completed}/{n.trials}",
                         "—" if n.mean_net_assets is None else f"{n.mean_net_assets:,.0f}",
                         ci, "—" if n.cost_total_usd is None else f"{n.cost_total_usd:,.2f}",
                         "—" if n.api_efficiency is None else f"{n.api_efficiency:,.0f}"])
    return headers, rows


def _trend_footer(trend: Trend) -> list[str]:
    c = trend.cohort
    lines = [f"cohort: {c['scenario']}, {days_text(c['days'])}, "
             f"{'worlds' if len(c['world_seeds']) > 1 else 'world'} "
             f"{', '.join(str(w) for w in c['world_seeds'])}; {count(len(trend.runs), 'run')}: "
             + ", ".join(r["run_id"] for r in trend.runs)]
    if trend.regressions:
        lines += [f"REGRESSION {r['model']} ({r['kind']}, {r['previous_run']} → "
                  f"{r['latest_run']}): {r['evidence']}" for r in trend.regressions]
    elif trend.comparisons:
        tested = [c for c in trend.comparisons if c["kind"] == "score"
                  and c["ci_difference"] is not None]
        lines.append("no regression: no model fails a larger share of its trials"
                     + (", and none is worse than in its previous run beyond noise "
                        "(seed-paired 95% CI)" if tested else ""))
    return lines + trend.notes


def render_trend(trend: Trend, fmt: str = "table") -> str:
    """The trend as text: table, markdown, csv or json."""
    import csv
    import io
    import json

    if fmt == "json":
        return json.dumps(trend.as_json(), default=str)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["model", "run_id", "date", "trials", "completed", "failed",
                         "mean_net_assets", "ci_net_assets_low", "ci_net_assets_high",
                         "cost_total_usd", "cost_mean_usd", "api_efficiency", "regression"])
        flagged = {(r["model"], r["latest_run"]): r["kind"] for r in trend.regressions}
        for n in trend.nights:
            lo, hi = n.ci_net_assets or (None, None)
            writer.writerow([n.model, n.run_id, n.date, n.trials, n.completed, n.failed,
                             n.mean_net_assets, lo, hi, n.cost_total_usd, n.cost_mean_usd,
                             n.api_efficiency, flagged.get((n.model, n.run_id), "")])
        return out.getvalue()
    from tabulate import tabulate

    headers, rows = trend_table(trend)
    if fmt == "markdown":
        body = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True,
                        colalign=("left", "left", *["right"] * 5))
    else:                # 80 columns whatever a model's name: a block per model
        blocks, start = [], 0
        for model in trend.models():
            n = len(trend.of(model))
            table = tabulate([[r[1][5:], *r[2:]] for r in rows[start:start + n]],
                             headers=headers[1:],
                             tablefmt="simple", disable_numparse=True,
                             colalign=("left", *["right"] * 5))
            blocks.append(model + "\n" + "\n".join("  " + line for line in table.splitlines()))
            start += n
        body = "\n\n".join(blocks)
    footer = _trend_footer(trend)
    if fmt == "markdown":
        return body + "\n\n" + "\n".join(f"- {line}" for line in footer)
    import textwrap

    return body + "\n\n" + "\n".join(
        textwrap.fill(line, 80, subsequent_indent="  ", break_long_words=False,
                      break_on_hyphens=False) for line in footer)


__all__ = ["FAILED_JUMP", "MIN_PAIRS", "Night", "SET_APART", "Trend", "build_trend", "compare",
           "render_trend", "trend_table"]
