"""``vendbench runs``: the runs in a results file and, with --run, one run's trials."""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from .._text import days as days_text, printable
from ._args import HelpFormatter, db_flag


EPILOG = """\
examples:
  vendbench runs                             # every run in ./vendbench.duckdb
  vendbench runs --db nightly.duckdb --run latest     # the newest run's trials
  vendbench runs --run 20261201-020000-ab12 --json

done counts completed trials of all the run plans (models × worlds × seeds × repeats),
begun or not; a run marked "compare" is a batch of vendbench compare.
"""


def add(sub: Any) -> None:
    runs = sub.add_parser("runs", help="list runs and their trials in a results database",
                          description="List the runs in a results database and, with --run, "
                                      "the trials of one run.",
                          formatter_class=HelpFormatter, epilog=EPILOG)
    db_flag(runs)
    runs.add_argument("--run", metavar="RUN_ID", help="show the trials of this run "
                      "('latest' for the newest)")
    runs.add_argument("--wide", action="store_true",
                      help="every column (name, start time, harness; with --run: trial "
                           "ids, cached share, requests, tool calls), wider than 80")
    runs.add_argument("--json", action="store_true", help="print JSON")
    runs.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from ..environment import score_name
    from ..results import Store, cached_share
    from ..ui import print_table

    with Store(args.db, read_only=True) as store:
        if args.run:
            run = _stale([store.run(args.run)], store.live)[0]
            trials = _stale(store.trials(run["run_id"]), store.live)
            warnings = store.warnings(run["run_id"])
            if args.json:
                print(json.dumps({"run": _jsonable(run, skip=("prompts_json", "tools_json")),
                                  "trials": [_jsonable(t) for t in trials],
                                  "warnings": [_jsonable(w) for w in warnings],
                                  "live": store.live}, default=str))
                return 0
            worlds = len({t["world_seed"] for t in trials}) > 1
            headers = ["model", *(["world"] if worlds or args.wide else []), "seed", "rep",
                       "status", score_name(run["scenario"]), "cost USD", "days"]
            rows = [[t["model"], *([t["world_seed"]] if worlds or args.wide else []),
                     t["seed"], t["repeat"], t["status"], _num(t["score"]),
                     _num(t["cost_usd"], 4), t["days_completed"]] for t in trials]
            if args.wide:
                headers = ["trial", *headers, "cached", "requests", "calls"]
                rows = [[t["trial_id"][len(run["run_id"]) + 1:], *row,
                         share_text(cached_share(t["input_tokens"], t["cache_read_tokens"])),
                         t["exchanges"], t["tool_calls"]] for t, row in zip(trials, rows)]
            print_table(f"run {run['run_id']} — {run['name'] or 'unnamed'}, "
                        f"{run['scenario']}, {days_text(run['days'])}, {run['status']}",
                        headers, rows)
            for w in warnings:
                print(printable(f"warning: {w['model']}: {w['message']}"))
            _stopped_hint([run], args.db)
            _live_line(store.live)
            return 0
        runs = _stale(store.runs(), store.live)
        live = store.live
    if args.json:
        print(json.dumps([_jsonable(r) for r in runs], default=str))
        return 0
    if not runs:
        print(f"no runs in {args.db}")
        return 0
    headers = ["run", "scenario", "days", "status", "done", "cost USD"]
    rows = [[r["run_id"], r["scenario"] + (f" arena ×{r['arena']}" if r["arena"] else "")
             + (" compare" if r["comparison"] else ""),
             r["days"], r["status"], f"{r['completed']}/{r['trials']}",
             _num(r["cost_usd"], 4)] for r in runs]
    if args.wide:
        headers = [*headers, "name", "started", "harness"]
        rows = [[*row, r["name"] or "", str(r["created_at"])[:19], r["harness"] or "litellm"]
                for r, row in zip(runs, rows)]
    print_table(f"runs in {args.db}", headers, rows)
    _stopped_hint(runs, args.db)
    _live_line(live)
    return 0


def _live_line(live: dict[str, Any] | None) -> None:
    if live is not None:
        import datetime as dt

        now = dt.datetime.now().strftime("%H:%M:%S")
        print(f"live: run {live.get('run_id')} is writing this file (pid {live.get('pid')}); "
              f"shown as committed at {now}")


def served(run: Mapping[str, Any]) -> bool:
    """Whether ``run`` was `vendbench serve`'s (MCP sessions, nothing to resume)."""
    if "harness" in run:
        return bool(run["harness"] == "mcp")
    try:
        return bool(json.loads(run.get("config_json") or "{}").get("harness") == "mcp")
    except ValueError:
        return False


def _stopped_hint(runs: Sequence[Mapping[str, Any]], db: str) -> None:
    for r in runs:
        if r["status"] != "stopped":
            continue
        if served(r):
            print(textwrap.fill(
                f"run {r['run_id']} (vendbench serve) stopped without finishing (its process "
                "was killed); its sessions' calls are kept, and a client starts a new world "
                "with a new session of vendbench serve", 80))
        else:
            print(textwrap.fill(
                f"run {r['run_id']} stopped without finishing (its process was killed or "
                "could not write); continue it with:", 80))
            print(f"  vendbench run --resume {r['run_id']} --db {db}")


def _num(value: Any, places: int = 2) -> str:
    if value is None:
        return "—"
    return f"{float(value):,.{places}f}"


def _jsonable(row: Mapping[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: (float(v) if isinstance(v, Decimal) else v) for k, v in row.items()
            if k not in skip}


def _stale(rows: Sequence[Mapping[str, Any]], live: dict[str, Any] | None
           ) -> list[Mapping[str, Any]]:
    """Rows still marked ``running`` that no process is running: every run's but the one
    that is writing the file now (``live``; a writer holds DuckDB's lock, so nothing else
    can be writing), whose process stopped without saying so (killed, a full disk).
    They are shown as ``stopped``."""
    writing = (live or {}).get("run_id")
    return [{**r, "status": "stopped"}
            if r.get("status") == "running" and r.get("run_id") != writing else r
            for r in rows]


def share_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"
