"""A self-contained HTML report: the table (sortable), the charts, and the trend across
runs when the file holds several runs of the cohort."""

from __future__ import annotations

import html
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .._text import days as days_text
from ..results import PairKey, path_id
from ._diagnostics import Diagnostics, diagnostics_footer, diagnostics_tables
from ._render import _footer, table_rows

if TYPE_CHECKING:
    from ._build import Board
    from ._trend import Trend

# Sorting: numbers as numbers, text as text, a blank ("—" or empty) always last, either
# direction; the header shows the direction (▲ ascending, ▼ descending).
_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(table => {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, col) => th.addEventListener('click', () => {
    const body = table.tBodies[0];
    const key = r => { const t = r.cells[col].innerText.trim();
      if (t === '' || t === '—') return null;
      const n = parseFloat(t.replace(/[,%×$+]/g, '').replace('−', '-'));
      return isNaN(n) ? t.toLowerCase() : n; };
    const asc = th.dataset.dir !== 'asc';
    heads.forEach(h => { delete h.dataset.dir; h.removeAttribute('aria-sort'); });
    th.dataset.dir = asc ? 'asc' : 'desc';
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    [...body.rows].sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === null || y === null) return (x === null) - (y === null);
      return (x > y ? 1 : x < y ? -1 : 0) * (asc ? 1 : -1);
    }).forEach(r => body.appendChild(r));
  }));
});
"""
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
.scroll{overflow-x:auto;max-width:100%;border:1px solid #eee}
table{border-collapse:separate;border-spacing:0;font-size:13px}
figcaption.above{font-weight:600;color:#222;padding:6px 0}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:right;white-space:nowrap;
      background:#fff}
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}
th[data-dir=asc]::after{content:' ▲'} th[data-dir=desc]::after{content:' ▼'}
td:nth-child(1),th:nth-child(1){position:sticky;left:0;z-index:1;box-sizing:border-box;
      width:3.2em;min-width:3.2em;max-width:3.2em}
td:nth-child(2),th:nth-child(2){text-align:left;position:sticky;left:3.2em;z-index:1;
      border-right:1px solid #ccc}
th:nth-child(-n+2){z-index:2}
figure{margin:1.5em 0} figure svg{max-width:100%;height:auto}
figcaption{font-size:13px;color:#444;max-width:60em}
.note{color:#666;font-style:italic}
"""
_TREND_STYLE = """
table.trend td:nth-child(1),table.trend th:nth-child(1){text-align:left;left:0;
      width:auto;min-width:12em;max-width:none;border-right:1px solid #ccc}
table.trend td:nth-child(2),table.trend th:nth-child(2){position:static;border-right:0}
"""

CAPTIONS = {
    "trajectories": "{Score} over the days: each model's mean over its trials, the band "
                    "from the lowest to the highest trial. Dashed black: the scenario's "
                    "rule-based reference policy; dotted grey: the oracle; dash-dotted "
                    "grey: doing nothing.",
    "oracle_share": "Terminal {score} per model as a share of what the oracle gains over "
                    "doing nothing on the same world and seed, (score − idle) / (oracle − "
                    "idle): 0% is an operator that only ends its days, 100% the oracle; "
                    "the mean over trials (an unfinished trial's score is 0, a share "
                    "below 0) "
                    "with its 95% interval (Student's t over the seeds by default, which "
                    "assumes roughly normal shares; with --ci any-shape the betting "
                    "interval, valid for any shape, hence wide at few seeds), each seed's "
                    "share a point; the solid line is doing nothing, the dotted one the "
                    "oracle.",
    "return_vs_cost": "Each trial's {score} less its starting cash against its API cost, "
                      "each model's mean a larger mark; the staircase joins the models no "
                      "other beats on both mean cost and mean return (a frontier across "
                      "models, never through one model's trials); the return axis spans "
                      "the starting cash (0).",
    "frontier": "Each LLM model's mean share of the oracle's gain against its mean API "
                "cost per trial, with 95% intervals on both; the staircase joins the "
                "models no other beats on both; a model whose intervals reach it is "
                "possibly on the frontier; the reference policies, at no API cost, are "
                "dashed lines.",
    "operations": "Operational metrics, coloured by distance from the models' median in "
                  "material steps (each column's under the chart): grey is within one "
                  "step, full colour at three; white describes and does not rank. "
                  "Metrics an operator that does nothing wins by default (stock-outs of "
                  "nothing listed, waste of nothing bought) are white for a model whose "
                  "share of the oracle's gain is 5% or less; the empty-machine rate "
                  "stands beside them where the world has machines.",
    "trend": "Each model's mean {score} per run of this cohort as a share of the oracle's "
             "gain over doing nothing, each trial a dot, the mean's 95% interval a whisker "
             "(the trend table's, named under it); a red ring marks a regression against "
             "the model's previous run.",
}


