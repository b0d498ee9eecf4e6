"""The leaderboard: metrics per model from a results file, as tables, charts, a report.

    board = build("vendbench.duckdb", run="latest")
    print(render(board, "markdown"))
    write_charts(board, "vendbench-report")       # PNG + SVG
    Path("report.html").write_text(html_report(board))

It only reads results (and regenerates the frozen world for the metrics that need the
hidden demand model); it never writes to the database.
"""

from __future__ import annotations

from ._arena import ArenaBoard, arena_seats, build_arena, render_arena
from ._arena_charts import arena_html, write_arena_charts
from ._board import (FINDING_KEYS, INTERVAL_METHOD, T_METHOD, ModelRow, Roles, bootstrap_ci,
                     flags_of, harness, mean_interval, t_interval)
from ._build import Board, build, interval_method, trial_shares
from ._chart_kit import _plt as chart_pyplot
from ._chart_kit import dress
from ._charts import write_charts, write_trend_chart
from ._figure import Figure, Series, colours, save as save_figure
from ._frontier import RULE as FRONTIER_RULE, Frontier, Point, dominates, frontier
from ._frontier import figure as frontier_figure, of_board as board_frontier
from ._data import Filters, Selection, run_cohorts, select
from ._render import findings_text, text as _text
from ._report import html_report
from ._trend import TEST_METHOD, Night, Trend, build_trend, judged, render_trend, run_nights


def render(board: Board, fmt: str = "table", wide: bool = False) -> str:
    """The leaderboard as text: table (80 columns; every column with ``wide``), markdown,
    csv, json, or html (``html_report``)."""
    return html_report(board) if fmt == "html" else _text(board, fmt, wide)


__all__ = ["TEST_METHOD", "Figure", "Series", "colours", "save_figure", "FRONTIER_RULE", "Frontier", "Point",
           "dominates", "frontier", "frontier_figure", "board_frontier", "FINDING_KEYS", "T_METHOD", "flags_of", "harness", "t_interval", "interval_method",
           "trial_shares", "run_cohorts", "Night", "judged", "run_nights", "findings_text", "ArenaBoard", "arena_seats", "build_arena", "render_arena", "arena_html", "write_arena_charts", "Board", "Filters", "INTERVAL_METHOD", "ModelRow", "Roles", "Selection", "Trend",
           "bootstrap_ci", "build", "chart_pyplot", "dress", "build_trend", "html_report", "mean_interval", "render", "render_trend",
           "select", "write_charts", "write_trend_chart"]
