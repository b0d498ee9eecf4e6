"""A self-contained HTML report: the table (sortable) and the charts, embedded."""

from __future__ import annotations

import html
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ._render import _footer, table_rows

if TYPE_CHECKING:
    from . import Board

_SCRIPT = """
document.querySelectorAll('th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0];
  const key = r => { const t = r.cells[col].innerText.replace(/[,%×$+]/g, '');
                     const n = parseFloat(t); return isNaN(n) ? t : n; };
  const asc = th.dataset.asc !== 'true'; th.dataset.asc = asc;
  [...body.rows].sort((a, b) => (key(a) > key(b) ? 1 : -1) * (asc ? 1 : -1))
    .forEach(r => body.appendChild(r));
}));
"""
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:right;white-space:nowrap}
th{cursor:pointer;background:#f4f4f4} td:nth-child(2),th:nth-child(2){text-align:left}
figure{margin:1.5em 0} figure svg{max-width:100%;height:auto}
"""


def html_report(board: Board) -> str:
    """One HTML file with no external reference: table, notes and SVG charts inline."""
    from ._charts import write_charts

    headers, rows = table_rows(board)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                   for r in rows)
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in _footer(board))
    with tempfile.TemporaryDirectory() as tmp:
        files = write_charts(board, tmp)
        charts = "".join(f"<figure>{_inline_svg(p)}</figure>" for p in files
                         if p.suffix == ".svg")
    cohort = board.selection.cohort
    title = f"vendbench leaderboard — {cohort['scenario']}, {cohort['days']} days"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<ul>{notes}</ul>{charts}<script>{_SCRIPT}</script></body></html>")


def _inline_svg(path: Path) -> str:
    text = path.read_text()
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)   # creator, date
    return text[text.index("<svg"):]
