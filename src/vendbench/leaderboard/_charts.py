"""Leaderboard charts (matplotlib, PNG and SVG): trajectories, terminal net assets with
confidence intervals, return against API cost with the efficiency frontier, and each
model's normalised operational profile."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ._board import BASELINE, ORACLE
from ._render import OPS

if TYPE_CHECKING:
    from . import Board


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 11, "axes.spines.top": False,
                         "axes.spines.right": False, "svg.fonttype": "none"})
    return plt


def _save(fig, out: Path, name: str) -> list[Path]:
    fig.tight_layout()
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    fig.savefig(paths[0], dpi=150, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None})             # reproducible files
    return paths


def _style(model: str) -> dict:
    if model == BASELINE:
        return {"color": "black", "linestyle": "--"}
    if model == ORACLE:
        return {"color": "grey", "linestyle": ":"}
    return {}


def _finish(plt, fig, ax, out: Path, name: str) -> list[Path]:
    """Legend (when there is something to name), save as PNG and SVG, close."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(frameon=False, fontsize=8)
    paths = _save(fig, out, name)
    plt.close(fig)
    return paths


def _trajectories(plt, board: Board, out: Path) -> list[Path]:
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for row in board.rows:
        runs = [np.array(t) for t in board.trajectories.get(row.model, []) if t]
        if not runs:
            continue
        n = min(len(t) for t in runs)
        stack = np.array([t[:n] for t in runs]) / 1000
        days = np.arange(1, n + 1)
        line, = ax.plot(days, stack.mean(axis=0), label=row.model, **_style(row.model))
        ax.fill_between(days, stack.min(axis=0), stack.max(axis=0), alpha=0.15,
                        color=line.get_color())
    ax.set(title="Net assets over time (mean, range over trials)", xlabel="day",
           ylabel="net assets (thousand CNY)")
    return _finish(plt, fig, ax, out, "trajectories")


def _terminal(plt, board: Board, out: Path) -> list[Path]:
    import numpy as np

    rows = board.rows
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    errs = [[(r.mean_net_assets - r.ci_net_assets[0]) / 1000 if r.ci_net_assets else 0
             for r in rows],
            [(r.ci_net_assets[1] - r.mean_net_assets) / 1000 if r.ci_net_assets else 0
             for r in rows]]
    ax.barh(y, [r.mean_net_assets / 1000 for r in rows], xerr=errs, capsize=4,
            color="#4c78a8")
    ax.set_yticks(y, [r.model for r in rows])
    ax.axvline((board.selection.cohort["initial_cash"] or 0) / 1000, color="black",
               linewidth=0.8, linestyle=":")
    ax.set(title="Terminal net assets (mean, 95% bootstrap CI; unfinished = 0)",
           xlabel="thousand CNY")
    return _finish(plt, fig, ax, out, "terminal_net_assets")


def _return_vs_cost(plt, board: Board, out: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    initial = board.selection.cohort["initial_cash"] or 0
    priced = [p for p in board.points if p["cost"] is not None and p["cost"] > 0]
    for row in board.rows:
        pts = [p for p in priced if p["model"] == row.model]
        if pts:
            ax.scatter([p["cost"] for p in pts], [(p["score"] - initial) / 1000 for p in pts],
                       label=row.model, s=28)
    frontier, best = [], -float("inf")
    for p in sorted(priced, key=lambda p: p["cost"]):
        if p["score"] - initial > best:
            best = p["score"] - initial
            frontier.append((p["cost"], best / 1000))
    if frontier:
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax.plot(*zip(*frontier), drawstyle="steps-post", color="black", linewidth=1,
                marker="D", markersize=7, fillstyle="none", label="efficiency frontier")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())          # no overlapping labels
    else:
        ax.text(0.5, 0.5, "no priced LLM trials in this run", transform=ax.transAxes,
                ha="center", va="center", color="grey")
    ax.set(title="Return against API cost, per trial", xlabel="API cost per trial (USD)",
           ylabel="net-asset growth (thousand CNY)")
    return _finish(plt, fig, ax, out, "return_vs_cost")


def _operations(plt, board: Board, out: Path) -> list[Path]:
    import numpy as np

    rows = board.rows
    keys = [k for k, *_ in OPS if any(r.operations.get(k) is not None for r in rows)]
    fig, ax = plt.subplots(figsize=(1.1 * len(keys) + 3, 0.55 * len(rows) + 1.8))
    grid = np.full((len(rows), len(keys)), np.nan)
    for j, key in enumerate(keys):
        vals = [r.operations.get(key) for r in rows]
        have = [v for v in vals if v is not None]
        lo, hi = (min(have), max(have)) if have else (0, 0)
        for i, v in enumerate(vals):
            if v is None:
                continue
            norm = 0.5 if hi == lo else (v - lo) / (hi - lo)     # a tie is neutral
            grid[i, j] = 1 - norm if board.directions.get(key) == "lower" else norm
    ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    labels = {k: h for k, h, _, _ in OPS}
    ax.set_xticks(range(len(keys)), [labels[k] for k in keys], rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), [r.model for r in rows])
    for i, r in enumerate(rows):
        for j, key in enumerate(keys):
            v = r.operations.get(key)
            scale, places = next((s, p) for k, _, s, p in OPS if k == key)
            ax.text(j, i, "—" if v is None else f"{v * scale:.{places}f}", ha="center",
                    va="center", fontsize=8)
    ax.set_title("Operational profile (green = better; min–max across models)")
    ax.spines[:].set_visible(False)
    return _finish(plt, fig, ax, out, "operations")


def write_charts(board: Board, directory: str | Path) -> list[Path]:
    """Write the four charts into ``directory``; returns the files written."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    return [path for chart in (_trajectories, _terminal, _return_vs_cost, _operations)
            for path in chart(plt, board, out)]
