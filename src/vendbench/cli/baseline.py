"""``vendbench baseline``: the reference policies, offline."""

from __future__ import annotations

import argparse
import json
import os
import statistics
from typing import Any

from .._text import days as days_text
from ..environment import DEFAULT_SCENARIO
from ._args import HelpFormatter, days, seed


EPILOG = """\
examples:
  vendbench baseline                        # order-up-to, seed 1, 180 days
  vendbench baseline --policy all --seeds 1 2 3 --days 180
  vendbench baseline --scenario network --policy oracle --json
  vendbench baseline --world-seeds 7 8 --seeds 1 2    # held-out worlds
"""


def add(sub: Any) -> None:
    base = sub.add_parser(
        "baseline", help="run the in-process reference policies (offline, no LLM)",
        description="Run a reference policy through the same 18 tools an agent uses, and "
                    "report terminal net assets. 'order-up-to' is the paper's rule-based "
                    "inventory control and sees only what an agent sees; 'oracle' plans "
                    "with the hidden demand parameters (an upper reference); 'idle' only "
                    "ends its days (doing nothing: the 0 of every share of the oracle's "
                    "gain).",
        formatter_class=HelpFormatter, epilog=EPILOG)
    base.add_argument("--policy", default="order-up-to", metavar="NAME",
                      help="which of the scenario's reference policies to run (autovend's "
                           "and network's: order-up-to, oracle, idle); 'all' runs each "
                           "(default: order-up-to)")
    seeds = base.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=seed, default=None, metavar="N",
                       help="trial seed: weather, demand noise, delivery delays (default 1)")
    seeds.add_argument("--seeds", type=seed, nargs="+", metavar="N",
                       help="several trial seeds; prints a summary with mean, SD and CV")
    base.add_argument("--days", type=days, default=None, metavar="D",
                      help="horizon in simulated days, 1-365 (default: the scenario's, 180 "
                           "for autovend, 30 for network)")
    base.add_argument("--scenario", default=DEFAULT_SCENARIO, metavar="S",
                      help="autovend (default) or network (Prosus-style)")
    worlds = base.add_mutually_exclusive_group()
    worlds.add_argument("--world-seed", type=seed, default=None, metavar="W",
                        help="generate a different frozen world (default 2026, the shared "
                             "one). With VENDBENCH_WORLD_SALT set, every world is private")
    worlds.add_argument("--world-seeds", type=seed, nargs="+", metavar="W",
                        help="several worlds: every policy × world × seed, and a summary "
                             "per world")
    base.add_argument("--json", action="store_true",
                      help="print one JSON object (with --seeds or --policy all: "
                           "{'trials': [...], 'summary': [...]})")
    base.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from .._heap import settle
    from ..environment import (SALT_ENV, currency, evaluate_policy, policy_names, scenario,
                              score_name)
    from ..errors import ConfigError, unknown_name
    from ..ui import DayProgress, print_table

    args.days = args.days or scenario(args.scenario).default_days   # a clear error, too
    known = policy_names(args.scenario)
    if args.policy != "all" and args.policy.removeprefix("baseline/") not in known:
        raise ConfigError(unknown_name(f"{args.scenario} policy", args.policy,
                                       (*known, "all")))
    policies = list(known) if args.policy == "all" else \
        [args.policy.removeprefix("baseline/")]
    seeds = args.seeds or [1 if args.seed is None else args.seed]
    worlds = args.world_seeds or [args.world_seed]
    salt = os.environ.get(SALT_ENV) or None       # never printed
    runs = [(p, w, s) for w in worlds for p in policies for s in seeds]
    records = []
    settle()                # the worlds' code is loaded: out of the collector's walks
    with DayProgress(total_days=args.days * len(runs), enabled=not args.json) as progress:
        for policy, world, seed in runs:
            progress.start(f"{policy} seed {seed}" + (f" world {world}" if world else ""))
            records.append(evaluate_policy(policy, seed=seed, days=args.days,
                                           scenario=args.scenario, world_seed=world,
                                           world_salt=salt, on_day=progress.advance))
    summary = _summarise(records)
    if args.json:
        single = len(records) == 1
        print(json.dumps(records[0] if single else {"trials": records, "summary": summary}))
        return 0
    private = " (private worlds)" if salt else ""
    print_table(
        f"{args.scenario}: reference policies, {days_text(args.days)} ({currency(args.scenario)})"
        f"{private}",
        ["policy", "world", "seed", "status", score_name(args.scenario), "growth", "tool calls",
         "sim s", "wall s"],
        [[r["policy"], r["world_seed"], r["seed"], r["status"], f"{r['score']:,.2f}",
          f"{r['growth']:+,.2f}", r["tool_calls"], f"{r['sim_seconds']:.2f}",
          f"{r['wall_seconds']:.2f}"] for r in records])
    if any(s["trials"] > 1 for s in summary):
        print_table("summary over seeds", ["policy", "world", "trials",
                                           f"mean {score_name(args.scenario)}", "SD", "CV"],
                    [[s["policy"], s["world_seed"], s["trials"],
                      f"{s['mean_score']:,.2f}", f"{s['sd_score']:,.2f}",
                      f"{s['cv']:.2%}"] for s in summary])
    return 0


def _summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean, SD and CV over seeds, per policy and world."""
    out = []
    for policy, world in dict.fromkeys((r["policy"], r["world_seed"]) for r in records):
        values = [r["score"] for r in records
                  if (r["policy"], r["world_seed"]) == (policy, world)]
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        out.append({"policy": policy, "world_seed": world, "trials": len(values),
                    "mean_score": round(mean, 2), "sd_score": round(sd, 2),
                    "cv": round(sd / mean, 4) if mean else None})
    return out
