"""Leaderboard charts (matplotlib, PNG and SVG): trajectories, the terminal score as a
share of the oracle's with its valid interval, return against API cost with the efficiency frontier, and each
model's normalised operational profile."""

from __future__ import annotations

from pathlib import Path
import statistics
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._text import days as days_text
from ..environment import score_name
from ._board import Roles
from ._render import ops_for

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ._build import Board
    from ._trend import Trend

# what difference in a metric is worth a colour: ("abs", points as a fraction) for
# shares, ("rel", fraction of the models' median) for the others
MATERIAL = {"waste_rate": ("abs", 0.01), "stockout_rate": ("abs", 0.02),
            "shelf_utilisation": ("abs", 0.02), "pricing_regret_share": ("abs", 0.02),
            "rejected_item_rate": ("abs", 0.01), "assortment_score": ("abs", 0.05),
            "capital_efficiency": ("rel", 0.10), "tool_calls_per_day": ("rel", 0.10),
            "working_hours_use": ("abs", 0.05), "rejected_call_rate": ("abs", 0.01)}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plt() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 11, "axes.spines.top": False,
                         "axes.spines.right": False, "svg.fonttype": "none"})
    return plt


def _save(fig: Figure, out: Path, name: str) -> list[Path]:
    fig.tight_layout()
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    fig.savefig(paths[0], dpi=150, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None})             # reproducible files
    return paths


# ten colours told apart by most readers, colour-blind ones included (Okabe & Ito's
# eight, without its black and yellow, plus Paul Tol's wine, teal, olive and indigo),
# each with its own marker, so that a line is named by two cues; the reference policies
# are black and grey, dashed and dotted
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255",
           "#44AA99", "#999933", "#332288"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


def styles(models: list[str], roles: Roles = Roles()) -> dict[str, dict[str, Any]]:
    """A line style per model, stable for the order given (the ranking's); the
    scenario's reference policy dashed black, its ceiling dotted grey."""
    out, i = {}, 0
    for model in models:
        if model == roles.reference:
            out[model] = {"color": "black", "linestyle": "--", "marker": None}
        elif model == roles.ceiling:
            out[model] = {"color": "#777777", "linestyle": ":", "marker": None}
        else:
            out[model] = {"color": PALETTE[i % len(PALETTE)], "linestyle": "-",
                          "marker": MARKERS[i % len(MARKERS)]}
            i += 1
    return out


