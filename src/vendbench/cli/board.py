"""``vendbench leaderboard`` and ``vendbench trend``: rankings, charts, regressions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError
from .._text import count
from ._args import HelpFormatter, cohort_flags, db_flag, path, positive, progress, wrap

BOARD_EPILOG = """\
examples:
  vendbench leaderboard                               # the newest run
  vendbench leaderboard --run all --days 180   # every 180-day run of one cohort
  vendbench leaderboard --wide --db nightly.duckdb    # every column
  vendbench leaderboard --format json > board.json
  vendbench leaderboard --charts report/       # PNG + SVG charts, report.html
  vendbench leaderboard --diagnostics    # and why: the paper's diagnostics
  vendbench leaderboard --flags          # what vendbench screen found
"""


TREND_EPILOG = """\
exit codes: 0, or 4 with --fail-on-regression when a model regressed.

examples:
  vendbench trend --db nightly.duckdb
  vendbench trend --db nightly.duckdb --last 7 --model openai/gpt-4.1-mini
  vendbench trend --db nightly.duckdb --format json --fail-on-regression
  vendbench trend --db nightly.duckdb --charts trend/
"""


def add(sub: Any) -> None:
    board = sub.add_parser(
        "leaderboard", help="rank models from a results database: tables, charts, report",
        description=wrap("Rank the models of a run: terminal net assets (unfinished trials "
                          "count 0), their share of what the oracle gains over doing "
                          "nothing on the same world and seed (0% an operator that only "
                          "ends its days, 100% the oracle), growth, CV, API cost and "
                          "efficiency, against the reference policy (vs base: points of "
                          "that share), and operational metrics; the share's 95% "
                          "confidence interval is Student's t over the seeds (assuming roughly normal "
                          "shares, a note says where they are not), or with --ci any-shape "
                          "the betting interval valid for any shape. Horizons, scenarios, worlds, starting cash, "
                          "prompts and tool sets are never mixed: one ranking is one cohort; "
                          "arena matches are ranked apart (--arena)."),
        formatter_class=HelpFormatter, epilog=BOARD_EPILOG)
    db_flag(board)
    board.add_argument("--run", default="latest", metavar="RUN_ID",
                       help="a run id, 'latest' (default) or 'all' (each model's latest "
                            "attempt across the runs of the newest run's cohort; the other "
                            "cohorts are listed with the command that ranks each)")
    cohort_flags(board)
    board.add_argument("--format", default="table",
                       choices=["table", "markdown", "csv", "json", "html"],
                       help="output format (html: a self-contained report)")
    board.add_argument("--ci", choices=["t", "any-shape"], default="t",
                       help="the oracle share's 95%% interval: t (default; Student's t over "
                            "the seeds' shares, narrow when they agree, an assumption "
                            "stated) or any-shape (the betting interval, valid whatever the "
                            "shares' shape, wide at few seeds); JSON carries both")
    board.add_argument("--wide", action="store_true",
                       help="table: every column (growth, CV, cached share, CNY/$, oracle "
                            "share, operations), wider than 80 characters")
    board.add_argument("--charts", metavar="DIR", type=path,
                       help="also write the charts (PNG and SVG) and report.html into DIR; "
                            "after vendbench view --static DIR, each row of the report "
                            "links its trials' pages "
                            "(created if missing; files in it are replaced)")
    board.add_argument("--diagnostics", action="store_true",
                       help="also why each model did as it did (the AutoVend paper's "
                            "diagnostics: reassignment gap, visit cycles, empty sites, "
                            "growth early and late, days until sales stop, failure modes), "
                            "per model with the reference policies beside, in every format; "
                            "each trial replayed, about a second per 180-day trial")
    board.add_argument("--flags", action="store_true",
                       help="also list the flags of the ranked trials: what screening "
                            "(the screen command) found at severity warning or high, with "
                            "day, exchange, quote and why (JSON carries them whenever a "
                            "trial was screened)")
    board.add_argument("--arena", action="store_true",
                       help="rank the models of arena matches (vendbench arena): earned "
                            "score and head-to-head wins, paired by match, with their "
                            "intervals (every format; --charts writes arena_share, "
                            "head_to_head and report.html)")
    board.set_defaults(func=leaderboard)
    trend = sub.add_parser(
        "trend", help="each model's score across runs (nights) of a cohort; regressions",
        description=wrap("Per model and run of one cohort (the newest run's, or the one "
                          "--days and --scenario pick): completed/trials, mean net assets, "
                          "the mean share of the oracle's gain with the leaderboard's 95% "
                          "interval (Student's t over the seeds; --ci any-shape: the betting "
                          "interval), cost and API efficiency. A model regresses when its "
                          "latest run is worse than its previous one beyond noise (trials "
                          "paired by world, seed and repeat: worse on too many seeds for a "
                          "sign test at 4%, or the 99% betting interval of the mean paired "
                          "difference below 0; tested from 5 pairs), or its share of failed "
                          "trials rises by 20 percentage points or more."),
        formatter_class=HelpFormatter, epilog=TREND_EPILOG)
    db_flag(trend)
    trend.add_argument("--model", nargs="+", metavar="M", help="only these models")
    trend.add_argument("--last", type=positive, metavar="N", help="only the last N runs")
    cohort_flags(trend)
    trend.add_argument("--format", default="table",
                       choices=["table", "markdown", "csv", "json"], help="output format")
    trend.add_argument("--ci", choices=["t", "any-shape"], default="t",
                       help="each run's 95%% interval, in the table, the chart and the "
                            "JSON alike: t (default; Student's t over the seeds) or "
                            "any-shape (the betting interval); the regression test is its "
                            "own")
    trend.add_argument("--charts", metavar="DIR", type=path,
                       help="also write trend.png and trend.svg into DIR")
    trend.add_argument("--fail-on-regression", action="store_true",
                       help="exit 4 when any model regressed (for cron)")
    trend.set_defaults(func=trend_command)


def leaderboard(args: argparse.Namespace) -> int:
    from ..leaderboard import Filters, build, render

    if args.arena:
        return _arena_board(args)
    filters = Filters(days=args.days, scenario=args.scenario,
                      include_compare=args.include_compare)
    board = build(args.db, args.run, filters, ci=args.ci, diagnostics=args.diagnostics,
                  on_trial=_diagnosing if args.diagnostics else None)
    if not board.rows and (args.format in ("table", "markdown") or args.charts):
        print(nothing_to_rank(board, args.db))
        return 0
    out = output_dir(args.charts) if args.charts else None     # before any output
    print(render(board, args.format, wide=args.wide))
    if args.flags and args.format in ("table", "markdown"):
        from ..leaderboard import findings_text

        print("\n" + findings_text(board))
    if out is not None:
        from ..leaderboard import build_trend, html_report, write_charts

        trend = build_trend(args.db, filters=filters, ci=args.ci)
        files = _writing(out, lambda: write_charts(board, out))
        report = out / "report.html"
        _writing(out, lambda: report.write_text(html_report(board, trend, pages=out)))
        print(f"\nwrote {len(files)} chart files and {report}", file=sys.stderr)
    return 0


_diagnosing = progress("diagnosing trials")     # --diagnostics: each trial replays its world


def _arena_board(args: argparse.Namespace) -> int:
    from ..leaderboard import build_arena, render_arena

    given = [flag for flag, value in (("--wide", args.wide), ("--days", args.days),
                                      ("--scenario", args.scenario),
                                      ("--include-compare", args.include_compare),
                                      ("--ci any-shape", args.ci != "t")) if value]
    if given:
        raise ConfigError(f"--arena ranks one arena run (or 'all' of its kind); drop "
                          f"{', '.join(given)} (its interval is the betting one, valid at "
                          "any number of matches)")
    from ..leaderboard import arena_html

    out = output_dir(args.charts) if args.charts else None     # before any output
    board = build_arena(args.db, args.run)
    print(arena_html(board) if args.format == "html" else render_arena(board, args.format))
    if args.flags and args.format in ("table", "markdown"):
        from ..leaderboard import findings_text

        print("\n" + findings_text(board))
    if out is not None:
        from ..leaderboard import write_arena_charts

        files = _writing(out, lambda: write_arena_charts(board, out))
        report = out / "report.html"
        _writing(out, lambda: report.write_text(arena_html(board)))
        print(f"\nwrote {count(len(files), 'chart file')} and {report}", file=sys.stderr)
    return 0


def nothing_to_rank(board: Any, db: str) -> str:
    """Why a ranking is empty, in a line, and the state of each model's trials."""
    from collections import Counter

    s = board.selection
    runs = ", ".join(s.runs) or "none"
    lines = [f"nothing to rank in run {runs} yet (no chart or report written):"]
    states: dict[str, Counter[str]] = {}
    for t in s.set_apart:
        states.setdefault(t["model"], Counter())[t["status"]] += 1
    for model, counted in sorted(states.items()):
        lines.append(f"  {model}: " + ", ".join(f"{n} {status}" for status, n in
                                                 sorted(counted.items())))
    if len(s.runs) == 1:
        lines.append(f"  (each trial's reason: vendbench runs --db {db} --run {s.runs[0]})")
    return "\n".join(lines)


