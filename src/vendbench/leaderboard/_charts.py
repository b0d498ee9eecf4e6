"""Leaderboard charts (matplotlib, PNG and SVG): trajectories, the terminal score as a
share of the oracle's gain over doing nothing with its interval, return against API cost with the efficiency frontier, and each
model's normalised operational profile."""

from __future__ import annotations

from pathlib import Path
import statistics
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._text import days as days_text
from ..environment import score_name
from ._board import Roles
from ._diagnostics_charts import diagnostic_charts
from ._frontier import undominated as efficiency_frontier
from ._chart_kit import _cap, _finish, _plt, styles
from ._render import ops_for

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ._build import Board
    from ._trend import Trend

# what difference in a metric is worth a colour: ("abs", points as a fraction) for
# shares, ("rel", fraction of the models' median) for the others
MATERIAL = {"waste_rate": ("abs", 0.01), "stockout_rate": ("abs", 0.02),
            "empty_machine_rate": ("abs", 0.02),
            "shelf_utilisation": ("abs", 0.02), "pricing_regret_share": ("abs", 0.02),
            "rejected_item_rate": ("abs", 0.01), "assortment_score": ("abs", 0.05),
            "capital_efficiency": ("rel", 0.10), "tool_calls_per_day": ("rel", 0.10),
            "working_hours_use": ("abs", 0.05), "rejected_call_rate": ("abs", 0.01)}


