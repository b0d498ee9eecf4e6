"""The ``vendbench`` command line: parse arguments, call the library, print results.

Heavy imports (numpy, duckdb, litellm) happen inside the commands, so ``--help`` is
instant and commands that need no LLM never import one.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .errors import VendbenchError

EPILOG = """\
examples:
  vendbench baseline                         # order-up-to policy, seed 1, 180 days
  vendbench baseline --policy all --seeds 1 2 3 --days 180
  vendbench run --models openai/gpt-4.1-mini baseline/order-up-to --seeds 1 2 3 \\
                --budget 2 --total-budget 10
  vendbench run --panel nightly.toml
  vendbench runs
  vendbench leaderboard --run all --charts report/
  vendbench trend --db nightly.duckdb --fail-on-regression
  vendbench serve --days 30          # the world over MCP, for an outside agent harness

Amounts are the scenario's (CNY for autovend, EUR for network); budgets and
prices are USD.
"""

BOARD_EPILOG = """\
examples:
  vendbench leaderboard                               # the newest run
  vendbench leaderboard --run all --days 180          # every 180-day run of one cohort
  vendbench leaderboard --wide --db nightly.duckdb    # every column
  vendbench leaderboard --format json > board.json
  vendbench leaderboard --charts report/              # PNG + SVG charts, report.html
"""

TREND_EPILOG = """\
exit codes: 0, or 4 with --fail-on-regression when a model regressed.

examples:
  vendbench trend --db nightly.duckdb
  vendbench trend --db nightly.duckdb --last 7 --model openai/gpt-4.1-mini
  vendbench trend --db nightly.duckdb --format json --fail-on-regression
  vendbench trend --db nightly.duckdb --charts trend/
"""

RUN_EPILOG = """\
Models are litellm model strings (openai/..., anthropic/..., gemini/..., openrouter/...,
deepseek/..., ollama/..., hosted_vllm/...) or the in-process baseline/order-up-to and
baseline/oracle. API keys come from the providers' usual environment variables
(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) and are never stored or printed.

Budgets: before each request a conservative cost is reserved (its input tokens, as the
server is expected to count them, at the dearest input-side price + max output tokens at
the output price, with a margin); a request that does not fit the trial's or the run's
budget is not sent and the trial ends budget_exhausted.
A model without a known price does not run unless you give --price (or pass
--allow-unpriced, and no budget).

Context and cost: each request carries the system prompt and the newest whole
exchanges that fit --max-context-tokens. With the default --context-strategy block the
window only grows between evictions, so providers bill most input tokens at their
cached price (Anthropic gets cache_control markers, OpenAI a prompt_cache_key). Token
counts are calibrated against what each server reports, and a prompt a server refuses
as too long is shortened once and sent again; a trial that still cannot fit ends
context_overflow.

Trial statuses: completed; budget_exhausted, timeout, max_turns, agent_stopped,
bankrupt, context_overflow (model-side: they score 0 on the leaderboard); error (the
harness or the provider: kept apart, rerun by --resume); interrupted (Ctrl-C, SIGTERM).

Every request's reservation is committed to the DuckDB file, with all the trial did
before it, before the request is sent. Ctrl-C marks running trials 'interrupted'; after
that, a kill -9 or a crash, --resume RUN_ID continues each unfinished trial from its last
committed exchange, under its own id (requests in flight stay charged and are sent again);
--resume RUN_ID --restart runs them again from day 1 instead.

With many LLM trials in flight (32+), they run in worker processes (--processes): one
event loop tops out near 100 exchanges/s. The budget pool and the results file stay with
the scheduler; with --total-budget, workers need a per-trial --budget too.

