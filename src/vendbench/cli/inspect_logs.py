"""``vendbench import-inspect``: Inspect AI's logs of vendbench's tasks as trials; and
``vendbench export-inspect``: vendbench's runs as Inspect logs, for ``inspect view``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._args import HelpFormatter, db_flag, path, wrap

EPILOG = """\
Each log becomes a run of model inspect/<model> (its harness: Inspect), a trial per
sample, paired with every other trial of the same world, seed and epoch. A sample's tool
calls are replayed through its world and must give the answers and the score the log
holds; the replay writes the day rows and tool calls vendbench's own runs keep. All logs
are checked before anything is written, then written in one transaction; a log already
imported is skipped. Then rank them: leaderboard --run all.

examples:
  inspect eval vendbench/autovend --model openai/gpt-4.1-mini -T days=30
  vendbench import-inspect logs/*.eval --db panel.duckdb

Needs the optional extra: pip install 'vendbench[inspect]'.
"""


def add(sub: Any) -> None:
    cmd = sub.add_parser(
        "import-inspect", help="import Inspect AI logs of vendbench's tasks as trials",
        description=wrap("Read Inspect eval logs of the tasks vendbench/autovend and "
                         "vendbench/network into a results file, so the leaderboard, the "
                         "trend and the viewer rank and show them beside vendbench's own "
                         "runs."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    cmd.add_argument("logs", nargs="+", metavar="LOG", type=path,
                     help="Inspect log files (.eval or .json)")
    db_flag(cmd, writes=True)
    cmd.add_argument("--json", action="store_true", help="print what was imported as JSON")
    cmd.set_defaults(func=command)


EXPORT_EPILOG = """\
One log a run and model (an Inspect eval is one task and one model), a sample a trial:
its conversation as the model saw it (an in-process policy's tool calls and results),
scored as vendbench's Inspect task scores (world_score: the scenario's score, 0 unless
the trial completed, its share of the oracle's gain in the metadata). Open them with
inspect view --log-dir OUT.

examples:
  vendbench export-inspect logs/                      # the newest run
  vendbench export-inspect logs/ --run all --db nightly.duckdb
  inspect view --log-dir logs/

Needs the optional extra: pip install 'vendbench[inspect]'.
"""


def add_export(sub: Any) -> None:
    cmd = sub.add_parser(
        "export-inspect", help="write vendbench's runs as Inspect AI logs, for inspect view",
        description=wrap("Write the trials of a run (or of every run) in a results file "
                         "as Inspect eval logs, so that inspect view shows them as it "
                         "shows Inspect's own."),
        formatter_class=HelpFormatter, epilog=EXPORT_EPILOG)
    cmd.add_argument("out", metavar="OUT", type=path, help="the folder to write the logs into")
    db_flag(cmd)
    cmd.add_argument("--run", default="latest", metavar="RUN_ID",
                     help="a run id, 'latest' (default) or 'all'")
    cmd.set_defaults(func=export_command)


def export_command(args: argparse.Namespace) -> int:
    from ..inspect import export_runs

    written = export_runs(args.db, args.run, args.out)
    for path in written:
        print(path)
    print(f"wrote {len(written)} log(s); open them with: inspect view --log-dir {args.out}",
          file=sys.stderr)
    return 0


def command(args: argparse.Namespace) -> int:
    from ..inspect import ImportedRun, import_logs
    from ..ui import print_table

    def read(run: ImportedRun) -> None:           # replaying a long trial takes a second
        print(f"checked {run.path}: {len(run.trials)} trial(s) replayed", file=sys.stderr)

    runs = import_logs(args.logs, args.db, on_read=read)
    if args.json:
        print(json.dumps([r.as_json() for r in runs], indent=2))
        return 0
    rows = []
    for r in runs:
        s = r.as_json()
        rows.append([r.run_id, r.task, r.model, s["trials"], s["completed"],
                     "—" if s["mean_score"] is None else f"{s['mean_score']:,.2f}",
                     r.skipped or "imported"])
    print_table(f"{len(runs)} Inspect log(s) into {args.db}",
                ["run", "task", "model", "trials", "completed", "mean score", ""], rows)
    print(f"rank them: vendbench leaderboard --db {args.db} --run all")
    return 0
