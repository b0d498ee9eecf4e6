"""``vendbench arena``: two to four models compete for the same customers (design §23).
Flags to a run config with seats, the run, and the matches printed; the library does
the work."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ConfigError
from ._args import db_flag, HelpFormatter, days, positive, seconds, seed, usd

ARENA_EPILOG = """\
A match puts K operators (2-4) in one world: each has its own money, stock, machines
and notes at the same places, and each is scored alone (as in a single-agent trial;
an unfinished operator scores 0). Customers choose among every operator's offer by
the world's own demand rule: in the network world (the default) each buys the cheapest
acceptable unit from any machine with stock; in AutoVend (--scenario autovend) a
rival's listings at a site are alternatives in its logit. Operators work the same day
at once: the night runs when every operator still playing has ended the day. Only three
tools cross between operators: see_competitors (a place's other machines as a customer
saw them this morning), email_operator and pay_operator (both arrive overnight). An
operator that stops (budget, turn cap, error) leaves its machines idle; the match goes
on.

Fairness: one match per seed; the seats rotate one place a seed, so over K seeds (or a
multiple) each model takes each seat equally often (a Latin square). All operators of
a seed meet the same customers and suppliers (common random numbers). A model plays
itself only with --mirror (identical operators: their mean scores by seat should
agree within noise).

Budgets: --trial-budget caps each operator's trial, --budget the whole arena (every
match); a match starts only when the total can cover all its operators' budgets.
--max-forecast refuses an arena whose forecast is above it. Every request is reserved
and committed before it is sent, as in vendbench run.

--resume RUN_ID continues each unfinished match where it stopped, all its operators in
step: each LLM operator's logged tool calls are replayed day by day beside the others
(nothing paid for is asked again; requests in flight stay charged and are sent again),
each policy plays again from day 1, and an operator that had already finished replays
until it left. Finished matches are kept. --resume RUN_ID --restart plays unfinished
matches again from day 1 instead, as new attempts (what they spent stays counted).

Results: vendbench leaderboard --arena (mean score, head-to-head wins paired by match,
valid intervals); arena runs never mix with single-agent rankings.

examples:
  vendbench arena baseline/oracle baseline/order-up-to --seeds 1 2 3 4
  vendbench arena baseline/order-up-to baseline/order-up-to --mirror --seeds 1 2 3 4 5 6
  vendbench arena baseline/oracle baseline/order-up-to --scenario autovend --days 60
  vendbench arena openai/gpt-4.1-mini anthropic/claude-sonnet-4-5 baseline/order-up-to \\
                  --seeds 1 2 3 --days 30 --trial-budget 10 --budget 40
  vendbench arena --resume latest