def html_report(board: Board, trend: Trend | None = None, pages: Path | None = None
                ) -> str:
    """One HTML file with no external reference: table, notes and SVG charts inline, and
    a trend section when ``trend`` spans two runs or more. With ``pages``, the folder
    the report is written to, each row links the transcript pages of its trials that
    ``vendbench view --static`` wrote there."""
    from ._charts import write_charts, write_trend_chart

    headers, rows = table_rows(board)
    links = _transcript_links(board, pages) if pages is not None else None
    if links is not None:
        headers = [*headers, "transcripts"]
    cohort = board.selection.cohort
    table = _table(headers, rows, "sortable board",
                   f"Models ranked by mean terminal {board.score_name} ({board.currency}), {cohort['scenario']}, "
                   f"{days_text(cohort['days'])}; click a column to sort", links) \
        if rows else "<p class='note'>No finished trial to rank yet.</p>"
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in _footer(board))
    with tempfile.TemporaryDirectory() as tmp:
        charts = "".join(_figure(p, board.score_name) for p in write_charts(board, tmp)
                         if p.suffix == ".svg")
        trend_html = ""
        if trend is not None and len(trend.runs) > 1:
            from ._trend import _trend_footer, trend_table

            t_headers, t_rows = trend_table(trend)
            trend_html = (
                "<h2>Trend across runs</h2>"
                + _table(t_headers, t_rows, "trend",
                         f"Each model per run of this cohort ({len(trend.runs)} runs)")
                + "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in _trend_footer(trend))
                + "</ul>" + "".join(_figure(p, board.score_name)
                                    for p in write_trend_chart(trend, tmp)
                                    if p.suffix == ".svg"))
    missing = "".join(f"<p class='note'>{html.escape(n)}</p>"
                      for n in board.chart_notes.values())
    if board.diagnosis is not None:
        missing += _diagnostics_html(board.diagnosis)
    title = f"vendbench leaderboard — {cohort['scenario']}, {days_text(cohort['days'])}"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_STYLE}{_TREND_STYLE}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{table}<ul>{notes}</ul>{charts}{missing}"
            f"{trend_html}<script>{_SCRIPT}</script></body></html>")


def _diagnostics_html(d: Diagnostics) -> str:
    """The diagnostics' tables and what their columns are (their charts are among the
    charts)."""
    tables = "".join(_table(headers, rows, "sortable diagnostics", title)
                     for title, headers, rows in diagnostics_tables(d))
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in diagnostics_footer(d))
    return f"<h2>Why: diagnostics (design §32.1)</h2>{tables}<ul>{notes}</ul>"


def _transcript_links(board: Board, pages: Path) -> list[str] | None:
    """Per row, links to its trials' pages in ``pages`` (None: none written there)."""
    cells, found = [], False
    for row in board.rows:
        links = []
        for p in sorted((p for p in board.points if p["model"] == row.model),
                        key=PairKey.of):
            href = f"trial/{path_id(p['trial_id'])}/index.html"
            if (pages / href).exists():
                found = True
                links.append(f"<a href='{html.escape(href)}'>s{p['seed']}</a>")
        cells.append(" ".join(links))
    return cells if found else None


def _table(headers: list[str], rows: list[list[str]], classes: str, caption: str,
           raw: list[str] | None = None) -> str:
    """A table of escaped cells; ``raw``: one more cell per row, already HTML."""
    head = "".join(f"<th scope='col'>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r)
                   + (f"<td style='text-align:left'>{raw[i]}</td>" if raw else "") + "</tr>"
                   for i, r in enumerate(rows))
    # the caption stays put while a wide table scrolls under it
    return (f"<figure class='table'><figcaption class='above'>{html.escape(caption)}"
            f"</figcaption><div class='scroll'><table class='{classes}'><thead><tr>{head}"
            f"</tr></thead><tbody>{body}</tbody></table></div></figure>")


def _figure(path: Path, score: str) -> str:
    caption = CAPTIONS.get(path.stem, "").format(score=score, Score=score[:1].upper()
                                                 + score[1:])
    return (f"<figure>{_inline_svg(path)}<figcaption>{html.escape(caption)}</figcaption>"
            "</figure>")


def _inline_svg(path: Path) -> str:
    text = path.read_text()
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)   # creator, date
    return text[text.index("<svg"):]
