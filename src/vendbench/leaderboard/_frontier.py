"""The cost–score Pareto frontier with uncertainty on both axes (design §33).

Each model stands at its mean API cost per trial and its mean share of the oracle's gain,
each with a 95 % interval over its trials. A model is *on the frontier* when no other is
at most as costly and at least as good with one of the two strictly better; the frontier
is the staircase through them (the best share reachable at each cost), not a convex hull
through means. Means alone decide too much at a few seeds, so:

- a model is *possibly on the frontier* when its intervals reach the staircase: its
  optimistic corner (the low end of its cost interval, the high end of its share
  interval) is beaten on both by no frontier model's means;
- beside it, the share of resamples over its seeds (each model's trials drawn with
  replacement, ``RESAMPLES`` times, a fixed seed) in which it is on the frontier.

Models without a cost (unpriced) or with none above 0 are left off and named; the
reference policies run in-process at no API cost, so they are drawn as lines.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._board import t_interval

RESAMPLES = 1000
RULE = ("on the frontier: no other model is as cheap and as good, one of the two "
        "strictly better (means); possibly on the frontier: its 95 % intervals reach the "
        "staircase (its lowest cost and highest share together are beaten on both by no "
        "frontier model); beside each, the share of {n:,} resamples of its trials (with "
        "replacement, each model's seeds alone) in which it is on the frontier")


@dataclass(frozen=True)
class Point:
    """One model: each trial's (cost in USD, share), and the two means' intervals."""

    model: str
    trials: tuple[tuple[float, float], ...]
    cost_ci: tuple[float, float] | None = None
    share_ci: tuple[float, float] | None = None

    @property
    def cost(self) -> float:
        return statistics.fmean(c for c, _ in self.trials)

    @property
    def share(self) -> float:
        return statistics.fmean(s for _, s in self.trials)


@dataclass
class Frontier:
    points: list[dict[str, Any]]                  # each model, as the chart draws it
    staircase: list[tuple[float, float]]          # (cost, share) corners, cheapest first
    left_off: dict[str, str] = field(default_factory=dict)   # model -> why
    references: list[dict[str, Any]] = field(default_factory=list)   # lines
    log_cost: bool = False
    rule: str = RULE.format(n=RESAMPLES)

    def as_json(self) -> dict[str, Any]:
        return {"points": self.points, "staircase": [list(s) for s in self.staircase],
                "left_off": self.left_off, "references": self.references,
                "log_cost": self.log_cost, "rule": self.rule}


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether (cost, share) ``a`` beats ``b``: no costlier, no worse, and better in one."""
    return a[0] <= b[0] and a[1] >= b[1] and (a[0] < b[0] or a[1] > b[1])


