"""Trends across runs (nights) of one cohort, and the regressions worth a red cron job.

A night is one run. Per model and night: trials, completed, mean net assets, the mean
share of the oracle's gain over doing nothing (design §34) with its 95 % interval, cost, API efficiency — the leaderboard's numbers for
that run alone.

A model regresses when its latest night is worse than its previous one beyond noise.
The trials of the two nights are paired by world, seed and repeat (the same demand
draws) and their oracle shares subtracted; it is worse when a sign test finds it worse
on too many seeds to be chance (exact: a steady model's differences are as likely
negative as positive, whatever their shape), or when the betting interval of the mean
difference (``mean_interval``, valid at any number of pairs for values in known bounds)
lies below 0; at 4 % and 1 %, so a steady model is flagged at most 5 % of the time.
Or when its share of failed (unfinished or errored) trials jumps by ``FAILED_JUMP`` or
more. The interval's bounds are wide (a difference of two shares spans twice the
shares' range: -1.59..1.59 at 30 days of AutoVend, where shares lie in -34 %..125 %), so
at a few pairs it flags only a collapse; the sign test flags a drop on 5 of 5 seeds, 7 of 8
or 9 of 10 (``benchmarks/bench_compare.py`` measures both).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from .._text import count, printable
from .._text import days as days_text
from ..environment import currency, score_name
from ..errors import ResultsError
from ..results import SET_APART, PairKey, Store
from ._board import INTERVAL_METHOD, T_METHOD, Roles, mean_interval, model_rows
from ._build import _salt_for, trial_shares
from ._data import Filters, run_cohorts, select
from ._render import share_text

FAILED_JUMP = 0.2         # a rise in the failed share this large is flagged
# fewer paired trials are not tested (a sign test of five cannot reach 2.5 %)
MIN_PAIRS = 5
# a regression: worse by a sign test at SIGN_ALPHA, or by the interval of the mean paired
# difference at MEAN_ALPHA; together a steady model is flagged at most 5 % of the time.
# Most of the budget goes to the sign test, the only one of the two that can speak at
# five seeds (five worse of five: p = 1/32 = 3.1 %)
SIGN_ALPHA, MEAN_ALPHA = 0.04, 0.01
TEST_METHOD = ("a sign test over the seeds (exact, at 4 %) and a betting interval for the "
               "mean paired difference of oracle shares (Waudby-Smith & Ramdas 2024, at "
               "1 %)")


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
    oracle_share: float | None
    ci_oracle_share: tuple[float, float] | None
    cost_total_usd: float | None
    cost_mean_usd: float | None
    api_efficiency: float | None
    shares: dict[PairKey, float] = field(default_factory=dict, repr=False)
    bounds: tuple[float, float] = (-1.0, 1.25)    # the interval its shares lie in

    @property
    def failed_share(self) -> float:
        return self.failed / self.trials if self.trials else 0.0

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("shares", "bounds")}
        out["ci_oracle_share"] = list(self.ci_oracle_share) if self.ci_oracle_share else None
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
    ci: str = "t"            # each night's interval: "t" or "any-shape" (the leaderboard's)

    @property
    def interval_method(self) -> str:
        """Each night's 95 % interval, in words: the leaderboard's."""
        return T_METHOD if self.ci == "t" else INTERVAL_METHOD

    def models(self) -> list[str]:
        return list(dict.fromkeys(n.model for n in self.nights))

    def of(self, model: str) -> list[Night]:
        return [n for n in self.nights if n.model == model]

    def as_json(self) -> dict[str, Any]:
        return {"cohort": self.cohort, "runs": self.runs, "interval_method":
                self.interval_method, "nights": [n.as_json() for n in self.nights],
                "regressions": self.regressions, "comparisons": self.comparisons,
                "notes": self.notes}


def build_trend(db: str, *, models: list[str] | None = None, last: int | None = None,
                filters: Filters = Filters(), ci: str = "t") -> Trend:
    """The nights of the newest run's cohort (among the runs ``filters`` admits); ``ci``:
    each night's interval, as the leaderboard's (design §35.3: one method per number,
    the same in the table, the chart, the JSON and the docs), "t" or "any-shape"."""
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
        nights = [n for run in runs for n in run_nights(store, run, ci)]
    if models:
        unknown = [m for m in models if m not in {n.model for n in nights}]
        if unknown:
            known = ", ".join(sorted({n.model for n in nights}))
            raise ResultsError(f"no model {', '.join(unknown)} in this cohort's runs; "
                               f"models here: {known}")
        nights = [n for n in nights if n.model in models]
    trend = Trend(cohort, [{"run_id": r["run_id"], "name": r["name"],
                            "date": str(r["created_at"])[:16], "status": r["status"]}
                           for r in runs], nights, [], ci=ci)
    if newest.left_out_compare:
        trend.notes.append(f"left out {count(newest.left_out_compare, 'run')} of vendbench "
                           "compare (its batches are not nights; --include-compare counts "
                           "them)")
    return judged(trend)


def judged(trend: Trend) -> Trend:
    """``trend`` with each model's latest night compared with its previous one, the
    regressions picked out, and notes on what could not be tested."""
    trend.comparisons = compare(trend)
    trend.regressions = [c for c in trend.comparisons if c["regressed"]]
    few = [c["model"] for c in trend.comparisons if c["kind"] == "score"
           and c["pairs"] < MIN_PAIRS]
    if few:
        trend.notes.append(f"score regressions need {MIN_PAIRS}+ trials paired by world, "
                           f"seed and repeat; fewer for {', '.join(few)}: not tested")
    if len(trend.runs) < 2:
        trend.notes.append("one run in this cohort: a trend needs at least two")
    return trend


def run_nights(store: Store, run: Mapping[str, Any], ci: str = "t") -> list[Night]:
    """Each model's numbers in ``run`` (one night): the leaderboard's for that run alone
    (``ci``: its interval, "t" or "any-shape"); a model with only harness errors that
    night has a night of its errors."""
    nights: list[Night] = []
    chosen = select(store, run["run_id"], others=False)   # one run: one night
    apart = [a for a in chosen.set_apart if a["status"] != "running"]
    by_model: dict[str, list[dict[str, Any]]] = {}
    for t in chosen.trials:
        by_model.setdefault(t["model"], []).append(t)
    for a in apart:
        by_model.setdefault(a["model"], [])
    shared = trial_shares(store, chosen, _salt_for(store, chosen)
                          if chosen.cohort.get("world_salt_sha256") else None)
    shares, bounds = shared.by_trial, shared.bounds
    for row in model_rows(chosen.trials, {}, shares, bounds,
                          Roles.of(chosen.cohort["scenario"]), ci=ci, efficiency_ci=False):
        ts = by_model[row.model]
        errs = sum(1 for a in apart if a["model"] == row.model)
        nights.append(Night(
            row.model, run["run_id"], str(run["created_at"])[:16],
            row.trials + errs, row.completed, row.trials - row.completed + errs,
            row.mean_net_assets, row.oracle_share, row.ci_oracle_share,
            row.cost_total_usd, row.cost_mean_usd, row.api_efficiency,
            {PairKey.of(t): v for t in ts
             if (v := shares.get(t["trial_id"])) is not None}, bounds))
    for model in by_model:            # only harness errors this night
        if not any(n.model == model and n.run_id == run["run_id"] for n in nights):
            errs = sum(1 for a in apart if a["model"] == model)
            nights.append(Night(model, run["run_id"], str(run["created_at"])[:16],
                                errs, 0, errs, None, None, None, None, None, None))
    return nights


def sign_test(worse: int, differing: int) -> float:
    """The one-sided p-value of a sign test: the chance that ``worse`` or more of
    ``differing`` paired differences are negative when a steady model's are as likely
    negative as positive (whatever their sizes: exact, for any shape). 1 with none."""
    if differing == 0:
        return 1.0
    return sum(math.comb(differing, k) for k in range(worse, differing + 1)) / 2.0**differing


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
        pairs = sorted(set(before.shares) & set(latest.shares), key=str)
        diffs = [latest.shares[k] - before.shares[k] for k in pairs]
        # a difference of two shares lies within the widest either night's shares span
        low = min(before.bounds[0], latest.bounds[0])
        high = max(before.bounds[1], latest.bounds[1])
        tested = len(diffs) >= MIN_PAIRS
        ci = mean_interval(diffs, level=1 - MEAN_ALPHA, bounds=(low - high, high - low)) \
            if tested else None
        mean = statistics.fmean(diffs) if diffs else None
        worse, better = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
        p_sign = sign_test(worse, worse + better)
        regressed = ci is not None and (p_sign <= SIGN_ALPHA or ci[1] < 0)
        if ci is None:
            evidence = f"{count(len(diffs), 'paired trial')}, fewer than {MIN_PAIRS}: not tested"
        else:
            evidence = (f"paired by world, seed and repeat over {len(diffs)} trials: worse "
                        f"on {worse} of {worse + better} that differ (sign test p "
                        f"{p_sign:.3f}), mean difference in oracle shares {mean:+.1%}, "
                        f"{1 - MEAN_ALPHA:.0%} CI [{ci[0]:+.1%}, {ci[1]:+.1%}]"
                        + (" below 0" if ci[1] < 0 else ""))
        out.append({**base, "kind": "score", "regressed": regressed,
                    "sign_test_p": p_sign if tested else None, "worse": worse,
                    "better": better,
                    "pairs": len(diffs), "mean_difference": mean,
                    "ci_difference": list(ci) if ci else None,
                    "previous_mean": before.mean_net_assets,
                    "latest_mean": latest.mean_net_assets,
                    "previous_share": before.oracle_share, "latest_share": latest.oracle_share,
                    "method": TEST_METHOD, "evidence": evidence})
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
    headers = ["model", "run (UTC)", "done", score_name(trend.cohort["scenario"]),
               "of oracle, 95% CI", "cost $", f"{currency(trend.cohort['scenario'])}/$"]
    rows = []
    for model in trend.models():
        for i, n in enumerate(trend.of(model)):
            ci = share_text(n)
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
    lines.append(f"of oracle: the mean share of the oracle's gain over doing nothing; its "
                 f"95% CI: {trend.interval_method}")
    if trend.regressions:
        lines += [f"REGRESSION {r['model']} ({r['kind']}, {r['previous_run']} → "
                  f"{r['latest_run']}): {r['evidence']}" for r in trend.regressions]
    elif trend.comparisons:
        tested = [c for c in trend.comparisons if c["kind"] == "score"
                  and c["ci_difference"] is not None]
        lines.append("no regression: no model fails a larger share of its trials"
                     + (", and none is worse than in its previous run beyond noise "
                        f"(seed-paired oracle shares: {TEST_METHOD})" if tested else ""))
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
                         "mean_net_assets", "oracle_share", "ci_oracle_share_low",
                         "ci_oracle_share_high", "cost_total_usd", "cost_mean_usd",
                         "api_efficiency", "regression"])
        flagged = {(r["model"], r["latest_run"]): r["kind"] for r in trend.regressions}
        for n in trend.nights:
            lo, hi = n.ci_oracle_share or (None, None)
            writer.writerow([n.model, n.run_id, n.date, n.trials, n.completed, n.failed,
                             n.mean_net_assets, n.oracle_share, lo, hi, n.cost_total_usd,
                             n.cost_mean_usd,
                             n.api_efficiency, flagged.get((n.model, n.run_id), "")])
        return out.getvalue()
    from tabulate import tabulate

    headers, rows = trend_table(trend)
    if fmt == "markdown":
        body: str = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True,
                        colalign=("left", "left", *["right"] * 5))
    else:                # 80 columns whatever a model's name: a block per model
        blocks, start = [], 0
        for model in trend.models():
            size = len(trend.of(model))
            table = tabulate([[r[1][5:], *r[2:]] for r in rows[start:start + size]],
                             headers=headers[1:],
                             tablefmt="simple", disable_numparse=True,
                             colalign=("left", *["right"] * 5))
            blocks.append(printable(model) + "\n"
                          + "\n".join("  " + line for line in table.splitlines()))
            start += size
        body = "\n\n".join(blocks)
    footer = _trend_footer(trend)
    if fmt == "markdown":
        return body + "\n\n" + "\n".join(f"- {line}" for line in footer)
    import textwrap

    return body + "\n\n" + "\n".join(
        textwrap.fill(line, 80, subsequent_indent="  ", break_long_words=False,
                      break_on_hyphens=False) for line in footer)


__all__ = ["FAILED_JUMP", "MIN_PAIRS", "Night", "judged", "run_nights", "SET_APART", "Trend", "build_trend", "compare",
           "render_trend", "trend_table"]
