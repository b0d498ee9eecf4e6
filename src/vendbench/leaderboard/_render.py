"""Leaderboard formats: terminal table, Markdown, CSV, JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Board

# (metric, header, scale for display, decimals): every metric is a plain number or a
# fraction in the data (JSON, CSV); only these human tables show percents
OPS = [("waste_rate", "waste %", 100, 2), ("stockout_rate", "stock-outs %", 100, 1),
       ("shelf_utilisation", "util %", 100, 1), ("pricing_regret_share", "regret %", 100, 1),
       ("assortment_score", "assort.", 1, 3), ("capital_efficiency", "cap. eff", 1, 3),
       ("tool_calls_per_day", "calls/day", 1, 1), ("rejected_item_rate", "rejected %", 100, 1)]


def _num(value: float | None, places: int = 0, scale: float = 1) -> str:
    return "—" if value is None else f"{value * scale:,.{places}f}"


def _ci(ci: tuple[float, float] | None, places: int = 0) -> str:
    return "" if ci is None else f" [{ci[0]:,.{places}f}, {ci[1]:,.{places}f}]"


def table_rows(board: Board) -> tuple[list[str], list[list[str]]]:
    headers = ["#", "model", "done", "net assets (CNY) mean ± SD [95% CI]", "growth", "CV",
               "cost $ mean", "cached %", "CNY/$", "vs baseline", "oracle share",
               *(h for _, h, _, _ in OPS)]
    rows = []
    for i, r in enumerate(board.rows, 1):
        vs = "—" if r.vs_baseline_ratio is None else \
            f"{r.vs_baseline_ratio:.2f}× ({r.beats_baseline}/{r.baseline_pairs} beat)"
        rows.append([
            str(i), r.model, f"{r.completed}/{r.trials}",
            f"{r.mean_net_assets:,.0f} ± {r.sd_net_assets:,.0f}{_ci(r.ci_net_assets)}",
            f"{r.growth:+,.0f}", _num(r.cv, 1, 100) + ("%" if r.cv is not None else ""),
            _num(r.cost_mean_usd, 4), _num(r.cached_share, 1, 100), _num(r.api_efficiency, 0),
            vs,
            _num(r.oracle_share, 1, 100) + ("%" if r.oracle_share is not None else ""),
            *(_num(r.operations.get(k), p, s) for k, _, s, p in OPS)])
    return headers, rows


def _footer(board: Board) -> list[str]:
    s = board.selection
    worlds = ", ".join(str(w) for w in s.cohort.get("world_seeds") or [])
    private = " (private: salted)" if s.cohort.get("world_salt_sha256") else ""
    lines = [f"cohort: {s.cohort['scenario']}, {s.cohort['days']} days, starting cash "
             f"{s.cohort['initial_cash']:,.0f} CNY, world{'s' if ',' in worlds else ''} "
             f"{worlds}{private}; runs: {', '.join(s.runs)}",
             "unfinished trials score 0; each model's latest attempt per world, seed and "
             "repeat is used; comparisons pair by world and seed", *s.notes]
    blank = [f"{r.model} ({r.api_efficiency_note})" for r in board.rows
             if r.api_efficiency is None and r.api_efficiency_note not in (None, "no API cost")]
    if blank:
        lines.append("CNY/$ is over completed, priced trials; blank for " + ", ".join(blank))
    if s.set_apart:
        lines.append("set apart (harness errors, not ranked): " + ", ".join(
            f"{a['model']} seed {a['seed']} ({a['status']})" for a in s.set_apart))
    if s.refused:
        lines.append(f"refused to mix {len(s.refused)} trial(s): " + "; ".join(
            sorted({f"{r['model']} from {r['run_id']}: {r['reason']}" for r in s.refused})))
    return lines


def _flat(rank: int, data: dict) -> dict:
    """A row for CSV: rank first, each interval as two columns, every cell one value."""
    out = {"rank": rank, "model": data.pop("model")}
    for key, value in data.items():
        if key.startswith("ci_"):
            out[f"{key}_low"], out[f"{key}_high"] = value if value is not None else (None, None)
        else:
            out[key] = value
    return out


def render(board: Board, fmt: str = "table") -> str:
    """The leaderboard as text: table, markdown, csv or json (html: see ``html_report``)."""
    if fmt == "json":
        return json.dumps(board.as_json(), default=str)
    if fmt == "html":
        from ._report import html_report

        return html_report(board)
    headers, rows = table_rows(board)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        flat = [_flat(i, r.as_json()) for i, r in enumerate(board.rows, 1)]
        writer.writerow(list(flat[0]) if flat else ["rank", "model"])
        for row in flat:
            writer.writerow(list(row.values()))
        return out.getvalue()
    from tabulate import tabulate

    style = "github" if fmt == "markdown" else "simple"
    body = tabulate(rows, headers=headers, tablefmt=style, disable_numparse=True)
    footer = _footer(board)
    if fmt == "markdown":
        return body + "\n\n" + "\n".join(f"- {line}" for line in footer)
    return body + "\n\n" + "\n".join(footer)