"""


def add(sub: Any) -> None:
    from .run import model_flags

    arena = sub.add_parser(
        "arena", help="2-4 models compete for the same customers in one world",
        description="Run matches: two to four models operate in one world at once, "
                    "competing for the same customers, each scored alone; seats rotate "
                    "over the seeds.", formatter_class=HelpFormatter, epilog=ARENA_EPILOG)
    arena.add_argument("models", nargs="*", metavar="MODEL",
                       help="2-4 model strings (litellm, or baseline/...), one per seat")
    arena.add_argument("--resume", metavar="RUN_ID",
                       help="play the unfinished matches of a stopped arena run again "
                            "('latest' for the newest run)")
    arena.add_argument("--restart", action="store_true",
                       help="with --resume: play the unfinished matches again from day 1, "
                            "as new attempts, instead of continuing them")
    arena.add_argument("--mirror", action="store_true",
                       help="allow a model more than once (identical operators)")
    arena.add_argument("--scenario", metavar="S", help="a scenario with an arena: network "
                                                       "(default) or autovend")
    arena.add_argument("--days", type=days, metavar="D",
                       help="simulated days (default: the scenario's, 30 for network)")
    arena.add_argument("--seeds", type=seed, nargs="+", metavar="S",
                       help="one match per seed; a multiple of the number of models "
                            "(default 1..K)")
    arena.add_argument("--world-seeds", type=seed, nargs="+", metavar="W",
                       help="frozen worlds (default: the scenario's one)")
    arena.add_argument("--budget", dest="total_budget", type=usd, metavar="USD",
                       help="USD budget of the whole arena (every match)")
    arena.add_argument("--trial-budget", dest="budget", type=usd, metavar="USD",
                       help="USD budget of each operator's trial")
    arena.add_argument("--max-forecast", type=usd, metavar="USD",
                       help="refuse an arena whose cost forecast is above USD")
    arena.add_argument("--timeout", type=seconds, metavar="SECONDS",
                       help="wall-clock limit per operator's trial")
    arena.add_argument("--max-turns", type=positive, metavar="N",
                       help="LLM requests per operator's trial")
    arena.add_argument("--workers", type=positive, metavar="W",
                       help="trials in flight (a match of K operators takes K; default 8)")
    arena.add_argument("--price", action="append", default=[],
                       metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
                       help="USD per million tokens for a model litellm does not price")
    arena.add_argument("--allow-unpriced", action="store_true",
                       help="run a model with no known price (no budget can apply)")
    db_flag(arena, writes=True)
    arena.add_argument("--name", metavar="NAME", help="a name for the run")
    arena.add_argument("--json", action="store_true",
                       help="print the arena leaderboard of the run as JSON")
    model_flags(arena)
    arena.set_defaults(func=command, panel=None, processes=None, repeats=None)


def command(args: argparse.Namespace) -> int:
    if args.restart and not args.resume:
        raise ConfigError("--restart goes with --resume RUN_ID (it plays that arena's "
                          "unfinished matches again from day 1)")
    if args.resume:
        if args.models or args.mirror:
            raise ConfigError("--resume plays a stored arena run with its own models; drop "
                              "the model names" + (" and --mirror" if args.mirror else ""))
        config, resume = _resume(args)
    else:
        config, resume = config_from_args(args), None
    from .run import with_progress

    result = with_progress(config, args.db, resume=resume, restart=args.restart,
                           quiet=args.json,
                           command="arena", unit="matches")
    if result is None:
        return 130
    from ..leaderboard import build_arena, render_arena
    from .run import _print_warnings

    payload = result.as_json()
    board = build_arena(args.db, result.run_id)
    if args.json:
        print(json.dumps({"run_id": result.run_id, "status": result.status,
                          "total_cost_usd": payload["total_cost_usd"],
                          "trials": payload["trials"], "matches": _seats(args.db,
                                                                         result.run_id),
                          "arena": board.as_json()}, default=str))
    else:
        _print_matches(args.db, result.run_id)
        print(render_arena(board))
        spent = payload["total_cost_usd"]
        print(("spent: unknown (no model priced)" if spent is None else
               f"spent ${spent:.4f}") + f"; results in {args.db} (vendbench leaderboard "
              f"--arena --db {args.db}; vendbench view --db {args.db})")
    _print_warnings(payload["warnings"])
    errors = [t for t in payload["trials"] if t["status"] == "error"]
    if errors:
        print(f"vendbench: {len(errors)} operator trial(s) ended in a harness or provider "
              f"error; play their matches again with: vendbench arena --resume "
              f"{result.run_id} --db {args.db}", file=sys.stderr)
        return 3
    return 0


def config_from_args(args: argparse.Namespace) -> Any:
    """The arena's run config: its models once each, their seats, the seeds."""
    from ..orchestrator import arena_problem
    from .run import config_from_args as run_config

    scenario = args.scenario or "network"
    seeds = args.seeds or list(range(1, len(args.models) + 1))
    problem = arena_problem(scenario, args.models, len(seeds), args.mirror)
    if problem:
        raise ConfigError(problem)
    seats = list(args.models)
    args.models = list(dict.fromkeys(seats))
    return run_config(args, {"seats": seats, "mirror": args.mirror, "scenario": scenario,
                             "seeds": seeds})


def _resume(args: argparse.Namespace) -> tuple[Any, str]:
    from .run import _resume_config

    # the flags as arena spells them, for a refusal that names what the user gave
    args._flags = {"total_budget": "--budget", "budget": "--trial-budget"}
    config, run_id = _resume_config(args, arena=True)
    if not config.seats:
        raise ConfigError(f"run {run_id} is not an arena run: resume it with vendbench run "
                          f"--resume {run_id}")
    return config, run_id


def _seats(db: str, run_id: str) -> list[dict[str, Any]]:
    """Each match's operators, seat by seat, with their trials' outcomes."""
    from ..results import Store

    with Store(db, read_only=True) as store:
        return store.match_seats([run_id])


def _print_matches(db: str, run_id: str) -> None:
    from ..ui import print_table

    seats = _seats(db, run_id)
    rows = [[s["seed"], s["seat"], s["operator"], s["model"], s["status"],
             "—" if s["score"] is None else f"{s['score']:,.2f}",
             "—" if s["cost_usd"] is None else f"{s['cost_usd']:,.4f}"] for s in seats]
    print_table(f"arena {run_id}: matches", ["seed", "seat", "operator", "model", "status",
                                             "score", "cost USD"], rows)