examples:
  vendbench run --models openai/gpt-4.1-mini --seeds 1 2 3 --days 30 --budget 1
  vendbench run --models openai/my-model --api-base http://127.0.0.1:8000/v1 \\
                --price openai/my-model=0.5,1.5 --total-budget 5
  vendbench run --models openai/local --api-base http://127.0.0.1:8080/v1 \
                --allow-unpriced --max-context-tokens 8192 --max-output-tokens 512
  vendbench run --panel nightly.toml --db nightly.duckdb --json
  vendbench run --resume 20261130-015459-2efe
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
    base.add_argument("--policy", default="order-up-to", metavar="NAME",
                      help="which of the scenario's reference policies to run (autovend's "
                           "and network's: order-up-to, oracle); 'all' runs each "
                           "(default: order-up-to)")
    seeds = base.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=_non_negative, default=None, metavar="N",
                       help="trial seed: weather, demand noise, delivery delays (default 1)")
    seeds.add_argument("--seeds", type=_non_negative, nargs="+", metavar="N",
                       help="several trial seeds; prints a summary with mean, SD and CV")
    base.add_argument("--days", type=_days, default=None, metavar="D",
                      help="horizon in simulated days, 1-365 (default: the scenario's, 180 "
                           "for autovend, 30 for network)")
    base.add_argument("--scenario", default="autovend", metavar="S",
                      help="autovend (default) or network (Prosus-style)")
    worlds = base.add_mutually_exclusive_group()
    worlds.add_argument("--world-seed", type=_non_negative, default=None, metavar="W",
                        help="generate a different frozen world (default 2026, the shared "
                             "one). With VENDBENCH_WORLD_SALT set, every world is private")
    worlds.add_argument("--world-seeds", type=_non_negative, nargs="+", metavar="W",
                        help="several worlds: every policy × world × seed, and a summary "
                             "per world")
    base.add_argument("--json", action="store_true",
                      help="print one JSON object (with --seeds or --policy all: "
                           "{'trials': [...], 'summary': [...]})")
    base.set_defaults(func=_cmd_baseline)
    _run_parser(sub)
    runs = sub.add_parser("runs", help="list runs and their trials in a results database",
                          description="List the runs in a results database and, with --run, "
                                      "the trials of one run.")
    _db_flag(runs)
    runs.add_argument("--run", metavar="RUN_ID", help="show the trials of this run "
                      "('latest' for the newest)")
    runs.add_argument("--json", action="store_true", help="print JSON")
    runs.set_defaults(func=_cmd_runs)
    board = sub.add_parser(
        "leaderboard", help="rank models from a results database: tables, charts, report",
        description=_wrap("Rank the models of a run: terminal net assets (unfinished trials "
                          "count 0), growth, CV, API cost and efficiency, against the "
                          "baselines, and operational metrics, with bootstrap 95% confidence "
                          "intervals. Horizons, scenarios, worlds, starting cash, prompts and "
                          "tool sets are never mixed: one ranking is one cohort."),
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=BOARD_EPILOG)
    _db_flag(board)
    board.add_argument("--run", default="latest", metavar="RUN_ID",
                       help="a run id, 'latest' (default) or 'all' (each model's latest "
                            "attempt across the runs of the newest run's cohort; the other "
                            "cohorts are listed with the command that ranks each)")
    _cohort_flags(board)
    board.add_argument("--format", default="table",
                       choices=["table", "markdown", "csv", "json", "html"],
                       help="output format (html: a self-contained report)")
    board.add_argument("--wide", action="store_true",
                       help="table: every column (growth, CV, cached share, CNY/$, oracle "
                            "share, operations), wider than 80 characters")
    board.add_argument("--charts", metavar="DIR",
                       help="also write the charts (PNG and SVG) and report.html into DIR "
                            "(created if missing; files in it are replaced)")
    board.set_defaults(func=_cmd_leaderboard)
    trend = sub.add_parser(
        "trend", help="each model's score across runs (nights) of a cohort; regressions",
        description=_wrap("Per model and run of one cohort (the newest run's, or the one "
                          "--days and --scenario pick): completed/trials, mean net assets "
                          "with its 95% bootstrap CI, cost and API efficiency. A model "
                          "regresses when its latest run is worse than its previous one "
                          "beyond noise (the 95% CI of the differences of trials paired by "
                          "world, seed and repeat lies below 0; tested from 5 pairs), or its "
                          "share of failed trials rises by 20 percentage points or more."),
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=TREND_EPILOG)
    _db_flag(trend)
    trend.add_argument("--model", nargs="+", metavar="M", help="only these models")
    trend.add_argument("--last", type=_positive, metavar="N", help="only the last N runs")
    _cohort_flags(trend)
    trend.add_argument("--format", default="table",
                       choices=["table", "markdown", "csv", "json"], help="output format")
    trend.add_argument("--charts", metavar="DIR",
                       help="also write trend.png and trend.svg into DIR")
    trend.add_argument("--fail-on-regression", action="store_true",
                       help="exit 4 when any model regressed (for cron)")
    trend.set_defaults(func=_cmd_trend)
    _serve_parser(sub)
    return parser


