"""``vendbench run``: flags to config, the live display, signals, and printing. The
library does the work; this only connects it."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from .._secrets import redact
from .._text import count, printable
from ..errors import ConfigError
from ._args import (HelpFormatter, days, db_flag, path, positive, run_until_signalled,
                    seconds, seed, share, temperature, top_p, usd)
from .runs import served, share_text

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

Before its file exists, a run checks each model string and endpoint (one line per
problem, nothing sent) and prints its cost forecast: per model what a trial of an
operator as busy as baseline/order-up-to costs at the model's prices, strategy and
window, what one request reserves, and the run's total (docs/costs.md has its accuracy).
--max-forecast USD refuses a run forecast above USD; vendbench check shows the same
without running.

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
  vendbench run --models openai/gpt-4.1-mini --seeds 1 2 3 --days 30 --budget 2
  vendbench run --models anthropic/claude-sonnet-4-5 --days 30 --max-forecast 10
  vendbench run --models openai/my-model --api-base http://127.0.0.1:8000/v1 \\
                --price openai/my-model=0.5,1.5 --days 30 --total-budget 10
  vendbench run --models openai/local --api-base http://127.0.0.1:8080/v1 \\
                --allow-unpriced --max-context-tokens 8192 \\
                --max-output-tokens 512
  vendbench run --panel examples/nightly.toml --db nightly.duckdb --json
  vendbench run --resume 20261130-015459-2efe
"""

# flags that set a key of every LLM model of the run (with --panel too: they override it)
MODEL_FLAGS = (("api_base", "api_base"), ("max_output_tokens", "max_output_tokens"),
               ("max_context_tokens", "max_context_tokens"),
               ("context_strategy", "context_strategy"),
               ("context_low_water", "context_low_water"), ("tool_choice", "tool_choice"),
               ("temperature", "temperature"), ("top_p", "top_p"),
               ("sampling_seed", "sampling_seed"), ("request_timeout", "request_timeout_s"),
               ("prompt_caching", "prompt_caching"), ("reasoning_effort", "reasoning_effort"),
               ("thinking_budget", "thinking_budget_tokens"))


def add(sub: Any) -> None:
    run = sub.add_parser(
        "run", help="run models x seeds x repeats as concurrent trials (LLMs via litellm)",
        description="Run a panel of models against the world, concurrently, within USD "
                    "budgets, logging every exchange to DuckDB.",
        formatter_class=HelpFormatter, epilog=RUN_EPILOG)
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--models", nargs="+", metavar="M", help="model strings to run")
    which.add_argument("--panel", metavar="FILE.toml", type=path,
                       help="a panel file: its keys and an example in docs/guide.md "
                            "(examples/nightly.toml)")
    which.add_argument("--resume", metavar="RUN_ID",
                       help="finish a stopped run ('latest' for the newest) with its stored "
                            "config: finished trials are kept, the others continue from "
                            "their last committed exchange (LLM trials: the logged tool "
                            "calls are replayed, nothing paid for is asked again)")
    run.add_argument("--restart", action="store_true",
                     help="with --resume: run unfinished trials again from day 1, as new "
                          "attempts, instead of continuing them")
    run.add_argument("--seeds", type=seed, nargs="+", metavar="S",
                     help="trial seeds (default 1)")
    run.add_argument("--world-seeds", type=seed, nargs="+", metavar="W",
                     help="frozen worlds (default 2026, the paper's one world); trials are "
                          "models × worlds × seeds × repeats, compared by (world, seed). With "
                          "VENDBENCH_WORLD_SALT (or the panel's world_salt_env) set, every "
                          "world is private: the salt is never stored, its SHA-256 is")
    run.add_argument("--repeats", type=positive, metavar="R", help="runs per model and seed")
    run.add_argument("--days", type=days, metavar="D",
                     help="horizon, 1-365 (default: the scenario's, 180 for autovend, 30 for "
                          "network)")
    run.add_argument("--scenario", metavar="S",
                     help="autovend (default) or network (Prosus-style)")
    run.add_argument("--workers", type=positive, metavar="W",
                     help="trials in flight at most (default 8)")
    run.add_argument("--processes", type=positive, metavar="P",
                     help="processes running the LLM trials (default: one a core, "
                          "at most one per 16 LLM trials in flight); budgets stay "
                          "exact")
    run.add_argument("--budget", type=usd, metavar="USD", help="USD budget per trial")
    run.add_argument("--total-budget", type=usd, metavar="USD",
                     help="USD budget for the whole run: one pool all trials draw from")
    run.add_argument("--max-forecast", type=usd, metavar="USD",
                     help="refuse to start when the run's cost forecast is above USD")
    run.add_argument("--timeout", type=seconds, metavar="SECONDS",
                     help="wall-clock limit per trial")
    run.add_argument("--max-turns", type=positive, metavar="N",
                     help="LLM requests per trial at most")
    run.add_argument("--price", action="append", default=[],
                     metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
                     help="USD per million input and output tokens, and optionally cache "
                          "reads and writes (repeatable); overrides litellm's price map")
    model_flags(run, panel=True)
    run.add_argument("--allow-unpriced", action="store_true",
                     help="run models without a known price (no costs, no budget)")
    db_flag(run, writes=True)
    run.add_argument("--name", metavar="NAME", help="a name for the run")
    run.add_argument("--json", action="store_true",
                     help="print one JSON object: run_id and its trials")
    run.set_defaults(func=command)


