"""``vendbench site OUT``: the leaderboard as a static site, from one or many results
files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._args import HelpFormatter, default_db, path, wrap

EPILOG = """\
The site holds, per cohort (world, horizon, starting cash, prompts, tools), the ranking
of its newest night: each model's share of the oracle's gain with its Student's t 95%
interval and, beside it, the interval valid for any shape of scores; cost, API
efficiency and screening flags; the cost-share frontier with 95% intervals on both axes
(the models no other beats on both, and those whose intervals reach them marked
"possibly on the frontier"); which trials exist. A page per model (its trials, money
over days, operational profile, diagnostics, findings, its trend with regressions
marked), per run, per comparison and per arena; the trend of every model across nights.

Every page's data is written beside it as JSON, the panel's trials and exchanges as
Parquet (data/), each chart as SVG and PNG (charts/), and robots.txt. Charts are drawn
in the browser by plotly.js, copied into the site from the plotly package: nothing is
fetched from elsewhere and nothing inline runs, so the folder opens from disk and from
any static host. A rebuild rewrites only the files whose bytes changed (OUT/.vendbench-
site keeps what it reuses). Transcripts teach the next model the benchmark: they are
published only with --transcripts. More: docs/site.md.

examples:
  vendbench site public/                                 # ./vendbench.duckdb
  vendbench site public/ --db nights/*.duckdb            # a file a night
  vendbench site public/ --db nightly.duckdb --transcripts
"""


def add(sub: Any) -> None:
    p = sub.add_parser(
        "site", help="publish results as a static site: rankings, the cost-share "
                     "frontier, model, run and trend pages",
        description=wrap("Build a static site from one or many results files into OUT "
                         "(a new or empty folder, or one vendbench site built before)."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    p.add_argument("out", metavar="OUT", type=path, help="the folder to write the site to")
    p.add_argument("--db", nargs="+", metavar="PATH", type=path,
                   help="results files, one or many (default $VENDBENCH_DB, else "
                        "./vendbench.duckdb)")
    p.add_argument("--transcripts", action="store_true",
                   help="also publish every trial's transcript (as view --static writes "
                        "them), linked from its trial")
    p.add_argument("--no-diagnostics", action="store_true",
                   help="leave out the paper's diagnostics on model pages (they replay "
                        "each newest-night trial's world)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="what is printed at the end: a line, or the counts as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..site import build_site

    dbs = args.db or [default_db()]

    def say(step: str) -> None:
        print(f"vendbench site: {step}", file=sys.stderr, flush=True)

    built = build_site(args.out, dbs, transcripts=args.transcripts,
                       diagnostics=not args.no_diagnostics, on_step=say)
    if args.format == "json":
        print(json.dumps({"out": str(built.out), "pages": built.pages, "files": built.files,
                          "written": built.written, "removed": built.removed,
                          "charts_drawn": built.charts_drawn,
                          "seconds": round(built.seconds, 3),
                          "transcripts": built.transcripts}))
    else:
        print(built.summary())
        print(f"open {built.out / 'index.html'}")
    return 0