def _finish(plt: ModuleType, fig: Figure, ax: Axes, out: Path, name: str) -> list[Path]:
    """Legend (when there is something to name), save as PNG and SVG, close."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(frameon=False, fontsize=8)
    paths = _save(fig, out, name)
    plt.close(fig)
    return paths


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


def _terminal(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    import numpy as np

    shared = [(r, r.oracle_share) for r in board.rows if r.oracle_share is not None]
    if not shared:
        board.chart_notes["oracle_share"] = ("Share of the oracle's score: not drawn, no "
                                             "finished trial with an oracle score yet")
        return []
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(shared) + 1.5))
    y = np.arange(len(shared))[::-1]
    errs = [[100 * (share - r.ci_oracle_share[0]) if r.ci_oracle_share else 0
             for r, share in shared],
            [100 * (r.ci_oracle_share[1] - share) if r.ci_oracle_share else 0
             for r, share in shared]]
    ax.barh(y, [100 * share for _, share in shared], xerr=errs, capsize=4,
            color="#4c78a8", alpha=0.55)
    for yi, (r, _) in zip(y, shared):        # each seed's own share, as a point (design §30)
        seeds = [100 * p["share"] for p in board.points
                 if p["model"] == r.model and p["share"] is not None]
        ax.plot(seeds, [yi] * len(seeds), "o", color="black", markersize=4,
                markerfacecolor="white", zorder=3)
    ax.set_yticks(y, [r.model + ("  (!) above the oracle" if r.above_oracle else "")
                      for r, _ in shared])
    ax.axvline(100, color="black", linewidth=0.8, linestyle=":")
    method = ("Student's t over the seeds" if board.ci == "t" else
              "betting, valid at any n")
    ax.set(title=f"Terminal {board.score_name} as a share of the oracle's\n(bar: mean; 95% CI "
                 f"by {method}; points: the seeds; unfinished = 0)",
           xlabel="% of the oracle's score on the same world and seed")
    ax.title.set_fontsize(9)
    return _finish(plt, fig, ax, out, "oracle_share")


def _return_vs_cost(plt: ModuleType, board: Board, out: Path) -> list[Path]:
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
    for row in board.rows:
        pts = [p for p in priced if p["model"] == row.model]
        if pts:
            ax.scatter([p["cost"] for p in pts], [(p["score"] - initial) / 1000 for p in pts],
                       label=row.model, s=30, color=style[row.model]["color"],
                       marker=style[row.model]["marker"] or "o")
    frontier, best = [], -float("inf")
    for p in sorted(priced, key=lambda p: p["cost"]):
        if p["score"] - initial > best:
            best = p["score"] - initial
            frontier.append((p["cost"], best / 1000))
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.plot(*zip(*frontier), drawstyle="steps-post", color="black", linewidth=1,
            marker="D", markersize=7, fillstyle="none", label="efficiency frontier")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))   # labels within a decade
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: dollars_tick(v)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.4g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())              # no overlapping labels
    ax.set(title="Return against API cost, per trial", xlabel="API cost per trial (USD)",
           ylabel=f"{board.score_name} − starting cash (thousand {board.currency})")
    return _finish(plt, fig, ax, out, "return_vs_cost")


def dollars_tick(value: float) -> str:
    """A cost axis's label: at most two significant digits, never in e-notation
    (``$0.00003``, ``$0.2``, ``$1.5``, ``$1,200``)."""
    import numpy as np

    if value <= 0:
        return "$0"
    text = np.format_float_positional(value, precision=2, unique=True, fractional=False,
                                      trim="-")
    whole, _, frac = text.partition(".")
    return "$" + f"{int(whole):,}" + (f".{frac}" if frac else "")


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


def heat_grid(board: Board, keys: list[str]) -> Any:
    """The operations heatmap's colours, a row per model and a column per metric, masked
    where there is no value or the metric has no better direction (tool calls a day:
    an idle agent's 2 are not "better" than a busy one's 40)."""
    import numpy as np

    grid = np.ma.masked_all((len(board.rows), len(keys)))   # type: ignore[no-untyped-call]
    for j, key in enumerate(keys):
        if board.directions.get(key) not in ("higher", "lower"):
            continue                        # a description, no better or worse: uncoloured
        for i, v in enumerate(heat(key, [r.operations.get(key) for r in board.rows],
                                   board.directions.get(key) == "lower")):
            if v is not None:
                grid[i, j] = v
    return grid


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
    ax.set_title("Operational profile: green better, red worse than the models' median;\n"
                 "grey within one material step (1–5 points for rates, 10% otherwise);\n"
                 "white: no better or worse (calls a day describe, they do not rank)",
                 fontsize=9)
    ax.spines[:].set_visible(False)
    return _finish(plt, fig, ax, out, "operations")


def write_trend_chart(trend: Trend, directory: str | Path) -> list[Path]:
    """Each model's mean net assets over the runs of its cohort, with the 95% CI as a
    band; a regression's latest point is ringed in red. Nothing with one run."""
    if len(trend.runs) < 2:
        return []
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    order = {r["run_id"]: i for i, r in enumerate(trend.runs)}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    style = styles(trend.models(), Roles.of(trend.cohort["scenario"]))
    flagged = {(r["model"], r["latest_run"]) for r in trend.regressions}
    for model in trend.models():
        nights = [(order[n.run_id], n, n.oracle_share) for n in trend.of(model)
                  if n.oracle_share is not None]
        if not nights:
            continue
        x = [i for i, _, _ in nights]
        ax.plot(x, [100 * share for _, _, share in nights], label=model, linewidth=1.6,
                markersize=5, **{**style[model], "marker": style[model]["marker"] or "o"})
        ci = [(i, n.ci_oracle_share) for i, n, _ in nights if n.ci_oracle_share]
        if ci:
            ax.fill_between([i for i, _ in ci], [100 * c[0] for _, c in ci],
                            [100 * c[1] for _, c in ci], alpha=0.15,
                            color=style[model]["color"], linewidth=0)
        for i, n, share in nights:
            if (model, n.run_id) in flagged:
                ax.scatter([i], [100 * share], s=160, facecolors="none",
                           edgecolors="#c0392b", linewidths=2, zorder=5)
    ax.set_xticks(range(len(trend.runs)), [r["date"][5:] for r in trend.runs],
                  rotation=30, ha="right")
    c = trend.cohort
    ax.set(title=f"{_cap(score_name(c['scenario']))} per run ({c['scenario']}, "
                 f"{days_text(c['days'])}) as a share of the oracle's: mean, 95% CI; "
                 "red ring = regression", xlabel="run (UTC)",
           ylabel="% of the oracle's score")
    ax.title.set_fontsize(9)
    return _finish(plt, fig, ax, out, "trend")


def write_charts(board: Board, directory: str | Path) -> list[Path]:
    """Write the four charts into ``directory``; returns the files written."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = [path for chart in (_trajectories, _terminal, _return_vs_cost, _operations)
             for path in chart(plt, board, out)]
    for name in board.chart_notes:          # not drawn this time: no stale copy left
        for ext in ("png", "svg"):
            (out / f"{name}.{ext}").unlink(missing_ok=True)
    return files