def model_flags(parser: argparse.ArgumentParser, panel: bool = False) -> None:
    """The per-model settings, shared by ``run``, ``compare`` and ``arena`` (``panel``:
    the command takes --panel, whose values they override)."""
    llm = parser.add_argument_group(
        "per-model settings",
        "These set every LLM model of the run"
        + ("; with --panel they override the panel's values." if panel else "."))
    llm.add_argument("--api-base", metavar="URL",
                     help="the endpoint to send requests to (an OpenAI-compatible server "
                          "for openai/..., e.g. http://127.0.0.1:8080/v1)")
    llm.add_argument("--max-output-tokens", type=positive, metavar="N",
                     help="max output tokens per request (default 4096)")
    llm.add_argument("--max-context-tokens", type=positive, metavar="N",
                     help="rolling-context limit in tokens, output included (default 60000)")
    llm.add_argument("--context-strategy", choices=["block", "sliding", "compact"],
                     help="block (default): when the window is full, drop the oldest "
                          "exchanges down to the low-water mark, then only append, so the "
                          "provider's prompt cache covers all but the newest exchange; "
                          "sliding: drop the oldest exchange on every request (for "
                          "comparison); compact: as block, but first the model writes a "
                          "summary of what leaves, which takes its place")
    llm.add_argument("--context-low-water", type=share, metavar="SHARE",
                     help="block: share of the limit kept on eviction, 0.1-0.9 (default 0.5)")
    llm.add_argument("--no-prompt-caching", dest="prompt_caching", action="store_const",
                     const=False, default=None,
                     help="send no cache markers (Anthropic) and no prompt_cache_key "
                          "(OpenAI), for comparison")
    llm.add_argument("--tool-choice", choices=["auto", "required"],
                     help="tool_choice sent with every request (default auto); some "
                          "OpenAI-compatible servers ignore tools without it")
    llm.add_argument("--temperature", type=temperature, metavar="T",
                     help="sampling temperature, 0-2 (default: the provider's)")
    llm.add_argument("--top-p", type=top_p, metavar="P",
                     help="nucleus sampling, above 0 up to 1 (default: the provider's)")
    llm.add_argument("--sampling-seed", type=int, metavar="N",
                     help="the provider's sampling seed (OpenAI's seed; not the trials' "
                          "--seeds, which draw the world); dropped where a provider has "
                          "none. Like temperature, part of the model's name")
    llm.add_argument("--reasoning-effort", metavar="EFFORT",
                     choices=["none", "minimal", "low", "medium", "high", "xhigh"],
                     help="litellm's reasoning_effort: thinking on for models that reason "
                          "(docs/reasoning.md says what each provider makes of it)")
    llm.add_argument("--thinking-budget", type=positive, metavar="TOKENS",
                     help="tokens a request may think (Anthropic, Gemini 2.5); below "
                          "--max-output-tokens")
    llm.add_argument("--request-timeout", type=seconds, metavar="SECONDS",
                     help="per request, before it counts as a timeout (default 120)")