def _trajectories(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    import numpy as np

    if not any(board.trajectories.get(r.model) for r in board.rows):
        board.chart_notes["trajectories"] = ("Net assets over time: not drawn, no "
                                             "finished trial yet")
        return []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    style = styles([r.model for r in board.rows],
                   Roles.of(board.selection.cohort["scenario"]))
    for row in board.rows:
        runs = [np.array(t) for t in board.trajectories.get(row.model, []) if t]
        if not runs:
            continue
        n = min(len(t) for t in runs)
        stack = np.array([t[:n] for t in runs]) / 1000
        days = np.arange(1, n + 1)
        ax.plot(days, stack.mean(axis=0), label=row.model, linewidth=1.6,
                markevery=max(1, n // 8), markersize=5, **style[row.model])
        ax.fill_between(days, stack.min(axis=0), stack.max(axis=0), alpha=0.12,
                        color=style[row.model]["color"])
    ax.set(title=f"{_cap(board.score_name)} over time (mean, range over trials)",
           xlabel="day", ylabel=f"{board.score_name} (thousand {board.currency})")
    return _finish(plt, fig, ax, out, "trajectories")


def share_bars(ax: Axes, labels: list[str],
               means: list[tuple[float, tuple[float, float] | None]],
               points: list[list[float]]) -> None:
    """Shares of the oracle's gain as horizontal bars, top to bottom: each mean a bar, its
    interval a whisker, each trial's share a point, doing nothing a solid line at 0, the
    oracle a dotted line at 100 % (the leaderboard's chart and the arena's); the axis
    spans both lines and every point."""
    import numpy as np

    y = np.arange(len(labels))[::-1]
    errs = [[100 * (m - ci[0]) if ci else 0 for m, ci in means],
            [100 * (ci[1] - m) if ci else 0 for m, ci in means]]
    ax.barh(y, [100 * m for m, _ in means], xerr=errs, capsize=4, color="#4c78a8",
            alpha=0.55)
    for yi, shares in zip(y, points):
        ax.plot([100 * v for v in shares], [yi] * len(shares), "o", color="black",
                markersize=4, markerfacecolor="white", zorder=3)
    ax.set_yticks(y, labels)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.axvline(100, color="black", linewidth=0.8, linestyle=":")
    low, high = ax.get_xlim()
    ax.set_xlim(min(-5.0, low), max(105.0, high))


def _terminal(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    shared = [(r, r.oracle_share) for r in board.rows if r.oracle_share is not None]
    if not shared:
        board.chart_notes["oracle_share"] = ("Share of the oracle's gain: not drawn, no "
                                             "finished trial with a share yet")
        return []
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(shared) + 1.5))
    share_bars(ax, [r.model + ("  (!) above the oracle" if r.above_oracle else "")
                    for r, _ in shared],
               [(share, r.ci_oracle_share) for r, share in shared],
               [[p["share"] for p in board.points     # each seed's share (design §30)
                 if p["model"] == r.model and p["share"] is not None] for r, _ in shared])
    method = ("Student's t over the seeds" if board.ci == "t" else
              "betting, valid at any n")
    ax.set(title=f"Terminal {board.score_name} as a share of what the oracle gains over "
                 "doing nothing",
           xlabel="% of the oracle's gain on the same world and seed: (score − idle) / "
                  "(oracle − idle)")
    return _finish(plt, fig, ax, out, "oracle_share",
                   f"bar: the mean; whisker: its 95% CI by {method}; points: each seed; "
                   "solid: doing nothing (0%), an operator that only ends its days; "
                   "dotted: the oracle (100%); an unfinished trial's score is 0, a share "
                   "below 0")


def _return_vs_cost(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    """Each trial's return against its API cost, each model's mean as a larger mark, and,
    across models (design §35.4: a frontier is across models, never through one
    model's own trials), the staircase of the models no other beats on both mean cost
    and mean return. The return axis spans 0 (the starting cash), so a few CNY between
    trials is drawn as the little it is."""
    initial = board.selection.cohort["initial_cash"] or 0
    priced = [p for p in board.points if p["cost"] is not None and p["cost"] > 0]
    if not priced:
        board.chart_notes["return_vs_cost"] = (
            "Return against API cost: not drawn, no trial here has an API cost (the "
            "in-process reference policies cost nothing; LLM trials need a price)")
        return []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    style = styles([r.model for r in board.rows],
                   Roles.of(board.selection.cohort["scenario"]))
    means: list[tuple[float, float]] = []
    for row in board.rows:
        pts = [p for p in priced if p["model"] == row.model]
        if not pts:
            continue
        colour, marker = style[row.model]["color"], style[row.model]["marker"] or "o"
        ax.scatter([p["cost"] for p in pts], [(p["score"] - initial) / 1000 for p in pts],
                   s=14, color=colour, marker=marker, alpha=0.45)
        mean = (statistics.fmean(p["cost"] for p in pts),
                statistics.fmean(p["score"] - initial for p in pts) / 1000)
        ax.scatter(*mean, s=70, color=colour, marker=marker, edgecolors="black",
                   linewidths=0.6, label=row.model, zorder=3)
        means.append(mean)
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    frontier = efficiency_frontier(means)      # the site's frontier's, on returns
    if len(means) >= 2:
        ax.plot(*zip(*frontier), drawstyle="steps-post", color="black", linewidth=1,
                label="frontier across models (means)")
    ax.axhline(0, color="#777777", linewidth=0.8, linestyle=":")
    costs = [p["cost"] for p in priced]
    log = max(costs) / min(costs) >= 10        # a log axis over less than a decade put
    if log:                                    # one label ("$0.42") on every tick
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # within a decade
    else:
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_xlim(0, ax.get_xlim()[1])
    ax.xaxis.set_minor_formatter(NullFormatter())              # no overlapping labels
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.4g}"))
    low, high = ax.get_ylim()
    ax.set_ylim(min(low, 0.0), max(high, 0.0))         # the starting cash in view
    low, high = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if low <= t <= high and (t > 0 or not log)]
    ax.set_xticks(ticks, distinct_dollars(ticks))
    ax.set_xlim(low, high)
    ax.set(title="Return against API cost",
           xlabel="API cost per trial (USD" + (", log scale)" if log else ")"),
           ylabel=f"{board.score_name} − starting cash (thousand {board.currency})")
    return _finish(plt, fig, ax, out, "return_vs_cost",
                   "small marks: trials; large: each model's mean; the staircase joins the "
                   "models no other beats on both mean cost and mean return (drawn with two "
                   "models or more); dotted: the starting cash")


def dollars_tick(value: float, digits: int = 2) -> str:
    """A cost axis's label: ``digits`` significant digits at most, never in
    e-notation (``$0.00003``, ``$0.2``, ``$1.5``, ``$1,200``)."""
    import numpy as np

    if value <= 0:
        return "$0"
    text = np.format_float_positional(value, precision=digits, unique=True,
                                      fractional=False, trim="-")
    whole, _, frac = text.partition(".")
    return "$" + f"{int(whole):,}" + (f".{frac}" if frac else "")


def distinct_dollars(values: list[float]) -> list[str]:
    """Labels for ticks, with as few significant digits as keep them apart."""
    for digits in range(2, 10):
        labels = [dollars_tick(v, digits) for v in values]
        if len(set(labels)) == len(labels):
            return labels
    return labels


def material_step(key: str, values: list[float]) -> float:
    """The difference in a metric that matters: absolute for shares (percentage points),
    relative to the typical value for the others (see ``MATERIAL``)."""
    kind, step = MATERIAL.get(key, ("rel", 0.10))
    if kind == "abs":
        return step
    typical = abs(statistics.median(values)) if values else 0.0
    return max(step * typical, 1e-9)


def heat(key: str, values: list[float | None], lower_is_better: bool) -> list[float | None]:
    """Each model's colour in [-1, 1] (worse … better) for one metric: its distance from
    the models' median in material steps, 0 within one step (near-equal: neutral), full
    colour at three."""
    have = [v for v in values if v is not None]
    if not have:
        return [None] * len(values)
    mid = statistics.median(have)
    step = material_step(key, have)
    out: list[float | None] = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        steps = (v - mid) / step * (-1 if lower_is_better else 1)
        out.append(0.0 if abs(steps) < 1 else max(-1.0, min(1.0, steps / 3)))
    return out


# a model whose mean share is at most this ran no business to speak of: the metrics an
# idle operator wins by default (``Metric.idle_wins``) do not rank it (design §34.3)
IDLE_SHARE = 0.05


def heat_grid(board: Board, keys: list[str]) -> Any:
    """The operations heatmap's colours, a row per model and a column per metric, masked
    where there is no value or the metric has no better direction (tool calls a day:
    an idle agent's 2 are not "better" than a busy one's 40), and, for a metric an idle
    operator wins by default (no stock-outs of nothing listed), where the model's share
    is unknown or at most ``IDLE_SHARE``: those cells are neither coloured nor counted
    in the median the others are coloured against."""
    import numpy as np

    idle_wins: frozenset[str] = getattr(board, "idle_wins", frozenset())
    # masked zeros (masked_all's data are whatever memory held: huge values overflowed
    # the colour map's arithmetic beneath the mask)
    grid = np.ma.array(np.zeros((len(board.rows), len(keys))), mask=True)
    for j, key in enumerate(keys):
        if board.directions.get(key) not in ("higher", "lower"):
            continue                        # a description, no better or worse: uncoloured
        ranked = [i for i, r in enumerate(board.rows) if key not in idle_wins
                  or (getattr(r, "oracle_share", None) or 0.0) > IDLE_SHARE]
        colours = heat(key, [board.rows[i].operations.get(key) for i in ranked],
                       board.directions.get(key) == "lower")
        for i, v in zip(ranked, colours):
            if v is not None:
                grid[i, j] = v
    return grid


def steps_text(board: Board, keys: list[str]) -> str:
    """The material step of each coloured column, as the code uses it (``MATERIAL``):
    "waste % 1 pt, …, cap. eff 10 % of the median"."""
    labels = {k: h for k, h, _, _ in ops_for(board.selection.cohort["scenario"])}
    parts = []
    for key in keys:
        if board.directions.get(key) not in ("higher", "lower"):
            continue
        kind, step = MATERIAL.get(key, ("rel", 0.10))
        scale = next((s for k, _, s, _ in ops_for(board.selection.cohort["scenario"])
                      if k == key), 1)
        parts.append(f"{labels.get(key, key)} {step:.0%} of the median" if kind == "rel"
                     else f"{labels.get(key, key)} {step * 100:g} pt" if scale == 100
                     else f"{labels.get(key, key)} {step:g}")
    return ", ".join(parts)


def _operations(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    from matplotlib.colors import LinearSegmentedColormap

    rows = board.rows
    ops = ops_for(board.selection.cohort["scenario"])
    keys = [k for k, *_ in ops if any(r.operations.get(k) is not None for r in rows)]
    if not rows or not keys:
        board.chart_notes["operations"] = "Operational profile: not drawn, no metric yet"
        return []
    fig, ax = plt.subplots(figsize=(1.1 * len(keys) + 3, 0.55 * len(rows) + 2.1))
    grid = heat_grid(board, keys)
    cmap = LinearSegmentedColormap.from_list("worse-neutral-better",
                                             ["#c0392b", "#eeeeee", "#1e8449"])
    ax.imshow(grid, cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    labels = {k: h for k, h, _, _ in ops}
    ax.set_xticks(range(len(keys)), [labels[k] for k in keys], rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), [r.model for r in rows])
    for i, r in enumerate(rows):
        for j, key in enumerate(keys):
            v = r.operations.get(key)
            scale, places = next((s, p) for k, _, s, p in ops if k == key)
            ax.text(j, i, "—" if v is None else f"{v * scale:.{places}f}", ha="center",
                    va="center", fontsize=8)
    ax.set_title("Operational profile of " + ", ".join(r.model for r in rows)
                 if len(rows) <= 3 else "Operational profile", fontsize=10)
    ax.spines[:].set_visible(False)
    idle = [labels[k] for k in keys if k in getattr(board, "idle_wins", ())]
    return _finish(plt, fig, ax, out, "operations",
                   "green better, red worse than the models' median; grey within one "
                   f"material step ({steps_text(board, keys)}); white: describes, does not "
                   "rank (calls a day, pricing regret)"
                   + (f"; {', '.join(idle)}: won by doing nothing, so white for a model "
                      f"whose share of the oracle's gain is {IDLE_SHARE:.0%} or less"
                      if idle else ""))


def write_trend_chart(trend: Trend, directory: str | Path) -> list[Path]:
    """Each model's mean share of the oracle's gain over the runs of its cohort, each trial's
    share a point and the mean's 95% interval a whisker: the table's own (``trend.ci``,
    design §35.3); a regression's latest point is ringed in red. Nothing with one run."""
    if len(trend.runs) < 2:
        return []
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    order = {r["run_id"]: i for i, r in enumerate(trend.runs)}
    fig, ax = plt.subplots(figsize=(8, 4.8))
    models = trend.models()
    style = styles(models, Roles.of(trend.cohort["scenario"]))
    flagged = {(r["model"], r["latest_run"]) for r in trend.regressions}
    shift = {m: (k - (len(models) - 1) / 2) * 0.06 for k, m in enumerate(models)}
    for model in models:
        nights = [(order[n.run_id] + shift[model], n, n.oracle_share)
                  for n in trend.of(model) if n.oracle_share is not None]
        if not nights:
            continue
        colour = style[model]["color"]
        ax.plot([x for x, _, _ in nights], [100 * share for _, _, share in nights],
                label=model, linewidth=1.6, markersize=5,
                **{**style[model], "marker": style[model]["marker"] or "o"})
        for x, n, share in nights:
            shares = [100 * v for v in n.shares.values()]
            ax.plot([x] * len(shares), shares, ".", color=colour, alpha=0.45, markersize=4)
            ci = n.ci_oracle_share
            if ci is not None:
                ax.vlines(x, 100 * ci[0], 100 * ci[1], color=colour, linewidth=2.5,
                          alpha=0.5)
            if (model, n.run_id) in flagged:
                ax.scatter([x], [100 * share], s=160, facecolors="none",
                           edgecolors="#c0392b", linewidths=2, zorder=5)
    ax.set_xticks(range(len(trend.runs)), run_labels(trend.runs), rotation=30, ha="right")
    c = trend.cohort
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set(title=f"{_cap(score_name(c['scenario']))} per run as a share of the oracle's gain "
                 f"({c['scenario']}, {days_text(c['days'])})", xlabel="run (UTC)",
           ylabel="% of the oracle's gain over doing nothing")
    method = ("Student's t over the trials" if trend.ci == "t" else
              "the betting interval, valid at any number of trials")
    return _finish(plt, fig, ax, out, "trend",
                   f"line: each model's mean; dots: its trials; whisker: the mean's 95% "
                   f"interval, {method}, as in the table; red ring: a regression (tested "
                   "from 5 paired trials: a sign test and the paired differences' betting "
                   "interval)")


def run_labels(runs: list[dict[str, Any]]) -> list[str]:
    """A tick label per run: its date and minute, and its id's end where two runs
    started in the same minute (identical labels told a reader nothing)."""
    dates = [r["date"][5:] for r in runs]
    return [f"{d} ({r['run_id'][-4:]})" if dates.count(d) > 1 else d
            for d, r in zip(dates, runs)]


def _frontier(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    """The cost–share frontier with 95 % intervals on both axes (design §33)."""
    from ._build import interval_method
    from ._figure import save
    from ._frontier import figure, of_board

    fr = of_board(board)
    if not fr.points:
        board.chart_notes["frontier"] = (
            "Frontier: not drawn, no model here has priced trials with a share (the "
            "in-process reference policies cost nothing)")
        return []
    return save(figure(fr, interval_method(board.ci)), out)


def write_charts(board: Board, directory: str | Path) -> list[Path]:
    """Write the five charts (and the diagnostics' two, when the board has them) into
    ``directory``; returns the files written."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = [path for chart in (_trajectories, _terminal, _return_vs_cost, _frontier,
                                _operations, diagnostic_charts)
             for path in chart(plt, board, out)]
    for name in board.chart_notes:          # not drawn this time: no stale copy left
        for ext in ("png", "svg"):
            (out / f"{name}.{ext}").unlink(missing_ok=True)
    return files