SERVE_EPILOG = """\
Each MCP session plays one fresh world of --seed and is logged as a trial of this
server's run: model mcp/<the client's name from initialize, or --name>, its tool calls,
days and sales (no LLM exchanges: the client's model, and its cost, are outside
vendbench). After the horizon every call returns an error and the result is final; a
session that ends before it is recorded 'interrupted'. The leaderboard ranks these
trials beside API models of the same cohort (vendbench leaderboard --run all), with
their harness named.

A client configuration (stdio):
  {"mcpServers": {"vendbench": {"command": "vendbench",
      "args": ["serve", "--days", "30", "--db", "mcp.duckdb"]}}}

examples:
  vendbench serve --days 30 --db mcp.duckdb                  # stdio, for a local client
  vendbench serve --transport http --port 8765               # http://127.0.0.1:8765/mcp
  vendbench serve --transport http --host 0.0.0.0 --token-file ~/.vendbench-token
"""


def _serve_parser(sub: Any) -> None:
    serve = sub.add_parser(
        "serve", help="serve the world's tools over MCP (stdio or streamable HTTP)",
        description=_wrap("Serve the world to an MCP client: the same 18 tools, schemas, "
                          "validation and results as the JSON tools an LLM trial calls, the "
                          "daily report as a resource, and the system prompt's briefing as "
                          "the server's instructions."),
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=SERVE_EPILOG)
    serve.add_argument("--scenario", default="autovend", metavar="S",
                       help="autovend (default) or network (Prosus-style)")
    serve.add_argument("--seed", type=_non_negative, default=1, metavar="N",
                       help="trial seed of every session's world (default 1)")
    serve.add_argument("--world-seed", type=_non_negative, default=None, metavar="W",
                       help="frozen world (default 2026, the paper's)")
    serve.add_argument("--days", type=_days, default=None, metavar="D",
                       help="horizon, 1-365 (default: the scenario's, 180 for autovend, 30 "
                            "for network)")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                       help="stdio (default; the client starts the server) or streamable "
                            "HTTP at /mcp")
    serve.add_argument("--host", default="127.0.0.1",
                       help="http: address to bind (default 127.0.0.1; any other needs "
                            "a token)")
    serve.add_argument("--port", type=_port, default=8765, help="http: port (default 8765)")
    serve.add_argument("--token-env", metavar="NAME",
                       help="http: require 'Authorization: Bearer <token>', the token read "
                            "from environment variable NAME (never stored or printed)")
    serve.add_argument("--token-file", metavar="PATH",
                       help="http: the same, the token read from a file only you can read "
                            "(mode 600)")
    serve.add_argument("--token", help=argparse.SUPPRESS)   # refused: argv is public
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="http: also admit requests with this Host and Origin (e.g. "
                            "http://myhost:8765); by default only localhost names, against "
                            "DNS rebinding by web pages")
    serve.add_argument("--idle-timeout", type=float, metavar="SECONDS",
                       help="http: end a session that sends nothing this long (default "
                            "1800); its trial is recorded interrupted")
    serve.add_argument("--max-sessions", type=int, metavar="N",
                       help="http: sessions at once (default 32); more are refused")
    _db_flag(serve)
    serve.add_argument("--name", metavar="LABEL",
                       help="the trials' model label mcp/LABEL, instead of the client's name")
    serve.set_defaults(func=_cmd_serve)


