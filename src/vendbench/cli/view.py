"""``vendbench view``: see what an agent did, day by day, without writing SQL."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._args import HelpFormatter, db_flag, path, within, wrap

EPILOG = """\
Pages: runs → a run's trials (status, score, cost, cached share, a sparkline) → a trial
(its score, cash and API spend by day; each day a link) → a day (the daily report, the
reasoning and reply of every request with its tokens, cost and latency, each tool call
with its arguments and result, rejections marked, the notes as they stood) → the window
a request carried (what it held, what was evicted). Search within a trial; two trials of
one world and seed side by side, to see where they part. A trial still running refreshes
as its days arrive. Keys: ← → (or k j) previous/next day, u up, / search.

examples:
  vendbench view                              # the runs in ./vendbench.duckdb
  vendbench view --db nightly.duckdb 20261201-020000-ab12     # open at a run
  vendbench view --static site/ --db nightly.duckdb           # pages as files
"""


def add(sub: Any) -> None:
    view = sub.add_parser(
        "view", help="see inside trials: days, requests, tool calls, windows (read-only)",
        description=wrap("Serve a read-only transcript viewer of a results file on this "
                         "machine and print its URL; or write its pages as files "
                         "(--static)."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    view.add_argument("start", nargs="?", metavar="RUN_ID|TRIAL_ID",
                      help="open at this run or trial (default: the list of runs)")
    db_flag(view)
    view.add_argument("--host", default="127.0.0.1",
                      help="address to bind (default 127.0.0.1; only loopback addresses: "
                           "the pages show every prompt and reply)")
    view.add_argument("--port", type=within("a port", 0, 65535), default=8766,
                      help="port (default 8766; 0: any free one, printed)")
    view.add_argument("--static", metavar="DIR", type=path,
                      help="write the pages into DIR instead of serving them (with "
                           "RUN_ID: that run's only); search and each message's full text "
                           "need the server, and request windows list message numbers")
    view.set_defaults(func=command)


def _progress(total: int) -> Any:
    """A page counter on stderr: a live line on a terminal, a line each tenth when not."""
    import time

    tty = sys.stderr.isatty()
    state = {"done": 0, "shown": time.monotonic(), "tenth": 0}

    def on_page(path: str) -> None:
        state["done"] += 1
        done = state["done"]
        if tty:
            if time.monotonic() - state["shown"] >= 0.2 or done == total:
                state["shown"] = time.monotonic()
                end = "\n" if done == total else ""
                print(f"\rwriting pages: {done:,}/{total:,}", end=end, file=sys.stderr,
                      flush=True)
        elif done * 10 // total > state["tenth"]:
            state["tenth"] = done * 10 // total
            print(f"writing pages: {done:,}/{total:,}", file=sys.stderr, flush=True)
    return on_page


def command(args: argparse.Namespace) -> int:
    from ..view import ViewConfig, static_plan, view, write_static

    if args.static:
        from .board import output_dir

        plan = static_plan(args.db, args.start)          # a bad id: nothing is created
        out = output_dir(args.static, flag="--static")
        count = write_static(args.db, out, args.start, plan=plan,
                             on_page=_progress(len(plan)))
        size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
        print(f"wrote {count} pages ({size / 1e6:,.1f} MB) into {out} (open "
              f"{out / 'index.html'})", file=sys.stderr)
        return 0
    view(ViewConfig(db=args.db, host=args.host, port=args.port, start=args.start))
    return 0

