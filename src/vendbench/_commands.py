"""The glue behind ``vendbench run`` and ``vendbench runs``: flags to config, the live
display, signals, and printing. The library does the work; this only connects it."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from decimal import Decimal
from typing import Any

from ._secrets import redact
from .errors import ConfigError


# flags that set a key of every LLM model of the run (with --panel too: they override it)
MODEL_FLAGS = (("api_base", "api_base"), ("max_output_tokens", "max_output_tokens"),
               ("max_context_tokens", "max_context_tokens"),
               ("context_strategy", "context_strategy"),
               ("context_low_water", "context_low_water"), ("tool_choice", "tool_choice"),
               ("temperature", "temperature"), ("request_timeout", "request_timeout_s"),
               ("prompt_caching", "prompt_caching"))


def _config_from_args(args: argparse.Namespace) -> Any:
    from .budgets import parse_price_flag
    from .orchestrator import build_config, load_panel

    prices = dict(parse_price_flag(p) for p in args.price)
    top = {"seeds": args.seeds, "world_seeds": args.world_seeds, "repeats": args.repeats,
           "days": args.days,
           "scenario": args.scenario, "workers": args.workers, "processes": args.processes,
           "budget_usd": args.budget,
           "total_budget_usd": args.total_budget, "timeout_s": args.timeout,
           "max_turns": args.max_turns, "name": args.name,
           "allow_unpriced": args.allow_unpriced or None}
    if args.panel:
        data = load_panel(args.panel, top).model_dump()
    else:
        data = {**{k: v for k, v in top.items() if v is not None},
                "models": [{"id": m} for m in args.models]}
    overrides = {key: getattr(args, flag) for flag, key in MODEL_FLAGS
                 if getattr(args, flag) is not None}
    for m in data["models"]:
        if not m["id"].startswith("baseline/"):
            m.update(overrides)
    unknown = set(prices) - {m["id"] for m in data["models"]}
    if unknown:
        raise ConfigError(f"--price given for {', '.join(sorted(unknown))}, which is not in "
                          "the run's models")
    for m in data["models"]:
        for field, value in prices.get(m["id"], {}).items():
            m[f"{field}_usd_per_mtok"] = value
    return build_config(data, source=args.panel or "flags")


def _resume_config(args: argparse.Namespace) -> Any:
    from .orchestrator import RunConfig
    from .results import Store

    what = ("seeds", "world_seeds", "repeats", "days", "scenario", "budget", "total_budget",
            "models",
            "panel", "price", "max_turns", "timeout", *(flag for flag, _ in MODEL_FLAGS))
    given = [f for f in what if getattr(args, f, None) not in (None, [])]
    if given:
        names = ["--no-prompt-caching" if g == "prompt_caching" else "--" + g.replace("_", "-")
                 for g in given]
        raise ConfigError(f"--resume reruns a stored run with its own config; drop "
                          f"{', '.join(names)}")
    with Store(args.db, read_only=True) as store:
        row = store.run(args.resume)
    if _served(row):
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


def run_command(args: argparse.Namespace) -> int:
    from .orchestrator import execute
    from .ui import RunProgress

    if args.restart and not args.resume:
        raise ConfigError("--restart goes with --resume RUN_ID (it reruns that run's "
                          "unfinished trials from day 1)")
    if args.resume:
        config, resume = _resume_config(args)
    else:
        config, resume = _config_from_args(args), None
    progress = RunProgress(config, enabled=not args.json)
    state: dict[str, Any] = {}

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "run_started":
            state["run_id"] = data["run_id"]
        progress.event(kind, data)

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        with progress:
            return await execute(config, args.db, resume=resume, restart=args.restart,
                                 on_event=on_event)

    try:
        result = asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        run_id = state.get("run_id", "?")
        print(f"vendbench: run {run_id} interrupted; its finished trials are saved in "
              f"{args.db}. Finish it with: vendbench run --resume {run_id} --db {args.db}",
              file=sys.stderr)
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
        print(f"vendbench: {len(errors)} trial(s) ended in a harness or provider error; "
              "they are kept apart from model failures.", file=sys.stderr)
        if fixable:
            which = "them" if len(fixable) == len(errors) else f"the {len(fixable)} that may succeed"
            print(f"vendbench: rerun {which} with: vendbench run --resume {payload['run_id']} "
                  f"--db {args.db}", file=sys.stderr)
        if len(fixable) < len(errors):
            print(f"vendbench: {len(errors) - len(fixable)} the server refuses as they stand (a "
                  "bad model string or setting, or a server that fails the same way on the "
                  "same request): a resume would send the same request again. Fix the model, "
                  "its settings or the server and start a new run.", file=sys.stderr)
        return 3
    return 0


def _print_run(payload: dict[str, Any], pool: Any, db: str, scenario: str) -> None:
    """The run's trials in 80 columns; each reason in full below the table (the rest is
    in `vendbench runs --run RUN_ID` and --json)."""
    import textwrap

    from .environment import score_name
    from .ui import print_table

    trials = sorted(payload["trials"], key=lambda t: (t["model"], t["world_seed"], t["seed"],
                                                      t["repeat"]))
    worlds = len({t["world_seed"] for t in trials}) > 1
    repeats = any(t["repeat"] != 1 for t in trials)
    llm = any(t.get("exchanges") for t in trials)
    headers = ["model", *(["world"] if worlds else []), "seed", *(["rep"] if repeats else []),
               "status", score_name(scenario), "cost $", *(["cached"] if llm else []),
               "calls"]
    rows, notes = [], []
    for t in trials:
        cost = "—" if t["cost_usd"] is None else f"{t['cost_usd']:.4f}"
        na = "—" if t["final_net_assets"] is None else f"{t['final_net_assets']:,.0f}"
        rows.append([t["model"], *([t["world_seed"]] if worlds else []), t["seed"],
                     *([t["repeat"]] if repeats else []), t["status"], na, cost,
                     *([_share(t.get("cached_share"))] if llm else []), t["tool_calls"]])
        if t.get("reason"):
            where = f"{t['model']} seed {t['seed']}" + (f" world {t['world_seed']}"
                                                        if worlds else "")
            notes.append(textwrap.fill(f"{where} ({t['status']}): {redact(t['reason'])}",
                                       width=80, subsequent_indent="    "))
    print_table(f"run {payload['run_id']} ({payload['status']})", headers, rows)
    for note in notes:
        print(note)
    spent = payload["total_cost_usd"]
    cap = pool.limit if pool is not None else None
    print(f"spent ${spent:.4f}" + (f" of ${cap}" if cap is not None else "")
          + f"; results in {db}\n(details: vendbench runs --db {db} --run {payload['run_id']})")
    _print_warnings(payload["warnings"])


def _print_warnings(warnings: list[dict[str, Any]]) -> None:
    for w in warnings:
        print(f"vendbench: warning: {w['model']}: {redact(w['message'])}", file=sys.stderr)


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _stale(rows: list[dict[str, Any]], live: dict[str, Any] | None
           ) -> list[dict[str, Any]]:
    """Rows still marked ``running`` that no process is running: every run's but the one
    that is writing the file now (``live``; a writer holds DuckDB's lock, so nothing else
    can be writing), whose process stopped without saying so (killed, a full disk).
    They are shown as ``stopped``."""
    writing = (live or {}).get("run_id")
    return [{**r, "status": "stopped"}
            if r.get("status") == "running" and r.get("run_id") != writing else r
            for r in rows]


def runs_command(args: argparse.Namespace) -> int:
    from .environment import score_name
    from .results import Store, cached_share
    from .ui import print_table

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
            print_table(f"run {run['run_id']} — {run['name']}, {run['scenario']}, "
                        f"{run['days']} days, {run['status']}",
                        ["trial", "model", "world", "seed", "rep", "status",
                         score_name(run["scenario"]),
                         "cost USD", "cached", "exchanges", "tool calls", "days"],
                        [[t["trial_id"][len(run["run_id"]) + 1:], t["model"], t["world_seed"],
                          t["seed"], t["repeat"],
                          t["status"], _num(t["final_net_assets"]), _num(t["cost_usd"], 4),
                          _share(cached_share(t["input_tokens"], t["cache_read_tokens"])),
                          t["exchanges"], t["tool_calls"], t["days_completed"]]
                         for t in trials])
            for w in warnings:
                print(f"warning: {w['model']}: {w['message']}")
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
    print_table(f"runs in {args.db}",
                ["run", "name", "created", "scenario", "days", "status", "trials",
                 "completed", "cost USD"],
                [[r["run_id"], r["name"], str(r["created_at"])[:19], r["scenario"], r["days"],
                  r["status"], r["trials"], r["completed"], _num(r["cost_usd"], 4)]
                 for r in runs])
    _stopped_hint(runs, args.db)
    _live_line(live)
    return 0


def _live_line(live: dict[str, Any] | None) -> None:
    if live is not None:
        import datetime as dt

        now = dt.datetime.now().strftime("%H:%M:%S")
        print(f"live: run {live.get('run_id')} is writing this file (pid {live.get('pid')}); "
              f"shown as committed at {now}")


def _served(run: dict[str, Any]) -> bool:
    """Whether ``run`` was `vendbench serve`'s (MCP sessions, nothing to resume)."""
    if "harness" in run:
        return run["harness"] == "mcp"
    try:
        return json.loads(run.get("config_json") or "{}").get("harness") == "mcp"
    except ValueError:
        return False


def _stopped_hint(runs: list[dict[str, Any]], db: str) -> None:
    for r in runs:
        if r["status"] != "stopped":
            continue
        if _served(r):
            print(f"run {r['run_id']} (vendbench serve) stopped without finishing (its "
                  "process was killed); its sessions' calls are kept, and a client starts a "
                  "new world with a new session of vendbench serve")
        else:
            print(f"run {r['run_id']} stopped without finishing (its process was killed or "
                  f"could not write); continue it: vendbench run --resume {r['run_id']} "
                  f"--db {db}")


def _num(value: Any, places: int = 2) -> str:
    if value is None:
        return "—"
    return f"{float(value):,.{places}f}"


def _jsonable(row: dict[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: (float(v) if isinstance(v, Decimal) else v) for k, v in row.items()
            if k not in skip}