def command(args: argparse.Namespace) -> int:
    if args.restart and not args.resume:
        raise ConfigError("--restart goes with --resume RUN_ID (it reruns that run's "
                          "unfinished trials from day 1)")
    if args.resume:
        config, resume = _resume_config(args)
    else:
        config, resume = config_from_args(args), None
    result = with_progress(config, args.db, resume=resume, restart=args.restart,
                           quiet=args.json)
    if result is None:
        return 130
    payload = result.as_json()
    if args.json:
        print(json.dumps(payload))
        _print_warnings(payload["warnings"])
    else:
        _print_run(payload, result.pool, args.db, config.scenario)
    errors = [t for t in payload["trials"] if t["status"] == "error"]
    if errors:
        fixable = [t for t in errors if t.get("resumable", True)]
        print(f"vendbench: {count(len(errors), 'trial')} ended in a harness or provider "
              "error; they are kept apart from model failures.", file=sys.stderr)
        if fixable:
            which = "them" if len(fixable) == len(errors) else f"the {len(fixable)} that may succeed"
            print(f"vendbench: rerun {which} with: vendbench run --resume {payload['run_id']} "
                  f"--db {args.db}", file=sys.stderr)
        stuck = len(errors) - len(fixable)
        if stuck:
            print(f"vendbench: {'that one' if stuck == len(errors) == 1 else count(stuck, 'trial')}"
                  " cannot succeed as sent (a bad model string or setting, a request that "
                  "cannot be encoded, or a server that fails the same way on the same "
                  "request): a resume would send the same request again. Fix the model, "
                  "its settings or the server and start a new run.", file=sys.stderr)
        return 3
    return 0


def with_progress(config: Any, db: str, *, resume: str | None, restart: bool, quiet: bool,
                  command: str = "run", unit: str = "trials") -> Any:
    """Run (or resume) ``config`` into ``db`` with the live display (``quiet``: none),
    until it ends or a signal stops it: its ``RunResult``, or None once the interruption
    and the command that finishes it are printed."""
    from ..orchestrator import execute
    from ..ui import RunProgress

    progress = RunProgress(config, enabled=not quiet, resuming=resume)
    state: dict[str, Any] = {}

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "run_started":
            state["run_id"] = data["run_id"]
        progress.event(kind, data)

    async def main() -> Any:
        with progress:
            return await execute(config, db, resume=resume, restart=restart,
                                 on_event=on_event)

    try:
        return run_until_signalled(main)
    except (asyncio.CancelledError, KeyboardInterrupt):
        run_id = state.get("run_id", "?")
        print(f"vendbench: {command} {run_id} interrupted; its finished {unit} are saved in "
              f"{db}. Finish it with: vendbench {command} --resume {run_id} --db {db}",
              file=sys.stderr)
        return None


def config_from_args(args: argparse.Namespace, extra: dict[str, Any] | None = None) -> Any:
    """The run config the flags describe (with --panel: the panel, the flags over it;
    ``extra``: keys a command sets itself). A flag a command does not have (``check``
    has fewer) counts as not given."""
    from ..budgets import parse_price_flag
    from ..orchestrator import build_config, load_panel, model_entry

    def flag(name: str) -> Any:
        return getattr(args, name, None)

    prices = dict(parse_price_flag(p) for p in args.price)
    top = {"seeds": flag("seeds"), "world_seeds": flag("world_seeds"),
           "repeats": flag("repeats"), "days": args.days, "scenario": args.scenario,
           "workers": flag("workers"), "processes": flag("processes"),
           "budget_usd": flag("budget"), "total_budget_usd": flag("total_budget"),
           "max_forecast_usd": flag("max_forecast"),
           "timeout_s": flag("timeout"), "max_turns": flag("max_turns"),
           "name": flag("name"), "allow_unpriced": args.allow_unpriced or None}
    if args.panel:
        data = load_panel(args.panel, top).model_dump()
    else:
        data = {**{k: v for k, v in top.items() if v is not None},
                "models": [{"id": m} for m in args.models]}
    overrides = {key: flag(name) for name, key in MODEL_FLAGS if flag(name) is not None}
    for m in data["models"]:
        labelled = model_entry(m["id"])          # a label's settings (--models only)
        m.update(labelled)
        if not m["id"].startswith("baseline/"):
            _override(m, overrides, set(labelled) - {"id"})
    unknown = set(prices) - {m["id"] for m in data["models"]}
    if unknown:
        raise ConfigError(f"--price given for {', '.join(sorted(unknown))}, which is not in "
                          "the run's models")
    for m in data["models"]:
        for field, value in prices.get(m["id"], {}).items():
            m[f"{field}_usd_per_mtok"] = value
    return build_config({**data, **(extra or {})}, source=args.panel or "flags")