def trend_command(args: argparse.Namespace) -> int:
    from ..leaderboard import Filters, build_trend, render_trend

    trend = build_trend(args.db, models=args.model, last=args.last,
                        filters=Filters(days=args.days, scenario=args.scenario,
                                        include_compare=args.include_compare), ci=args.ci)
    out = output_dir(args.charts) if args.charts else None
    print(render_trend(trend, args.format))
    if out is not None:
        from ..leaderboard import write_trend_chart

        files = _writing(out, lambda: write_trend_chart(trend, out))
        print(f"\nwrote {', '.join(str(f) for f in files) or 'no chart (one run)'}",
              file=sys.stderr)
    if args.fail_on_regression and trend.regressions:
        print(f"vendbench: {count(len(trend.regressions), 'regression')}: "
              + "; ".join(f"{r['model']} ({r['kind']})" for r in trend.regressions),
              file=sys.stderr)
        return 4
    return 0


def output_dir(path: str, flag: str = "--charts") -> Any:
    """A directory for charts, made if missing; a clear error, before anything is
    printed, when it cannot be (a file by that name, no permission)."""
    from pathlib import Path

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{flag} {path}: a file by that name exists; pass a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot create it ({exc.strerror})") from None
    import tempfile

    try:                                    # what access() says is not enough for root
        with tempfile.NamedTemporaryFile(dir=out, prefix=".vendbench-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot write there ({exc.strerror}); pass "
                          "another directory") from None
    return out


def output_file(path: str, flag: str) -> None:
    """A clear error, before anything runs, when ``path`` cannot be written: a folder by
    that name, a folder that does not exist or cannot be written in (``--chart
    /proc/x.png`` once drew a whole comparison, then ended in a traceback). Opened to
    append, so nothing is lost; removed again when it did not exist."""
    from pathlib import Path

    out = Path(path)
    if out.is_dir():
        raise ConfigError(f"{flag} {path}: a folder by that name exists; name a file")
    if not out.parent.is_dir():
        raise ConfigError(f"{flag} {path}: no folder {out.parent}; create it first")
    existed = out.exists()
    try:                                    # what access() says is not enough for root
        with open(out, "ab"):
            pass
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot write there ({exc.strerror or exc}); "
                          "name another file") from None
    if not existed:
        out.unlink(missing_ok=True)


def _writing(out: Any, write: Callable[[], Any]) -> Any:
    from ..errors import ConfigError

    try:
        return write()
    except OSError as exc:
        raise ConfigError(f"--charts {out}: cannot write there "
                          f"({exc.strerror or exc}): pass another directory") from None
