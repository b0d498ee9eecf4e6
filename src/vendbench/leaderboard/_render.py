"""Leaderboard formats: terminal table, Markdown, CSV, JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any

from .._text import count, printable
from .._text import days as days_text
from ..environment import display_columns
from ..results import TrialStatus

from ._board import INTERVAL_METHOD, T_METHOD
from ._table import fit_table, share_ci

from ._diagnostics import Diagnostics, diagnostics_footer, diagnostics_tables

if TYPE_CHECKING:
    from ._build import Board

def ops_for(scenario: str) -> list[tuple[str, str, float, int]]:
    """The operational columns of a scenario's leaderboard, as its metrics module
    declares them: (metric, header, scale for display, decimals). Every metric is a
    plain number or a fraction in the data (JSON, CSV); only the human tables show
    percents."""
    return list(display_columns(scenario))


def _num(value: float | None, places: int = 0, scale: float = 1) -> str:
    return "—" if value is None else f"{value * scale:,.{places}f}"


def _span(bounds: tuple[float, float]) -> str:
    """The range shares lie in, in words (``-34%–125%``)."""
    return f"{bounds[0]:.0%}–{bounds[1]:.0%}"


def vs_base(r: Any) -> str:
    """The mean paired difference of shares against the reference policy, in points."""
    if r.vs_baseline_points is None:
        return "—"
    return f"{100 * r.vs_baseline_points:+.0f} pts"


def table_rows(board: Board, wide: bool = True) -> tuple[list[str], list[list[str]]]:
    """The leaderboard's cells. ``wide``: every column (the report, Markdown, --wide);
    else the columns that fit 80 characters beside a model name of up to ~30."""
    if not wide:
        headers = ["#", "model", "done", board.score_name, "of oracle, 95% CI", "cost $",
                   "vs base"]
        rows = [[str(i), r.model, f"{r.completed}/{r.trials}", f"{r.mean_net_assets:,.0f}",
                 share_text(r), _num(r.cost_mean_usd, 2 if (r.cost_mean_usd or 0) >= 1 else 4),
                 vs_base(r)]
                for i, r in enumerate(board.rows, 1)]
        return _with_flags(board, headers, rows)
    cur = board.currency
    headers = ["#", "model", "done", f"{board.score_name} ({cur}) mean ± SD", "of oracle [95% CI]",
               "growth", "CV", "cost $ mean", "cached %", f"{cur}/$", "vs baseline",
               *(h for _, h, _, _ in ops_for(board.selection.cohort["scenario"]))]
    rows = []
    for i, r in enumerate(board.rows, 1):
        vs = vs_base(r) + ("" if r.beats_baseline is None else
                           f" ({r.beats_baseline}/{r.baseline_pairs} beat)")
        rows.append([
            str(i), r.model, f"{r.completed}/{r.trials}",
            f"{r.mean_net_assets:,.0f} ± {r.sd_net_assets:,.0f}", share_text(r, wide=True),
            f"{r.growth:+,.0f}", _num(r.cv, 1, 100) + ("%" if r.cv is not None else ""),
            _num(r.cost_mean_usd, 4), _num(r.cached_share, 1, 100), _num(r.api_efficiency, 0),
            vs,
            *(_num(r.operations.get(k), p, s)
              for k, _, s, p in ops_for(board.selection.cohort["scenario"]))])
    return _with_flags(board, headers, rows)


def flags_text(r: Any) -> str:
    """A model's flags over its screened trials (``2 in 3/5``: 2 flags, 3 of its 5 trials
    screened), or — when none was screened."""
    if r.flags is None:
        return "—"
    return f"{r.flags}" + ("" if r.screened == r.trials else f" in {r.screened}/{r.trials}")


def _with_flags(board: Board, headers: list[str], rows: list[list[str]]
                ) -> tuple[list[str], list[list[str]]]:
    """The flags column (design §32.2), when any ranked trial was screened."""
    if not board.screened:
        return headers, rows
    return [*headers, "flags"], [[*row, flags_text(r)] for row, r in zip(rows, board.rows)]


def findings_text(board: Any) -> str:
    """The flags of the ranked trials (a ``Board``'s or an arena's), one per line
    (``--flags``)."""
    if not board.screened:
        return "no ranked trial has been screened: vendbench screen --db FILE"
    if not board.findings:
        return "no flags: the screened trials show nothing of severity warning or high"
    lines = [f"flags ({len(board.findings)}):"]
    for f in board.findings:
        where = f"day {f['day']}" if f["day"] is not None else "the trial"
        if f["exchange"] is not None:
            where += f", exchange {f['exchange']}"
        who = f["scanner"] + (f" ({f['judge']})" if f["judge"] else "")
        lines.append(f"- {f['model']} seed {f['seed']}, {where}: {f['category']} "
                     f"({f['severity']}, {who}): \"{f['quote'][:160]}\" {f['explanation']} "
                     f"[{f['trial_id']}]")
    return "\n".join(printable(line) for line in lines)


def share_text(r: Any, wide: bool = False) -> str:
    """A model's mean oracle share and its interval (``39% (12–71%)``), ``!`` when a
    trial of it beat the oracle."""
    if r.oracle_share is None:
        return "—"
    flag = " !" if getattr(r, "above_oracle", 0) else ""
    if wide and r.ci_oracle_share is not None:
        lo, hi = r.ci_oracle_share
        return f"{r.oracle_share:.1%} [{lo:.1%}, {hi:.1%}]{flag}"
    return share_ci(r.oracle_share, r.ci_oracle_share) + flag


NARROW_DROP = ("vs base", "flags", "cost $", "of oracle, 95% CI")   # what gives way to a long name


def _interval_words(ci: str) -> str:
    if ci == "t":
        return T_METHOD
    return f"{INTERVAL_METHOD}, so wide at few seeds"


def _footer(board: Board) -> list[str]:
    s = board.selection
    worlds = ", ".join(str(w) for w in s.cohort.get("world_seeds") or [])
    private = " (private: salted)" if s.cohort.get("world_salt_sha256") else ""
    cash = s.cohort["initial_cash"]
    cash = "unknown (no trial has started a day yet)" if cash is None else f"{cash:,.0f} {board.currency}"
    lines = [f"cohort: {s.cohort['scenario']}, {days_text(s.cohort['days'])}, starting cash "
             f"{cash}, world{'s' if ',' in worlds else ''} "
             f"{worlds}{private}; runs: {', '.join(s.runs)}",
             "unfinished trials score 0; each model's latest attempt per world, seed and "
             "repeat is used; comparisons pair by world and seed",
             "of oracle: the share of what the oracle gains over doing nothing on the "
             "same world and seed, (score − idle) / (oracle − idle): 0% only ends its "
             f"days, 100% is the oracle ({_span(board.bounds)} here); its 95% CI: "
             f"{_interval_words(board.ci)}; ! a trial above the oracle; vs base: points "
             "above the reference policy's share, seed by seed",
             *s.notes]
    mcp = [r.model for r in board.rows if r.harness == "mcp"]
    inspect = [r.model for r in board.rows if r.harness == "inspect"]
    if mcp or inspect:
        lines.append(f"harnesses: {', '.join(sorted({r.harness for r in board.rows}))}"
                     + (f"; over MCP (an agent harness driving `vendbench serve`, its model "
                        f"and cost outside vendbench): {', '.join(mcp)}" if mcp else "")
                     + (f"; run by Inspect AI and imported from its logs (its agent, its "
                        f"context handling; cost where Inspect priced it): "
                        f"{', '.join(inspect)}" if inspect else ""))
    blank = [f"{r.model} ({r.api_efficiency_note})" for r in board.rows
             if r.api_efficiency is None and r.api_efficiency_note not in (None, "no API cost")]
    if blank:
        lines.append(f"{board.currency}/$ is over completed, priced trials; blank for "
                     + ", ".join(blank))
    running = [a for a in s.set_apart if a["status"] == TrialStatus.RUNNING]
    unstarted = [a for a in s.set_apart if a["status"] == TrialStatus.NOT_STARTED]
    failed = [a for a in s.set_apart
              if a["status"] not in (TrialStatus.RUNNING, TrialStatus.NOT_STARTED)]
    if unstarted:
        lines.append(f"not started, not ranked: {count(len(unstarted), 'trial')} of "
                     + ", ".join(sorted({a["model"] for a in unstarted}))
                     + " (the run's total budget could not cover them)")
    if running:
        lines.append(f"still running, not ranked yet: {count(len(running), 'trial')} of "
                     + ", ".join(sorted({a["model"] for a in running})))
    if failed:
        lines.append("set apart (harness errors, not ranked): " + ", ".join(
            f"{a['model']} seed {a['seed']} ({a['status']})" for a in failed))
    whole = [r for r in s.refused if r["run_id"] not in s.runs]   # runs of other cohorts
    within = [r for r in s.refused if r["run_id"] in s.runs]
    if whole:
        runs = len({r["run_id"] for r in whole})
        lines.append(f"refused to mix {count(len(whole), 'trial')} of {count(runs, 'run')} of other "
                     "cohorts (listed below; the reasons are in --format json)")
    if within:
        lines.append(f"refused to mix {count(len(within), 'trial')}: " + "; ".join(
            sorted({f"{r['model']} from {r['run_id']}: {r['reason']}" for r in within})))
    for o in s.others:
        worlds = ", ".join(str(w) for w in o["world_seeds"])
        lines.append(f"other cohort: {o['scenario']}, {days_text(o['days'])}, "
                     f"{'worlds' if len(o['world_seeds']) > 1 else 'world'} {worlds}: "
                     f"{count(o['runs'], 'run')}, newest {o['created_at']}; rank it with: vendbench "
                     f"leaderboard --db {s.db} {o['select']}")
    return lines


def exact(value: Any) -> Any:
    """Numbers as the decimals they stand for: a float carries 12 significant digits at
    most (a mean of cents such as 51261.329999999994 is 51261.33); dicts and lists
    through."""
    if isinstance(value, float):
        return float(format(value, ".12g"))
    if isinstance(value, dict):
        return {k: exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [exact(v) for v in value]
    return value


NOT_INTERVALS = ("ci_doubt",)        # a sentence on the interval, not an interval


def _flat(rank: int, data: dict[str, Any]) -> dict[str, Any]:
    """A row for CSV: rank first, each interval as two columns, every cell one value."""
    out = {"rank": rank, "model": data.pop("model")}
    for key, value in data.items():
        if key.startswith("ci_") and key not in NOT_INTERVALS:
            out[f"{key}_low"], out[f"{key}_high"] = value if value is not None else (None, None)
        else:
            out[key] = value
    return out


def text(board: Board, fmt: str = "table", wide: bool = False) -> str:
    """The leaderboard as text: table (80 columns; every column with ``wide``), markdown,
    csv or json; with its diagnostics after it when it has them (design §32.1)."""
    body = _text(board, fmt, wide)
    if board.diagnosis is None or fmt in ("json", "csv"):
        return body
    return body + "\n\n" + _diagnostics_text(board.diagnosis, fmt)


def _diagnostics_text(d: Diagnostics, fmt: str) -> str:
    """The diagnostics' tables (a table wider than 80 characters in parts that fit,
    each keeping the model column) and what their columns are."""
    from tabulate import tabulate

    parts = []
    for title, headers, rows in diagnostics_tables(d):
        rows = [[printable(c) for c in r] for r in rows]
        if fmt == "markdown":
            parts.append(f"**{title}**\n\n" + tabulate(
                rows, headers=headers, tablefmt="github", disable_numparse=True))
            continue
        for columns in column_groups(headers, rows, 80):
            table, _ = fit_table([headers[i] for i in columns],
                                 [[r[i] for i in columns] for r in rows], width=10_000,
                                 left=1)
            parts.append(f"{title}\n{table}")
    footer = diagnostics_footer(d)
    if fmt == "markdown":
        return "\n\n".join(parts) + "\n\n" + "\n".join(f"- {printable(x)}" for x in footer)
    import textwrap

    return "\n\n".join(parts) + "\n\n" + "\n".join(
        textwrap.fill(printable(x), 80, subsequent_indent="  ") for x in footer)


def _diagnostic_cells(d: Diagnostics, model: str) -> dict[str, Any]:
    """A model's diagnostics as CSV cells: each mean and its interval, each failure
    mode's instances per trial (empty where the model has no diagnosed trial)."""
    row = next((r for r in d.rows if r.model == model), None)
    out: dict[str, Any] = {}
    for x in d.declared:
        ci = row.intervals[x.name] if row else None
        out[f"diag_{x.name}"] = row.means[x.name] if row else None
        out[f"diag_{x.name}_ci_low"], out[f"diag_{x.name}_ci_high"] = ci or (None, None)
    for m in d.modes:
        out[f"fail_{m.kind}_per_trial"] = row.per_trial[m.kind] if row else None
    return out