def _override(entry: dict[str, Any], flags: dict[str, Any], labelled: set[str]) -> None:
    """A model entry with the flags set on it; a setting its label gave is not changed by
    a flag that says otherwise."""
    for key, value in flags.items():
        if key in labelled and str(entry[key]) != str(value):
            raise ConfigError(f"{entry['id']} sets {key} = {entry[key]} in its label, but a "
                              f"flag sets it to {value}: drop one")
        entry[key] = value


def _flag_names(args: argparse.Namespace, dests: list[str]) -> list[str]:
    """The flags the user typed for ``dests``, as this command spells them (arena's
    --budget is the dest total_budget, run's --total-budget)."""
    spelled = getattr(args, "_flags", {})
    return [spelled.get(d) or ("--no-prompt-caching" if d == "prompt_caching"
                               else "--" + d.replace("_", "-")) for d in dests]


def _resume_config(args: argparse.Namespace, arena: bool = False) -> Any:
    from ..orchestrator import RunConfig
    from ..results import Store

    what = ("seeds", "world_seeds", "repeats", "days", "scenario", "budget", "total_budget",
            "models", "max_forecast", "panel", "price", "max_turns", "timeout",
            *(flag for flag, _ in MODEL_FLAGS))
    given = [f for f in what if getattr(args, f, None) not in (None, [])]
    if given:
        raise ConfigError(f"--resume reruns a stored run with its own config; drop "
                          f"{', '.join(_flag_names(args, given))}")
    with Store(args.db, read_only=True) as store:
        row = store.run(args.resume)
    if not arena and json.loads(row["config_json"] or "{}").get("seats"):
        raise ConfigError(f"run {row['run_id']} is an arena run: resume it with vendbench "
                          f"arena --resume {row['run_id']}")
    if served(row):
        raise ConfigError(f"run {row['run_id']} was vendbench serve's (MCP sessions driven by "
                          "their clients): it cannot be resumed; start vendbench serve again "
                          "for new sessions")
    config = RunConfig.model_validate_json(row["config_json"])
    # how the rest is run may change (not what is run): trials in flight, processes
    pace = {k: v for k, v in (("workers", args.workers), ("processes", args.processes))
            if v is not None}
    if pace:
        config = RunConfig.model_validate({**config.model_dump(), **pace})
    return config, row["run_id"]


def _print_run(payload: dict[str, Any], pool: Any, db: str, scenario: str) -> None:
    """The run's trials in 80 columns; each reason in full below the table (the rest is
    in `vendbench runs --run RUN_ID` and --json)."""
    import textwrap

    from ..environment import score_name
    from ..results import TrialKey
    from ..ui import print_table

    trials = sorted(payload["trials"], key=TrialKey.of)
    worlds = len({t["world_seed"] for t in trials}) > 1
    repeats = any(t["repeat"] != 1 for t in trials)
    llm = any(t.get("exchanges") for t in trials)
    headers = ["model", *(["world"] if worlds else []), "seed", *(["rep"] if repeats else []),
               "status", score_name(scenario), "cost USD", *(["cached"] if llm else []),
               "calls"]
    rows, notes = [], []
    for t in trials:
        # the same names and formats as `vendbench runs --run` (money to the cent)
        cost = "—" if t["cost_usd"] is None else f"{t['cost_usd']:,.4f}"
        na = "—" if t["score"] is None else f"{t['score']:,.2f}"
        rows.append([t["model"], *([t["world_seed"]] if worlds else []), t["seed"],
                     *([t["repeat"]] if repeats else []), t["status"], na, cost,
                     *([share_text(t.get("cached_share"))] if llm else []), t["tool_calls"]])
        if t.get("reason"):
            where = f"{t['model']} seed {t['seed']}" + (f" world {t['world_seed']}"
                                                        if worlds else "")
            notes.append(textwrap.fill(f"{where} ({t['status']}): {redact(t['reason'])}",
                                       width=80, subsequent_indent="    "))
    print_table(f"run {payload['run_id']} ({payload['status']})", headers, rows)
    for note in notes:
        print(printable(note, keep="\n"))
    spent = payload["total_cost_usd"]
    cap = pool.limit if pool is not None else None
    print(("spent: unknown (no model priced)" if spent is None else f"spent ${spent:.4f}")
          + (f" of ${cap}" if cap is not None else "")
          + f"; results in {db}\n(details: vendbench runs --db {db} --run {payload['run_id']})")
    _print_warnings(payload["warnings"])


def _print_warnings(warnings: list[dict[str, Any]]) -> None:
    for w in warnings:
        print(printable(f"vendbench: warning: {w['model']}: {redact(w['message'])}"),
              file=sys.stderr)