def undominated(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The (cost, value) points no other beats on both (lower cost, higher value), by
    cost: the staircase a reader follows from the cheapest to the best (a point twice
    is kept once)."""
    out: list[tuple[float, float]] = []
    for cost, value in sorted(points, key=lambda p: (p[0], -p[1])):
        if not out or value > out[-1][1]:
            out.append((cost, value))
    return out


def on_frontier(means: dict[str, tuple[float, float]]) -> set[str]:
    """The models no other dominates (two at the same point both)."""
    best = set(undominated(list(means.values())))
    return {m for m, p in means.items() if p in best}


def staircase(frontier: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The corners of the step line through the frontier: from each model right to the
    next one's cost at its share, then up."""
    steps = sorted(frontier)
    out: list[tuple[float, float]] = []
    for i, (cost, share) in enumerate(steps):
        if i:
            out.append((cost, steps[i - 1][1]))
        out.append((cost, share))
    return out


def frontier(points: Sequence[Point], references: Sequence[dict[str, Any]] = (),
             unpriced: dict[str, str] | None = None, *, resamples: int = RESAMPLES,
             seed: int = 0) -> Frontier:
    """The frontier of ``points`` (models with costs and shares); ``references``: the
    reference policies' lines (model, share); ``unpriced``: models left off, and why."""
    left_off = dict(unpriced or {})
    kept = []
    for p in points:
        if not p.trials:
            left_off[p.model] = "no priced trial with a share"
        elif p.cost <= 0:
            left_off[p.model] = "no API cost (a log axis has no 0)"
        else:
            kept.append(p)
    means = {p.model: (p.cost, p.share) for p in kept}
    best = on_frontier(means)
    corners = [means[m] for m in best]
    counts = _resampled(kept, resamples, seed)
    out = []
    for p in sorted(kept, key=lambda p: p.cost):
        optimistic = (p.cost_ci[0] if p.cost_ci else p.cost,
                      p.share_ci[1] if p.share_ci else p.share)
        reach = p.model in best or not any(dominates(c, optimistic) for c in corners)
        out.append({"model": p.model, "cost": p.cost, "share": p.share,
                    "cost_ci": list(p.cost_ci) if p.cost_ci else None,
                    "share_ci": list(p.share_ci) if p.share_ci else None,
                    "trials": len(p.trials),
                    "on_frontier": p.model in best,
                    "possibly_on_frontier": reach and p.model not in best,
                    "resampled_on_frontier": counts[p.model] / resamples
                    if resamples else None})
    costs = [p.cost for p in kept]
    log = bool(costs) and min(costs) > 0 and max(costs) / min(costs) >= 10
    steps = staircase(corners)
    if steps and costs and max(costs) > steps[-1][0]:    # the best share at any cost above
        steps.append((max(costs), steps[-1][1]))
    return Frontier(out, steps, left_off, list(references), log)


def _resampled(points: Sequence[Point], n: int, seed: int) -> dict[str, int]:
    """How often each model is on the frontier of its resampled means."""
    rng = random.Random(seed)
    counts = dict.fromkeys((p.model for p in points), 0)
    for _ in range(n):
        means = {}
        for p in points:
            drawn = rng.choices(p.trials, k=len(p.trials))
            means[p.model] = (statistics.fmean(c for c, _ in drawn),
                              statistics.fmean(s for _, s in drawn))
        for m in on_frontier(means):
            counts[m] += 1
    return counts


def cost_interval(costs: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student's t interval of the mean cost per trial (None below two), cut at 0: API
    costs of one model's trials vary little beside shares, and the axis is only
    indicative of spend."""
    return t_interval(list(costs), level=level, bounds=(0.0, math.inf))



def of_board(board: Any) -> Frontier:
    """The cost–share frontier of a leaderboard's LLM models (a ``Board``); its
    in-process reference policies as lines, at their mean share."""
    from ._board import harness

    by_model: dict[str, list[dict[str, Any]]] = {}
    for p in board.points:
        by_model.setdefault(p["model"], []).append(p)
    points, unpriced, lines = [], {}, []
    for row in board.rows:
        ps = by_model.get(row.model, [])
        if harness(row.model) == "in-process":
            if row.oracle_share is not None:
                lines.append({"model": row.model, "share": row.oracle_share})
            continue
        pairs = tuple((float(p["cost"]), float(p["share"])) for p in ps
                      if p["cost"] is not None and p["share"] is not None)
        if not pairs:
            unpriced[row.model] = "unpriced, or no share"
            continue
        points.append(Point(row.model, pairs, cost_interval([c for c, _ in pairs]),
                            row.ci_oracle_share))
    return frontier(points, lines, unpriced)


def figure(fr: Frontier, interval: str, name: str = "frontier") -> Any:
    """The frontier as a chart (``_figure.Figure``): each model at its means with both
    95 % intervals, the staircase, the reference policies as lines. ``interval``: how
    the share's interval is computed, in words."""
    from ._figure import Figure, Series, colours

    fig = Figure(name, "Share of the oracle's gain against API cost per trial: the "
                       "frontier", "mean API cost per trial, USD"
                 + (" (log scale)" if fr.log_cost else ""),
                 "mean share of the oracle's gain", log_x=fr.log_cost, y_percent=True,
                 note=f"whiskers: 95% intervals; share: {interval}; cost: Student's t over "
                      f"the trials. Staircase: the models no other beats on both. "
                      f"{fr.rule}.")
    tint = colours([p["model"] for p in fr.points])
    for p in fr.points:
        status = "on the frontier" if p["on_frontier"] else \
            "possibly on the frontier" if p["possibly_on_frontier"] else "not on it"
        fig.series.append(Series(
            p["model"], [p["cost"]], [p["share"]], x_err=[_pair(p["cost_ci"])],
            y_err=[_pair(p["share_ci"])], color=tint[p["model"]],
            labels=[f"{p['model']}: {p['share']:.1%} of the oracle's gain at "
                    f"${p['cost']:.4f} a trial; {status} (in "
                    f"{p['resampled_on_frontier']:.0%} of resamples); {p['trials']} "
                    "trials"]))
    if fr.staircase:
        xs = [c for c, _ in fr.staircase]
        fig.series.append(Series("frontier", xs, [s for _, s in fr.staircase], "lines",
                                 color="#555555", width=1.2,
                                 labels=[f"frontier at ${c:.4f}: {s:.1%}"
                                         for c, s in fr.staircase]))
    for ref in fr.references:
        fig.series.append(Series(ref["model"], [], [ref["share"]], "hline", dash=True,
                                 color="#777777", width=1.0,
                                 labels=[f"{ref['model']} (no API cost): "
                                         f"{ref['share']:.1%}"]))
    return fig


def _pair(ci: list[float] | None) -> tuple[float, float] | None:
    return (ci[0], ci[1]) if ci else None
