"""The ``vendbench`` command line: parse arguments, call the library, print results.

Heavy imports (numpy, duckdb, litellm) happen inside the commands, so ``--help`` is
instant and commands that need no LLM never import one.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from collections.abc import Sequence

from . import __version__
from .errors import VendbenchError

EPILOG = """\
examples:
  vendbench baseline                         # order-up-to policy, seed 1, 180 days
  vendbench baseline --policy all --seeds 1 2 3 --days 180
  vendbench baseline --policy oracle --seed 2 --json

Amounts are CNY. Reference policies run offline, in-process, in about a second each.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vendbench",
        description="Evaluate LLM agents on long-horizon vending-business operations "
                    "(the AutoVend world: 20 machines, one warehouse, 180 days).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"vendbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    base = sub.add_parser(
        "baseline", help="run the in-process reference policies (offline, no LLM)",
        description="Run a reference policy through the same 18 tools an agent uses, and "
                    "report terminal net assets. 'order-up-to' is the paper's rule-based "
                    "inventory control and sees only what an agent sees; 'oracle' plans "
                    "with the hidden demand parameters (an upper reference).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    base.add_argument("--policy", default="order-up-to",
                      choices=["order-up-to", "oracle", "all"],
                      help="which policy to run; 'all' runs both (default: order-up-to)")
    seeds = base.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=_non_negative, default=None, metavar="N",
                       help="trial seed: weather, demand noise, delivery delays (default 1)")
    seeds.add_argument("--seeds", type=_non_negative, nargs="+", metavar="N",
                       help="several trial seeds; prints a summary with mean, SD and CV")
    base.add_argument("--days", type=_days, default=180, metavar="D",
                      help="horizon in simulated days, 1-365 (default 180)")
    base.add_argument("--scenario", default="autovend", metavar="S",
                      help="world to run (default autovend)")
    base.add_argument("--world-seed", type=_non_negative, default=None, metavar="N",
                      help="generate a different frozen world (default: the shared one)")
    base.add_argument("--json", action="store_true",
                      help="print one JSON object (with --seeds or --policy all: "
                           "{'trials': [...], 'summary': [...]})")
    base.set_defaults(func=_cmd_baseline)
    return parser


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value}")
    return value


def _days(text: str) -> int:
    value = _non_negative(text)
    if not 1 <= value <= 365:
        raise argparse.ArgumentTypeError(f"days must be 1-365, got {value}")
    return value


def _cmd_baseline(args: argparse.Namespace) -> int:
    from .environment import SCENARIOS
    from .errors import ConfigError, unknown_name
    from .providers.policies import evaluate_policy
    from .ui import DayProgress, print_table

    if args.scenario not in SCENARIOS:
        raise ConfigError(unknown_name("scenario", args.scenario, SCENARIOS))
    policies = ["order-up-to", "oracle"] if args.policy == "all" else [args.policy]
    seeds = args.seeds or [1 if args.seed is None else args.seed]
    runs = [(p, s) for p in policies for s in seeds]
    records = []
    with DayProgress(total_days=args.days * len(runs), enabled=not args.json) as progress:
        for policy, seed in runs:
            progress.start(f"{policy} seed {seed}")
            records.append(evaluate_policy(policy, seed=seed, days=args.days,
                                           scenario=args.scenario, world_seed=args.world_seed,
                                           on_day=progress.advance))
    summary = _summarise(records)
    if args.json:
        single = len(records) == 1
        print(json.dumps(records[0] if single else {"trials": records, "summary": summary}))
        return 0
    print_table(
        f"{args.scenario}: reference policies, {args.days} days (CNY)",
        ["policy", "seed", "status", "final net assets", "growth", "tool calls", "sim s",
         "wall s"],
        [[r["policy"], r["seed"], r["status"], f"{r['final_net_assets']:,.2f}",
          f"{r['growth']:+,.2f}", r["tool_calls"], f"{r['sim_seconds']:.2f}",
          f"{r['wall_seconds']:.2f}"] for r in records])
    if any(s["trials"] > 1 for s in summary):
        print_table("summary over seeds", ["policy", "trials", "mean net assets", "SD", "CV"],
                    [[s["policy"], s["trials"], f"{s['mean_net_assets']:,.2f}",
                      f"{s['sd_net_assets']:,.2f}", f"{s['cv']:.2%}"] for s in summary])
    return 0


def _summarise(records: list[dict]) -> list[dict]:
    out = []
    for policy in dict.fromkeys(r["policy"] for r in records):
        values = [r["final_net_assets"] for r in records if r["policy"] == policy]
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        out.append({"policy": policy, "trials": len(values), "mean_net_assets": round(mean, 2),
                    "sd_net_assets": round(sd, 2), "cv": round(sd / mean, 4) if mean else None})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except VendbenchError as exc:
        print(f"vendbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vendbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
