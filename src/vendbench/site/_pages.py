"""Each page of the site as data: its path, its template, what it shows (written beside
it as JSON, one file a page) and its charts (``leaderboard.Figure``). Pure: from a
``Panel`` to pages; ``_write`` renders and writes them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..environment import currency, metric_directions
from ..leaderboard import (INTERVAL_METHOD, T_METHOD, TEST_METHOD, Figure, Series, colours,
                           frontier_figure, harness)
from ..results import PairKey, path_id
from ._panel import Cohort, Panel, mean_band


@dataclass
class Page:
    path: str                          # from the site's top, e.g. model/openai--gpt.html
    template: str
    data: dict[str, Any]
    charts: list[Figure] = field(default_factory=list)

    @property
    def json_path(self) -> str:
        return self.path[:-len(".html")] + ".json"

    @property
    def root(self) -> str:
        return "../" * self.path.count("/")


def slug(model: str) -> str:
    """A model id as a file name: ``/`` as ``--``, anything else unusual as ``_``."""
    return path_id(re.sub(r"[^A-Za-z0-9._-]", "_", model.replace("/", "--")))


class Links:
    """Where each thing's page is, from the top of the site."""

    def __init__(self, transcripts: bool) -> None:
        self.transcripts = transcripts

    @staticmethod
    def model(model: str) -> str:
        return f"model/{slug(model)}.html"

    @staticmethod
    def run(file: str, run_id: str) -> str:
        return f"run/{file}/{path_id(run_id)}.html"

    def transcript(self, file: str, trial_id: str) -> str | None:
        return f"transcripts/{file}/trial/{path_id(trial_id)}/index.html" \
            if self.transcripts else None


def pages(panel: Panel, transcripts: bool = False) -> list[Page]:
    """Every page of ``panel``'s site."""
    links = Links(transcripts)
    out = [_index(panel, links), _trend(panel), _runs(panel), _models(panel)]
    out += [_model(panel, m, links) for m in panel.models()]
    out += [_run(r, links) for r in panel.runs]
    out += [_comparison(src.key, row, steps, panel) for src, row, steps in panel.comparisons]
    out += [_arena(src.key, run_id, board) for src, run_id, board in panel.arenas]
    return out


def _frontier_status(c: Cohort, model: str) -> str:
    point = next((p for p in c.frontier.points if p["model"] == model), None)
    if point is not None:
        return "on" if point["on_frontier"] else \
            "possibly" if point["possibly_on_frontier"] else "not on it"
    if any(r["model"] == model for r in c.frontier.references):
        return "line"
    return c.frontier.left_off.get(model, "")


def _row(c: Cohort, r: Any) -> dict[str, Any]:
    return {"model": r.model, "href": Links.model(r.model),
            "reference": harness(r.model) == "in-process", "trials": r.trials,
            "completed": r.completed, "share": r.oracle_share,
            "ci_t": list(r.ci_oracle_share) if r.ci_oracle_share else None,
            "ci_any": list(r.ci_oracle_share_any_shape) if r.ci_oracle_share_any_shape
            else None, "ci_doubt": r.ci_doubt, "mean_score": r.mean_net_assets,
            "cost_mean": r.cost_mean_usd, "cost_total": r.cost_total_usd,
            "efficiency": r.api_efficiency, "efficiency_note": r.api_efficiency_note,
            "flags": r.flags, "screened": r.screened, "frontier": _frontier_status(c, r.model)}


def _ranked(c: Cohort) -> list[Any]:
    """The board's rows by mean share, best first (rows without a share last)."""
    return sorted(c.board.rows, key=lambda r: (r.oracle_share is None,
                                               -(r.oracle_share or 0.0)))


def _map(c: Cohort) -> dict[str, Any]:
    """Model by world and seed: each trial's status, harness errors (set apart from
    the ranking) included; None where no trial exists."""
    trials = [*c.board.selection.trials, *c.board.selection.set_apart]
    columns = sorted({PairKey.of(t) for t in trials})
    models = [r.model for r in _ranked(c)]
    models += sorted({t["model"] for t in trials} - set(models))
    rows = []
    for model in models:
        mine = {PairKey.of(t): t["status"] for t in trials if t["model"] == model}
        rows.append({"model": model, "cells": [mine.get(k) for k in columns]})
    return {"columns": [[k.world_seed, k.seed, k.repeat] for k in columns], "rows": rows,
            "repeats": any(k.repeat != 1 for k in columns)}


