"""The diagnostics' charts (design §32.1): daily growth early and late per model, as
the AutoVend paper's Figure 6 shows it, and the failure modes' instances per trial."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..environment import windows
from ._board import Roles
from ._chart_kit import _finish, styles

if TYPE_CHECKING:
    from ._build import Board


def diagnostic_charts(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    """``growth`` and ``failure_modes``, when the board was diagnosed."""
    if board.diagnosis is None or not board.diagnosis.rows:
        return []
    return [*_growth(plt, board, out), *_failures(plt, board, out)]


def _growth(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    import numpy as np

    d = board.diagnosis
    assert d is not None
    rows = [r for r in d.rows if r.means.get("growth_early") is not None
            and r.means.get("growth_late") is not None]
    if not rows:
        board.chart_notes["growth"] = ("Growth early and late: not drawn, no trial reached "
                                       "the late window")
        return []
    (a, b), (c, e) = windows(board.selection.cohort["days"])
    fig, ax = plt.subplots(figsize=(8, 0.7 * len(rows) + 1.6))
    y = np.arange(len(rows))[::-1]
    for offset, key, label, colour in ((0.18, "growth_early", f"days {a}–{b}", "#4c78a8"),
                                       (-0.18, "growth_late", f"days {c}–{e}", "#f58518")):
        means = [r.means[key] or 0.0 for r in rows]
        errs = [[m - ci[0] if (ci := r.intervals[key]) else 0 for m, r in zip(means, rows)],
                [ci[1] - m if (ci := r.intervals[key]) else 0 for m, r in zip(means, rows)]]
        ax.barh(y + offset, means, height=0.34, xerr=errs, capsize=3, color=colour,
                label=label)
    ax.set_yticks(y, [r.model for r in rows])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set(title=f"Mean daily growth of net assets, early and late ({board.currency} a day)",
           xlabel=f"{board.currency} a day")
    return _finish(plt, fig, ax, out, "growth",
                   "bar: the mean over trials; whisker: its 95% t interval; the AutoVend "
                   "paper's windows (days 16–45 and 136–165 of 180) scaled to the horizon")


def _failures(plt: ModuleType, board: Board, out: Path) -> list[Path]:
    import numpy as np

    d = board.diagnosis
    assert d is not None
    modes = [m for m in d.modes if any(r.per_trial[m.kind] for r in d.rows)]
    if not modes:
        board.chart_notes["failure_modes"] = ("Failure modes: not drawn, no instance in "
                                              "any trial")
        return []
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(modes) * len(d.rows) ** 0.5 + 2))
    y = np.arange(len(modes))[::-1]
    height = 0.8 / len(d.rows)
    style = styles([r.model for r in d.rows], Roles.of(d.scenario))   # as every chart
    for i, r in enumerate(d.rows):
        ax.barh(y + 0.4 - height * (i + 0.5), [r.per_trial[m.kind] for m in modes],
                height=height, label=r.model, color=style[r.model]["color"])
    ax.set_yticks(y, [m.header for m in modes])
    ax.set(title="Failure modes: instances per trial", xlabel="instances per trial (mean)")
    return _finish(plt, fig, ax, out, "failure_modes",
                   "each instance is listed with its day and request in --format json; "
                   "docs/metrics.md defines each mode")
