"""A chart as data: series with their hover labels, error bars and bands, drawn by
matplotlib as PNG and SVG here (``save``) and by a browser's charting library on the
site (design §33), so the picture in a report and the one a reader hovers are one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ._chart_kit import PALETTE, _plt, _save, legend_outside, note_under


@dataclass
class Series:
    name: str
    x: list[Any]
    y: Sequence[float | None]
    kind: str = "markers"           # markers, lines, steps, band (y: low, y2: high), hline
    y2: Sequence[float | None] | None = None
    x_err: list[tuple[float, float] | None] | None = None    # (low, high) per point
    y_err: list[tuple[float, float] | None] | None = None
    labels: list[str] | None = None   # what hovering a point says
    color: str | None = None
    dash: bool = False
    width: float = 1.5
    legend: bool = True
    marks: list[int] = field(default_factory=list)    # points drawn ringed (regressions)


@dataclass
class Figure:
    name: str                       # the files' stem
    title: str
    x_title: str
    y_title: str
    series: list[Series] = field(default_factory=list)
    log_x: bool = False
    y_percent: bool = False
    x_dates: bool = False
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def colours(names: list[str]) -> dict[str, str]:
    """A colour per name, the leaderboard's palette in order."""
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def save(figure: Figure, out: str | Path) -> list[Path]:
    """``figure`` as ``out``/name.png and .svg (reproducible: no dates in the files)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    import datetime as dt

    moments: list[dt.datetime] = []
    for s in figure.series:
        if figure.x_dates:              # ISO date-times: a date axis, ticks it chooses
            s = replace(s, x=[dt.datetime.fromisoformat(str(x)) for x in s.x])
            moments += s.x
        _draw(ax, s, figure)
    if moments and min(moments) == max(moments):      # one moment: a day either side
        ax.set_xlim(min(moments) - dt.timedelta(days=1), max(moments) + dt.timedelta(days=1))
    if figure.log_x:
        ax.set_xscale("log")
    if figure.y_percent:
        from matplotlib.ticker import PercentFormatter

        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    if figure.x_dates:
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        locator = AutoDateLocator(maxticks=8)  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    import textwrap

    # the title wrapped to a width that fits this figure (dress's fitting redraws the
    # figure until it fits: a second a chart when a site draws hundreds)
    ax.set(title=textwrap.fill(figure.title, 80), xlabel=figure.x_title,
           ylabel=figure.y_title)
    legend_outside(fig, ax)
    if figure.note:
        note_under(fig, figure.note, width=130)
    Path(out).mkdir(parents=True, exist_ok=True)
    paths = _save(fig, Path(out), figure.name)
    plt.close(fig)
    return paths


def _draw(ax: Any, s: Series, figure: Figure) -> None:
    style = "--" if s.dash else "-"
    label = s.name if s.legend else None
    points = [(x, y) for x, y in zip(s.x, s.y) if y is not None]
    if s.kind == "hline":
        ax.axhline(s.y[0], color=s.color or "black", linestyle=style, linewidth=s.width,
                   label=label)
    elif s.kind == "band" and s.y2 is not None:
        ax.fill_between(s.x, [float("nan") if v is None else v for v in s.y],
                        [float("nan") if v is None else v for v in s.y2],
                        color=s.color, alpha=0.15, linewidth=0, label=label)
    elif s.kind in ("lines", "steps"):
        ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=style,
                color=s.color, linewidth=s.width, label=label,
                drawstyle="default" if s.kind == "lines" else "steps-post")
    else:
        xerr = _err(s.x_err, s.x) if s.x_err else None
        yerr = _err(s.y_err, s.y) if s.y_err else None
        ax.errorbar(s.x, [float("nan") if v is None else v for v in s.y], xerr=xerr,
                    yerr=yerr, fmt="o", color=s.color, markersize=5, capsize=2,
                    linewidth=0.9, label=label)
    for i in s.marks:
        if s.y[i] is not None:
            ax.scatter([s.x[i]], [s.y[i]], s=120, facecolors="none", edgecolors="#b00020",
                       linewidths=1.5, zorder=4)


def _err(bounds: list[tuple[float, float] | None], values: Sequence[Any]
         ) -> list[list[float]]:
    """Matplotlib's asymmetric error bars from (low, high) bounds around ``values``."""
    low, high = [], []
    for b, v in zip(bounds, values):
        if b is None or v is None:
            low.append(0.0)
            high.append(0.0)
        else:
            low.append(max(0.0, float(v) - b[0]))
            high.append(max(0.0, b[1] - float(v)))
    return [low, high]