def _port(text: str) -> int:
    value = _non_negative(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1-65535, got {value}")
    return value


def _cmd_serve(args: argparse.Namespace) -> int:
    from .serve import ServeConfig, serve

    if not args.verbose:        # the SDK logs a client's disconnect as a traceback
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
    from .environment import default_days

    serve(ServeConfig(scenario=args.scenario, seed=args.seed, world_seed=args.world_seed,
                      days=args.days or default_days(args.scenario),
                      transport=args.transport, host=args.host, port=args.port, db=args.db,
                      name=args.name, token=_serve_token(args),
                      allow_origins=tuple(args.allow_origin),
                      # the limits' defaults are ServeConfig's own (serve's constants)
                      **{k: v for k, v in (("idle_timeout_s", args.idle_timeout),
                                           ("max_sessions", args.max_sessions))
                         if v is not None}))
    return 0


def _serve_token(args: argparse.Namespace) -> str | None:
    """The bearer token ``serve`` requires, from an environment variable or a file: never
    from argv, which every local user sees in ``ps``."""
    import os
    import stat

    from .errors import ConfigError

    if args.token is not None:
        raise ConfigError("--token puts the token where every local user sees it (ps); use "
                          "--token-env NAME or --token-file PATH")
    if args.token_env and args.token_file:
        raise ConfigError("give --token-env or --token-file, not both")
    if args.token_env:
        token = os.environ.get(args.token_env, "")
        if not token.strip():
            raise ConfigError(f"--token-env {args.token_env}: that variable is not set or "
                              "empty")
        return token.strip()
    if args.token_file:
        try:
            mode = os.stat(args.token_file).st_mode
            token = open(args.token_file, encoding="utf-8").read().strip()
        except OSError as exc:
            raise ConfigError(f"--token-file {args.token_file}: {exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(f"--token-file {args.token_file} can be read by other users "
                              f"(mode {stat.S_IMODE(mode):o}); chmod 600 it")
        if not token:
            raise ConfigError(f"--token-file {args.token_file} is empty")
        return token
    return None


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, 79)


def _db_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="vendbench.duckdb", metavar="PATH",
                        help="results database (default ./vendbench.duckdb); a file a run "
                             "is writing is read as committed so far")


def _cohort_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=_days, metavar="D",
                        help="only runs of this horizon (the newest such run's cohort)")
    parser.add_argument("--scenario", metavar="S", help="only runs of this scenario")


def _run_parser(sub: Any) -> None:
    run = sub.add_parser(
        "run", help="run models x seeds x repeats as concurrent trials (LLMs via litellm)",
        description="Run a panel of models against the world, concurrently, within USD "
                    "budgets, logging every exchange to DuckDB.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=RUN_EPILOG)
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--models", nargs="+", metavar="M", help="model strings to run")
    which.add_argument("--panel", metavar="FILE.toml", help="a panel file (see README)")
    which.add_argument("--resume", metavar="RUN_ID",
                       help="finish a stopped run ('latest' for the newest) with its stored "
                            "config: finished trials are kept, the others continue from "
                            "their last committed exchange (LLM trials: the logged tool "
                            "calls are replayed, nothing paid for is asked again)")
    run.add_argument("--restart", action="store_true",
                     help="with --resume: run unfinished trials again from day 1, as new "
                          "attempts, instead of continuing them")
    run.add_argument("--seeds", type=_non_negative, nargs="+", metavar="S",
                     help="trial seeds (default 1)")
    run.add_argument("--world-seeds", type=_non_negative, nargs="+", metavar="W",
                     help="frozen worlds (default 2026, the paper's one world); trials are "
                          "models × worlds × seeds × repeats, compared by (world, seed). With "
                          "VENDBENCH_WORLD_SALT (or the panel's world_salt_env) set, every "
                          "world is private: the salt is never stored, its SHA-256 is")
    run.add_argument("--repeats", type=_positive, metavar="R", help="runs per model and seed")
    run.add_argument("--days", type=_days, metavar="D",
                     help="horizon, 1-365 (default: the scenario's, 180 for autovend, 30 for "
                          "network)")
    run.add_argument("--scenario", metavar="S",
                     help="autovend (default) or network (Prosus-style)")
    run.add_argument("--workers", type=_positive, metavar="W",
                     help="trials in flight at most (default 8)")
    run.add_argument("--processes", type=_positive, metavar="P",
                     help="processes running the LLM trials (default: one more than the "
                          "cores, at most one per 16 LLM trials in flight); budgets stay "
                          "exact")
    run.add_argument("--budget", type=_usd, metavar="USD", help="USD budget per trial")
    run.add_argument("--total-budget", type=_usd, metavar="USD",
                     help="USD budget for the whole run: one pool all trials draw from")
    run.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                     help="wall-clock limit per trial")
    run.add_argument("--max-turns", type=_positive, metavar="N",
                     help="LLM requests per trial at most")
    run.add_argument("--price", action="append", default=[],
                     metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
                     help="USD per million input and output tokens, and optionally cache "
                          "reads and writes (repeatable); overrides litellm's price map")
    llm = run.add_argument_group(
        "per-model settings",
        "These set every LLM model of the run; with --panel they override the panel's "
        "values.")
    llm.add_argument("--api-base", metavar="URL",
                     help="the endpoint to send requests to (an OpenAI-compatible server "
                          "for openai/..., e.g. http://127.0.0.1:8080/v1)")
    llm.add_argument("--max-output-tokens", type=_positive, metavar="N",
                     help="max output tokens per request (default 4096)")
    llm.add_argument("--max-context-tokens", type=_positive, metavar="N",
                     help="rolling-context limit in tokens, output included (default 60000)")
    llm.add_argument("--context-strategy", choices=["block", "sliding"],
                     help="block (default): when the window is full, drop the oldest "
                          "exchanges down to the low-water mark, then only append, so the "
                          "provider's prompt cache covers all but the newest exchange; "
                          "sliding: drop the oldest exchange on every request (for comparison)")
    llm.add_argument("--context-low-water", type=_share, metavar="SHARE",
                     help="block: share of the limit kept on eviction, 0.1-0.9 (default 0.5)")
    llm.add_argument("--no-prompt-caching", dest="prompt_caching", action="store_const",
                     const=False, default=None,
                     help="send no cache markers (Anthropic) and no prompt_cache_key "
                          "(OpenAI), for comparison")
    llm.add_argument("--tool-choice", choices=["auto", "required"],
                     help="tool_choice sent with every request (default auto); some "
                          "OpenAI-compatible servers ignore tools without it")
    llm.add_argument("--temperature", type=_temperature, metavar="T",
                     help="sampling temperature, 0-2 (default: the provider's)")
    llm.add_argument("--request-timeout", type=_seconds, metavar="SECONDS",
                     help="per request, before it counts as a timeout (default 120)")
    run.add_argument("--allow-unpriced", action="store_true",
                     help="run models without a known price (no costs, no budget)")
    run.add_argument("--db", default="vendbench.duckdb", metavar="PATH",
                     help="results database (default ./vendbench.duckdb)")
    run.add_argument("--name", metavar="NAME", help="a name for the run")
    run.add_argument("--json", action="store_true",
                     help="print one JSON object: run_id and its trials")
    run.set_defaults(func=_cmd_run)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value}")
    return value


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _usd(text: str) -> str:
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"a budget must be a positive amount, got {text}")
    return text