def _index(panel: Panel, links: Links) -> Page:
    cohorts, charts = [], []
    for c in panel.cohorts:
        fig = frontier_figure(c.frontier, T_METHOD, f"frontier-{c.id}") \
            if c.frontier.points else None
        if fig is not None:
            charts.append(fig)
        cohorts.append({
            "id": c.id, "label": c.label, "key": c.key, "score_name": c.score_name,
            "currency": currency(c.key["scenario"]), "nights": len(c.nights),
            "latest": {**c.latest, "href": links.run(c.latest["file"], c.latest["run_id"])},
            "interval_t": T_METHOD, "interval_any": INTERVAL_METHOD,
            "rows": [_row(c, r) for r in _ranked(c)], "frontier": c.frontier.as_json(),
            "chart": fig.name if fig else None, "map": _map(c),
            "notes": c.board.selection.notes, "provenance": c.provenance})
    arenas = [{"label": f"{board.scenario}, {board.days} days, {board.matches} match(es): "
                        f"run {run_id} ({src.key})", "href": f"arena/{src.key}/{path_id(run_id)}.html"}
              for src, run_id, board in panel.arenas]
    comparisons = [{"label": f"{row.comparison_id}: {', '.join(row.models)} "
                             f"({row.verdict or row.status})",
                    "href": f"comparison/{src.key}/{path_id(row.comparison_id)}.html"}
                   for src, row, _ in panel.comparisons]
    return Page("index.html", "index", {"kind": "index", "title": "Leaderboard",
                                        "cohorts": cohorts, "arenas": arenas,
                                        "comparisons": comparisons, "notes": panel.notes},
                charts)


def _trend_figure(c: Cohort, models: list[str], name: str) -> Figure:
    file_of = {r["run_id"]: r["file"] for r in c.trend.runs}
    tint = colours(models)
    fig = Figure(name, "Share of the oracle's gain, night by night", "night (UTC)",
                 "mean share of the oracle's gain", y_percent=True, x_dates=True,
                 note=f"whiskers: 95% intervals, {T_METHOD}; ringed: a regression "
                      f"({TEST_METHOD}).")
    regressed = {(r["model"], r["latest_run"]) for r in c.trend.regressions}
    for m in models:
        nights = [n for n in c.trend.of(m) if n.oracle_share is not None]
        xs = [n.date for n in nights]
        fig.series.append(Series(
            m, xs, [n.oracle_share for n in nights], "markers",
            y_err=[n.ci_oracle_share for n in nights], color=tint[m],
            labels=[f"{m}, {n.date} (run {n.run_id}, {file_of.get(n.run_id)}): "
                    f"{n.oracle_share:.1%} ({n.completed}/{n.trials} done)" for n in nights],
            marks=[i for i, n in enumerate(nights) if (m, n.run_id) in regressed]))
        if len(nights) > 1:
            fig.series.append(Series(m, xs, [n.oracle_share for n in nights], "lines",
                                     color=tint[m], legend=False, width=1.0))
    return fig


def _trend(panel: Panel) -> Page:
    cohorts, charts = [], []
    for c in panel.cohorts:
        models = [r.model for r in _ranked(c)]
        fig = _trend_figure(c, models, f"trend-{c.id}")
        charts.append(fig)
        file_of = {r["run_id"]: r["file"] for r in c.trend.runs}
        cohorts.append({"id": c.id, "label": c.label, "chart": fig.name,
                        "runs": c.trend.runs,
                        "nights": [{**n.as_json(), "file": file_of.get(n.run_id),
                                    "href": Links.model(n.model)}
                                   for m in models for n in c.trend.of(m)],
                        "regressions": c.trend.regressions,
                        "comparisons": c.trend.comparisons, "notes": c.trend.notes})
    return Page("trend.html", "trend", {"kind": "trend", "title": "Trend",
                                        "method": TEST_METHOD, "cohorts": cohorts}, charts)


def _runs(panel: Panel) -> Page:
    rows = [{"run_id": r.run_id, "file": r.source.key, "name": r.summary.get("name"),
             "date": str(r.summary["created_at"])[:16], "scenario": r.summary["scenario"],
             "days": r.summary["days"], "kind": r.kind, "status": r.summary["status"],
             "trials": r.summary["trials"], "completed": r.summary["completed"],
             "cost": None if r.summary["cost_usd"] is None else float(r.summary["cost_usd"]),
             "href": Links.run(r.source.key, r.run_id)}
            for r in sorted(panel.runs, key=lambda r: r.summary["created_at"], reverse=True)]
    return Page("runs.html", "runs", {"kind": "runs", "title": "Runs", "runs": rows})