def column_groups(headers: list[str], rows: list[list[str]], width: int) -> list[list[int]]:
    """The columns of a table in groups that each fit ``width`` beside the first."""
    size = [max([len(headers[i]), *(len(r[i]) for r in rows)]) for i in range(len(headers))]
    groups, current, used = [], [0], size[0]
    for i in range(1, len(headers)):
        if len(current) > 1 and used + 2 + size[i] > width:
            groups.append(current)
            current, used = [0], size[0]
        current.append(i)
        used += 2 + size[i]
    groups.append(current)
    return groups


def _text(board: Board, fmt: str = "table", wide: bool = False) -> str:
    if fmt == "json":
        return json.dumps(exact(board.as_json()), default=str)
    headers, rows = table_rows(board, wide=wide or fmt != "table")
    rows = [[printable(cell) for cell in row] for row in rows]   # names: plain text
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        flat = [exact(_flat(i, r.as_json())) for i, r in enumerate(board.rows, 1)]
        if board.diagnosis is not None:
            for row in flat:
                row.update(exact(_diagnostic_cells(board.diagnosis, row["model"])))
        writer.writerow(list(flat[0]) if flat else ["rank", "model"])
        for row in flat:
            writer.writerow(list(row.values()))
        return out.getvalue()
    from tabulate import tabulate

    dropped: list[str] = []
    if fmt == "markdown" or wide:
        body: str = tabulate(rows, headers=headers, tablefmt="github" if fmt == "markdown" else
                        "simple", disable_numparse=True,
                        colalign=("left", "left", *["right"] * (len(headers) - 2)))
    else:
        body, dropped = fit_table(headers, rows, width=80, drop=NARROW_DROP)
    footer = [printable(line) for line in _footer(board)]     # notes name models
    if not board.rows:
        body = "no finished trial to rank yet"
    if fmt == "markdown":
        return body + "\n\n" + "\n".join(f"- {line}" for line in footer)
    if not wide:
        import textwrap

        footer = [textwrap.fill(line, 80, subsequent_indent="  ", break_long_words=False,
                                break_on_hyphens=False) for line in footer]
        footer.append(f"more columns ({', '.join([*dropped, 'growth', 'CV', 'cached', board.currency + '/$'])}"
                      ", operations): --wide")
    return body + "\n\n" + "\n".join(footer)


