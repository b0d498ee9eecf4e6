"""A comparison as people and programs read it: a table of its steps, the verdict (with
the method that made it, and each model's unfinished and above-the-oracle shares), JSON,
and a chart of each pairwise confidence sequence as the pairs came in."""

from __future__ import annotations

import math
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

from .._text import count
from ._race import EQUIVALENT, METHODS, WIN_RATE, WINNER
from ._run import CompareSpec, Outcome, plan_from


def _finite(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None


def method(spec: CompareSpec) -> str:
    """What decided, in words (an assumption said as one)."""
    return METHODS[spec.assume or spec.estimand]


def _band(p: dict[str, Any], spec: CompareSpec) -> str:
    """One pairwise interval: a difference in points of the oracle's gain, or a share
    of worlds won (a step stored before shares of the gain, design §34: said so)."""
    if "scale" in p:          # stored before oracle shares (design §18): relative to a's mean
        rel = {k: (_finite(p[k]) / p["scale"] if p["scale"] and _finite(p[k]) is not None
                   else None) for k in ("mean", "low", "high")}
        if rel["low"] is None or rel["high"] is None:
            return "unbounded yet (relative to the first model's mean)"
        return (f"{rel['mean']:+.1%} [{rel['low']:+.1%}, {rel['high']:+.1%}] (relative to "
                "the first model's mean, Gaussian: a comparison made before oracle shares)")
    if spec.estimand == WIN_RATE:
        return (f"wins {p['mean']:.0%} of {p['n']} worlds that differ "
                f"[{p['low']:.0%}, {p['high']:.0%}]")
    low, high = _finite(p["low"]), _finite(p["high"])
    before = "" if spec.bounds is not None else \
        " (of the oracle's score: a comparison made before shares of its gain)"
    if low is None or high is None:
        return f"{p['mean']:+.1%}, unbounded yet{before}"
    return f"{p['mean']:+.1%} [{low:+.1%}, {high:+.1%}]{before}"


def standing(spec: CompareSpec, outcome: Outcome) -> list[str]:
    """Where a running comparison stands after a batch: pairs, dollars, each pair's
    interval, and (two models, the mean) the forecast to a verdict from what it has seen
    (design §28.2)."""
    row = outcome.row
    dropped = f" ({count(outcome.dropped, 'pair')} dropped)" if outcome.dropped else ""
    lines = [f"after {count(row.pairs, 'pair')}{dropped}, ${row.spent_usd:,.2f} spent"]
    a = outcome.assessment
    for p in (a.pairwise if a is not None else []):
        lines.append(f"{p.b} - {p.a}: {_band(p.as_json(), spec)}")
    per_pair = observed_per_pair(outcome)
    planned = plan_from(spec, outcome, per_pair)
    if planned is not None:
        lines.append(f"forecast: {planned.line()}")
    return lines


def observed_per_pair(outcome: Outcome) -> Decimal | None:
    """What a pair has cost so far: each model's mean trial, summed (None before any)."""
    means = [sum(c, Decimal(0)) / len(c) for c in outcome.costs.values() if c]
    return sum(means, Decimal(0)) if means and len(means) == len(outcome.costs) else None


def model_shares(outcome: Outcome) -> dict[str, dict[str, Any]]:
    """Per model: its trials scored, and the shares of them unfinished and above the
    oracle (the two things a verdict can hide)."""
    out = {}
    for model, (unfinished, above, scored) in outcome.shares.items():
        out[model] = {"trials": scored,
                      "unfinished_share": unfinished / scored if scored else None,
                      "above_oracle_share": above / scored if scored else None}
    return out


def as_json(outcome: Outcome, spec: CompareSpec | None = None) -> dict[str, Any]:
    row = outcome.row
    return {"comparison_id": row.comparison_id, "models": row.models, "status": row.status,
            "verdict": row.verdict, "best": row.best, "reason": row.reason,
            "method": method(spec) if spec else None,
            "estimand": spec.estimand if spec else None,
            "margin_of_oracle": spec.margin if spec else None,
            "pairs": row.pairs, "spent_usd": format(row.spent_usd, "f"),
            "dropped_pairs": outcome.dropped, "would_take": outcome.would_take,
            "models_shares": model_shares(outcome),
            "steps": [{"step": s.step, "run_id": s.run_id, "pairs": s.pairs,
                       "survivors": s.survivors, "spent_usd": format(s.spent_usd, "f"),
                       "intervals": [{k: _finite(v) for k, v in p.items()}
                                     for p in s.intervals]} for s in outcome.steps]}


def lines(outcome: Outcome, spec: CompareSpec) -> list[str]:
    """The steps (one line per pairwise interval), then the verdict, its method, and
    each model's unfinished and above-the-oracle shares."""
    what = "shares of worlds won" if spec.estimand == WIN_RATE else \
        "differences in shares of the oracle's gain over doing nothing"
    out = [f"  {what}, {1 - spec.alpha:.0%} confidence sequence:"]
    for s in outcome.steps:
        for p in s.intervals:
            out.append(f"  batch {s.step:>2}  {s.pairs:>3} pairs  {p['b']} vs {p['a']}: "
                       f"{_band(p, spec)}")
        out.append(f"           spent ${s.spent_usd:.4f}; racing: {', '.join(s.survivors)}")
    row = outcome.row
    if row.verdict == WINNER:
        out.append(f"verdict: {row.best} is better, after {row.pairs} pairs "
                   f"(alpha {spec.alpha}); spent ${row.spent_usd:.4f}")
    elif row.verdict == EQUIVALENT:
        out.append(f"verdict: equivalent within ±{spec.margin:.1%} of the oracle's gain "
                   f"after {row.pairs} pairs (alpha {spec.alpha}); spent ${row.spent_usd:.4f}")
    elif row.verdict is not None:
        out.append(f"verdict: inconclusive after {row.pairs} pairs: {row.reason}; spent "
                   f"${row.spent_usd:.4f}")
        if outcome.would_take:
            out.append(f"  {outcome.would_take}")
    else:
        out.append(f"comparison {row.comparison_id} stopped after {row.pairs} pairs; "
                   f"continue it with: vendbench compare --resume {row.comparison_id}")
    notes = [f"method: {method(spec)}"]
    for model, counts in model_shares(outcome).items():
        if counts["trials"]:
            notes.append(f"{model}: {counts['unfinished_share']:.0%} of {counts['trials']} "
                         f"trials unfinished (scored 0, a share below 0), "
                         f"{counts['above_oracle_share']:.0%} "
                         "above the oracle" + (" (look at them: an exploit or a bug?)"
                                               if counts["above_oracle_share"] else ""))
    if outcome.dropped:
        notes.append(f"{count(outcome.dropped, 'pair')} dropped: a trial ended in a harness "
                     "error, was interrupted, or was stopped by the comparison's budget "
                     "(never scored)")
    for note in notes:
        out += textwrap.wrap(note, 80, initial_indent="  ", subsequent_indent="    ")
    return out


def write_chart(outcome: Outcome, spec: CompareSpec, path: str | Path) -> None:
    """Each pairwise sequence over the pairs, in shares of the oracle's gain (or the share
    of worlds won): the estimate, the interval, no difference and the margin; titled with the
    models, everything within the axes, the method under the plot."""
    import matplotlib

    from ..leaderboard import chart_pyplot, dress

    plt = chart_pyplot()
    series: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    for s in outcome.steps:
        for p in s.intervals:
            series.setdefault((p["a"], p["b"]), []).append((s.pairs, p))
    win = spec.estimand == WIN_RATE
    fig, ax = plt.subplots(figsize=(8, 4.8))
    if not win:
        ax.axhspan(-spec.margin, spec.margin, color="#dddddd",
                   label=f"±{spec.margin:.0%} of the oracle's gain (equivalent)")
    ax.axhline(0.5 if win else 0, color="black", linewidth=0.8)
    colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
    shift = 0.08 * (len(series) - 1)
    ends: list[float] = [0.0, 1.0] if win else [-spec.margin, spec.margin]
    for i, ((a, b), pts) in enumerate(series.items()):
        colour = colours[i % len(colours)]
        x = [n + (i * 0.16 - shift) for n, _ in pts]
        ax.plot(x, [p["mean"] for _, p in pts], marker="o", color=colour,
                label=f"{b} − {a}" if not win else f"{b} against {a}")
        for xi, (_, p) in zip(x, pts):
            low, high = _finite(p["low"]), _finite(p["high"])
            if low is not None and high is not None:
                ax.vlines(xi, low, high, color=colour, linewidth=3, alpha=0.6)
                ends += [low, high]
        ends += [p["mean"] for _, p in pts if _finite(p["mean"]) is not None]
    pad = 0.05 * (max(ends) - min(ends) or 1.0)
    ax.set_ylim(min(ends) - pad, max(ends) + pad)      # every bar within the axes
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("pairs (same world and seed)")
    ax.set_ylabel("share of worlds won" if win else
                  "difference, in shares of the oracle's gain")
    models = spec.models
    who = (f"{models[1]} against {models[0]}" if len(models) == 2
           else f"{len(models)} models raced")
    ax.set_title(f"{who}: {outcome.row.verdict or 'running'}", fontsize=10)
    dress(fig, ax, f"bars: the {1 - spec.alpha:.0%} confidence sequence at each batch; "
                   f"{method(spec)}; comparison {outcome.row.comparison_id}, "
                   f"{count(outcome.row.pairs, 'pair')}")
    fig.savefig(path)
    plt.close(fig)