def _models(panel: Panel) -> Page:
    rows = [{"model": m, "href": Links.model(m),
             "cohorts": sum(any(r.model == m for r in c.board.rows) for c in panel.cohorts)}
            for m in panel.models()]
    return Page("models.html", "models", {"kind": "models", "title": "Models",
                                          "models": rows})


def _money_figure(c: Cohort, model: str) -> Figure:
    trials = c.money.get(model, [])
    name = f"money-{c.id}-{slug(model)}"
    fig = Figure(name, f"{c.score_name.capitalize()} day by day", "day",
                 f"{c.score_name} ({currency(c.key['scenario'])})",
                 note="thin lines: each trial; thick: the mean over the trials that "
                      "reached the day; band: the mean ± one standard error.")
    tint = colours([model])[model]
    for t in trials:
        days = list(range(1, len(t["values"]) + 1))
        fig.series.append(Series(
            f"world {t['world_seed']} seed {t['seed']}", days, t["values"], "lines",
            color="#9aa5b1", width=0.8, legend=False,
            labels=[f"world {t['world_seed']} seed {t['seed']}, day {d}: {v:,.0f}"
                    for d, v in zip(days, t["values"])]))
    series = [t["values"] for t in trials if t["values"]]
    if series:
        mean, low, high = mean_band(series)
        days = list(range(1, len(mean) + 1))
        fig.series.append(Series("mean ± 1 s.e.", days, low, "band", y2=high, color=tint))
        fig.series.append(Series("mean", days, mean, "lines", color=tint, width=2.4,
                                 labels=[f"mean, day {d}: {v:,.0f}"
                                         for d, v in zip(days, mean)]))
    return fig


def _model(panel: Panel, model: str, links: Links) -> Page:
    cohorts, charts = [], []
    for c in panel.cohorts:
        ranked = _ranked(c)
        row = next((r for r in ranked if r.model == model), None)
        if row is None:
            continue
        points = {p["trial_id"]: p for p in c.board.points}
        flags: dict[str, int] = {}
        for f in c.board.findings:
            flags[f["trial_id"]] = flags.get(f["trial_id"], 0) + 1
        trials = []
        for t in c.board.selection.trials:
            if t["model"] != model:
                continue
            inputs = t.get("input_tokens") or 0
            trials.append({
                "trial_id": t["trial_id"], "world_seed": t["world_seed"], "seed": t["seed"],
                "repeat": t["repeat"], "status": t["status"], "score": points[
                    t["trial_id"]]["score"], "share": points[t["trial_id"]]["share"],
                "cost": None if t["cost_usd"] is None else float(t["cost_usd"]),
                "input_tokens": t.get("input_tokens"), "output_tokens": t.get("output_tokens"),
                "cached_share": (t.get("cache_read_tokens") or 0) / inputs if inputs else None,
                "flags": flags.get(t["trial_id"], 0) if row.flags is not None else None,
                "transcript": links.transcript(c.latest["file"], t["trial_id"])})
        directions = metric_directions(c.key["scenario"])
        diagnosis = c.board.diagnosis
        diag = next((d.as_json() for d in diagnosis.rows if d.model == model), None) \
            if diagnosis else None
        money = _money_figure(c, model)
        trend = _trend_figure(c, [model], f"trend-{c.id}-{slug(model)}")
        charts += [money, trend]
        regressions = [r for r in c.trend.regressions if r["model"] == model]
        checked = [r for r in c.trend.comparisons if r["model"] == model]
        cohorts.append({
            "id": c.id, "label": c.label, "score_name": c.score_name, "latest": c.latest,
            "row": _row(c, row), "rank": ranked.index(row) + 1, "ranked": len(ranked),
            "trials": sorted(trials, key=PairKey.of),
            "operations": [{"name": k, "value": v, "direction": directions.get(k, "")}
                           for k, v in row.operations.items()],
            "diagnostics": diag, "screened": row.screened,
            "findings": [f for f in c.board.findings if f["model"] == model],
            "nights": [n.as_json() for n in c.trend.of(model)], "regressions": regressions,
            "regression_note": "no regression: " + "; ".join(r["evidence"] for r in checked)
            if checked else "one night of this model here: a trend needs two",
            "money_chart": money.name, "trend_chart": trend.name,
            "provenance": c.provenance})
    return Page(Links.model(model), "model", {"kind": "model", "title": model,
                                              "model": model, "cohorts": cohorts}, charts)