def _number(what: str, low: float, high: float, *, above_low: bool = False
            ) -> Callable[[str], float]:
    """An argparse type: a number from ``low`` (excluded if ``above_low``) to ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (low < value if above_low else low <= value) or not value <= high:
            raise argparse.ArgumentTypeError(
                f"expected {what} {'above' if above_low else 'from'} {low:g} up to {high:g}, "
                f"got {text}")
        return value

    return parse


_seconds = _number("a number of seconds", 0, 86_400, above_low=True)
_share = _number("a share of the limit", 0.1, 0.9)
_temperature = _number("a temperature", 0, 2)


def _days(text: str) -> int:
    value = _non_negative(text)
    if not 1 <= value <= 365:
        raise argparse.ArgumentTypeError(f"days must be 1-365, got {value}")
    return value


def _cmd_baseline(args: argparse.Namespace) -> int:
    from .environment import (SALT_ENV, currency, evaluate_policy, policy_names, scenario,
                              score_name)
    from .errors import ConfigError, unknown_name
    from .ui import DayProgress, print_table

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
        f"{args.scenario}: reference policies, {args.days} days ({currency(args.scenario)})"
        f"{private}",
        ["policy", "world", "seed", "status", score_name(args.scenario), "growth", "tool calls",
         "sim s", "wall s"],
        [[r["policy"], r["world_seed"], r["seed"], r["status"], f"{r['final_net_assets']:,.2f}",
          f"{r['growth']:+,.2f}", r["tool_calls"], f"{r['sim_seconds']:.2f}",
          f"{r['wall_seconds']:.2f}"] for r in records])
    if any(s["trials"] > 1 for s in summary):
        print_table("summary over seeds", ["policy", "world", "trials",
                                           f"mean {score_name(args.scenario)}", "SD", "CV"],
                    [[s["policy"], s["world_seed"], s["trials"],
                      f"{s['mean_net_assets']:,.2f}", f"{s['sd_net_assets']:,.2f}",
                      f"{s['cv']:.2%}"] for s in summary])
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from ._commands import run_command

    return run_command(args)


def _cmd_leaderboard(args: argparse.Namespace) -> int:
    from .leaderboard import Filters, build, render

    filters = Filters(days=args.days, scenario=args.scenario)
    board = build(args.db, args.run, filters)
    out = _output_dir(args.charts) if args.charts else None     # before any output
    print(render(board, args.format, wide=args.wide))
    if out is not None:
        from .leaderboard import build_trend, html_report, write_charts

        trend = build_trend(args.db, filters=filters)
        files = _writing(out, lambda: write_charts(board, out))
        report = out / "report.html"
        _writing(out, lambda: report.write_text(html_report(board, trend)))
        print(f"\nwrote {len(files)} chart files and {report}", file=sys.stderr)
    return 0


def _cmd_trend(args: argparse.Namespace) -> int:
    from .leaderboard import Filters, build_trend, render_trend

    trend = build_trend(args.db, models=args.model, last=args.last,
                        filters=Filters(days=args.days, scenario=args.scenario))
    out = _output_dir(args.charts) if args.charts else None
    print(render_trend(trend, args.format))
    if out is not None:
        from .leaderboard import write_trend_chart

        files = _writing(out, lambda: write_trend_chart(trend, out))
        print(f"\nwrote {', '.join(str(f) for f in files) or 'no chart (one run)'}",
              file=sys.stderr)
    if args.fail_on_regression and trend.regressions:
        print(f"vendbench: {len(trend.regressions)} regression(s): "
              + "; ".join(f"{r['model']} ({r['kind']})" for r in trend.regressions),
              file=sys.stderr)
        return 4
    return 0


def _output_dir(path: str) -> Any:
    """A directory for charts, made if missing; a clear error, before anything is
    printed, when it cannot be (a file by that name, no permission)."""
    from pathlib import Path

    from .errors import ConfigError

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--charts {path}: a file by that name exists; pass a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--charts {path}: cannot create it ({exc.strerror})") from None
    import tempfile

    try:                                    # what access() says is not enough for root
        with tempfile.NamedTemporaryFile(dir=out, prefix=".vendbench-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"--charts {path}: cannot write there ({exc.strerror}); pass "
                          "another directory") from None
    return out


def _writing(out: Any, write: Callable[[], Any]) -> Any:
    from .errors import ConfigError

    try:
        return write()
    except OSError as exc:
        raise ConfigError(f"--charts {out}: cannot write there "
                          f"({exc.strerror or exc}): pass another directory") from None


def _cmd_runs(args: argparse.Namespace) -> int:
    from ._commands import runs_command

    return runs_command(args)


def _summarise(records: list[dict]) -> list[dict]:
    """Mean, SD and CV over seeds, per policy and world."""
    out = []
    for policy, world in dict.fromkeys((r["policy"], r["world_seed"]) for r in records):
        values = [r["final_net_assets"] for r in records
                  if (r["policy"], r["world_seed"]) == (policy, world)]
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        out.append({"policy": policy, "world_seed": world, "trials": len(values),
                    "mean_net_assets": round(mean, 2), "sd_net_assets": round(sd, 2),
                    "cv": round(sd / mean, 4) if mean else None})
    return out


class _RedactingFilter(logging.Filter):
    """No secret reaches a log line, whoever logs it."""

    def filter(self, record: logging.LogRecord) -> bool:
        from ._secrets import redact

        record.msg = redact(record.getMessage())
        record.args = ()
        return True


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_RedactingFilter())
    for noisy in ("LiteLLM", "litellm", "httpx", "httpcore", "openai", "aiohttp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _is_duckdb_error(exc: BaseException) -> bool:
    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and isinstance(exc, duckdb.Error)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _setup_logging(args.verbose)
    try:
        return args.func(args)
    except VendbenchError as exc:
        from ._secrets import redact

        print(f"vendbench: error: {redact(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:             # `vendbench runs | head`: the reader has enough
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        if not _is_duckdb_error(exc):
            raise
        from .results._store import open_error

        # a damaged page can surface only when a query first reads it
        print(f"vendbench: error: {open_error(getattr(args, 'db', '?'), exc)}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vendbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