def _run(r: Any, links: Links) -> Page:
    info = r.info
    trials = [{"trial_id": t["trial_id"], "model": t["model"], "world_seed": t["world_seed"],
               "seed": t["seed"], "attempt": t["attempt"], "status": t["status"],
               "reason": t["reason"], "days_completed": t["days_completed"],
               "score": t["score"],
               "cost": None if t["cost_usd"] is None else float(t["cost_usd"]),
               "budget": None if t["budget_usd"] is None else float(t["budget_usd"]),
               "transcript": links.transcript(r.source.key, t["trial_id"])}
              for t in r.trials]
    keep = ("run_id", "name", "created_at", "scenario", "days", "status", "code_version",
            "prompt_sha256", "tools_sha256", "world_seeds", "world_salt_sha256",
            "total_budget_usd")
    run = {k: info.get(k) for k in keep}
    run["created_at"] = str(run["created_at"])[:19]
    run["total_budget_usd"] = None if run["total_budget_usd"] is None \
        else float(run["total_budget_usd"])
    config = json.loads(info.get("config_json") or "{}")
    prices = json.loads(info.get("prices_json") or "null") or {}
    return Page(Links.run(r.source.key, r.run_id), "run",
                {"kind": "run", "title": f"run {r.run_id}", "file": r.source.path,
                 "run": run, "kind_of_run": r.kind, "trials": trials,
                 "warnings": [{k: str(v) for k, v in w.items()} for w in r.warnings],
                 "prices": prices if isinstance(prices, dict) else {"all": prices},
                 "config": json.dumps(config, indent=1, default=str)})


def _comparison(file: str, row: Any, steps: list[Any], panel: Panel) -> Page:
    runs = {(p.source.key, p.run_id) for p in panel.runs}
    data: dict[str, Any] = {"kind": "comparison", "title": f"comparison {row.comparison_id}",
            "c": {"comparison_id": row.comparison_id, "scenario": row.scenario,
                  "days": row.days, "models": row.models, "status": row.status,
                  "verdict": row.verdict, "best": row.best, "reason": row.reason,
                  "pairs": row.pairs, "spent_usd": float(row.spent_usd)},
            "steps": [{"step": s.step, "run_id": s.run_id, "pairs": s.pairs,
                       "survivors": s.survivors, "intervals": s.intervals,
                       "spent_usd": float(s.spent_usd),
                       "href": Links.run(file, s.run_id) if (file, s.run_id) in runs
                       else None} for s in steps]}
    fig = Figure(f"comparison-{file}-{path_id(row.comparison_id)}",
                 "Each pair's difference batch by batch", "pairs so far",
                 "b − a, share of the oracle's gain", y_percent=True,
                 note="whiskers: the anytime-valid interval after each batch; the verdict "
                      "is reached when an interval leaves 0 or the equivalence margin.")
    pairs = sorted({(p["a"], p["b"]) for s in steps for p in s.intervals})
    tint = colours([f"{b} − {a}" for a, b in pairs])
    for a, b in pairs:
        got = [(s.pairs, p) for s in steps for p in s.intervals if (p["a"], p["b"]) == (a, b)]
        finite = [(n, p) for n, p in got if all(isinstance(p.get(k), (int, float))
                                                and abs(p[k]) < 1e9 for k in ("low", "high"))]
        label = f"{b} − {a}"
        fig.series.append(Series(label, [n for n, _ in finite],
                                 [p["mean"] for _, p in finite], "markers",
                                 y_err=[(p["low"], p["high"]) for _, p in finite],
                                 color=tint[label],
                                 labels=[f"{label} after {n} pairs: {p['mean']:+.1%} "
                                         f"[{p['low']:+.1%}, {p['high']:+.1%}]"
                                         for n, p in finite]))
    drawn = any(s.x for s in fig.series)
    data["chart_fig"] = fig.name if drawn else None
    return Page(f"comparison/{file}/{path_id(row.comparison_id)}.html", "comparison", data,
                [fig] if drawn else [])


def _arena(file: str, run_id: str, board: Any) -> Page:
    return Page(f"arena/{file}/{path_id(run_id)}.html", "arena",
                {"kind": "arena", "title": f"arena {run_id}", "run_id": run_id,
                 "board": board.as_json()})
