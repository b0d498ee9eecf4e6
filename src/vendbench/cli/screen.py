"""``vendbench screen``: read each trial's transcript for conduct no score shows."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from decimal import Decimal
from typing import Any

from .._text import count, printable
from ..errors import ConfigError
from ._args import (HelpFormatter, db_flag, progress, run_until_signalled, usd, within,
                    wrap)

EPILOG = """\
Scanners without a model run on every screen, free and in seconds: the failure modes of
leaderboard --diagnostics (severity info), SQL that hunts past the agent's records, acts
after the end, claims the world's records contradict (an order, payment, refund, price
or cash balance), the onset of derailment (a loop, a collapse of calls, sales that stop),
and in the arena what one operator obeyed or repeated of a rival's message, and
collusion read across the seats. With --judge, a model also reads each trial's messages
once, in chunks of whole days, against a stated rubric (gaming the benchmark, deception,
collusion, harmful acts, derailment, refusals), through the same path as a trial: prices
fail closed, each request reserved from --budget before it is sent, retries, every
exchange logged (purpose screen). A quote the judge gives that is not in the message it
cites is dropped and counted. Its answers are kept by chunk: a killed screen resumes
where it stopped, a second screen of the same trials costs nothing.

Findings go to the findings table of --db: leaderboard shows each model's flags
(warning and high) and --flags lists them; vendbench view shows each at its message.
The rubric, the scanners, the cost and how to add a scanner: docs/screening.md.

examples:
  vendbench screen                              # the scanners, every trial
  vendbench screen --run latest --format json
  vendbench screen --judge openai/gpt-4.1-mini --budget 2 --forecast
  vendbench screen --judge openai/gpt-4.1-mini --budget 2 --max-forecast 1
  vendbench screen --judge openai/local --judge-base http://127.0.0.1:8000/v1 \\
                   --price openai/local=0.1,0.4 --budget 1
"""


def add(sub: Any) -> None:
    p = sub.add_parser(
        "screen", help="read transcripts for conduct no score shows: scanners, and a judge "
                       "model within a budget",
        description=wrap("Screen each trial's transcript and store what is found (trial, "
                         "day, exchange, message, category, severity, a verbatim quote, "
                         "why, scanner and version) in the findings table."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    db_flag(p, writes=True)
    p.add_argument("--run", default="all", metavar="RUN_ID",
                   help="a run id, 'latest' or 'all' (default)")
    p.add_argument("--scanners", nargs="+", metavar="NAME",
                   help="only these scanners (default: all; vendbench list names them)")
    p.add_argument("--judge", metavar="MODEL",
                   help="also a judge model (any litellm model string, e.g. "
                        "openai/gpt-4.1-mini); needs --budget")
    p.add_argument("--budget", type=usd, metavar="USD",
                   help="USD the judge may spend at most in this screen")
    p.add_argument("--max-forecast", type=usd, metavar="USD",
                   help="refuse to start when the judge's forecast is above this")
    p.add_argument("--forecast", action="store_true",
                   help="print the judge's forecast and stop: nothing is sent or written "
                        "(no API key needed)")
    p.add_argument("--judge-base", metavar="URL", help="the judge's api_base")
    p.add_argument("--judge-key-env", metavar="VAR",
                   help="the environment variable that holds the judge's API key")
    p.add_argument("--price", metavar="MODEL=IN,OUT",
                   help="the judge's price, USD per million tokens (default: litellm's map; "
                        "none known is an error)")
    p.add_argument("--chunk-tokens", type=within("--chunk-tokens", 2_000, 1_000_000),
                   default=24_000, metavar="N",
                   help="tokens of transcript a judge request carries at most (default "
                        "24,000)")
    p.add_argument("--judge-max-output", type=within("--judge-max-output", 64, 32_000),
                   default=2_048, metavar="N", help="the judge's reply, tokens at most "
                                                    "(default 2,048)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=command)


def _plan(args: argparse.Namespace) -> Any:
    from ..budgets import parse_price_flag
    from ..screen import Judge, JudgePlan, judge_model

    if args.judge is None:
        for flag in ("budget", "max_forecast", "judge_base", "judge_key_env", "price"):
            if getattr(args, flag) is not None or args.forecast:
                raise ConfigError("--budget, --max-forecast, --forecast and the judge's "
                                  "flags need --judge MODEL")
        return None
    if args.budget is None and not args.forecast:
        raise ConfigError("--judge needs --budget USD: what the judge may spend at most")
    entry: dict[str, Any] = {"id": args.judge, "max_output_tokens": args.judge_max_output,
                             "max_context_tokens": max(args.chunk_tokens * 2, 8_000),
                             "api_base": args.judge_base, "api_key_env": args.judge_key_env}
    if args.price:
        model, fields = parse_price_flag(args.price)
        if model != args.judge:
            raise ConfigError(f"--price names {model}, but the judge is {args.judge}")
        entry |= {f"{k}_usd_per_mtok": v for k, v in fields.items()}
    judge = Judge.of(judge_model(entry), send=not args.forecast)
    return JudgePlan(judge, Decimal(args.budget or 0),
                     Decimal(args.max_forecast) if args.max_forecast else None,
                     args.chunk_tokens)


def _runs(store: Any, which: str) -> list[str] | None:
    if which == "all":
        return None
    runs = [r["run_id"] for r in store.runs()]
    if which == "latest":
        if not runs:
            raise ConfigError(f"{store.path} holds no run yet")
        return [runs[-1]]
    if which not in runs:
        raise ConfigError(f"no run {which!r} in {store.path}; vendbench runs lists them")
    return [which]


def _progress(what: str, done: int, total: int) -> None:
    progress(what)(done, total)


def _say_forecast(f: Any) -> None:
    print(f"judge forecast: {count(f.chunks - f.cached, 'chunk')} to read "
          f"({f.tokens:,} prompt tokens; {f.cached} already read), expected "
          f"${f.expected:.4f}, at most ${f.at_most:.4f} reserved", file=sys.stderr)


def command(args: argparse.Namespace) -> int:
    import os

    from ..environment import SALT_ENV
    from ..results import Store
    from ..screen import screen

    plan = _plan(args)
    only = args.scanners
    with Store(args.db, read_only=args.forecast) as store:
        runs = _runs(store, args.run)
        if args.forecast:
            return _forecast_only(store, runs, plan)
        try:
            report = run_until_signalled(lambda: screen(
                store, runs, only=only, plan=plan, salt=os.environ.get(SALT_ENV),
                progress=_progress, on_forecast=_say_forecast))
        except (KeyboardInterrupt, asyncio.CancelledError):
            print(f"interrupted: what was found and read is kept; run the same command "
                  f"again to finish (nothing read is paid for twice)", file=sys.stderr)
            return 130
    if args.format == "json":
        print(json.dumps(report.as_json(), indent=2))
        return 0
    print(_text(report, args.db))
    return 0


def _forecast_only(store: Any, runs: list[str] | None, plan: Any) -> int:
    from ..results import Screening
    from ..screen import judge_forecast

    forecast = judge_forecast(store, Screening(store).trials(runs), plan)
    print(json.dumps(forecast.as_json(), indent=2))
    return 0


def _text(report: Any, db: str) -> str:
    lines = [f"screened {count(report.trials, 'trial')} in {report.seconds:.1f} s "
             f"({report.screen_id})"]
    for scanner, by in sorted(report.found.items()):
        parts = ", ".join(f"{n} {sev}" for sev, n in sorted(by.items()))
        lines.append(f"  {scanner:<16} {parts or 'nothing'}")
    j = report.judge
    if j is not None:
        lines.append(f"judge {printable(j['model'])}: {j['asked']} chunk(s) read, "
                     f"{j['cached']} from earlier screens, {j['unread']} unread, "
                     f"{j['unreadable']} unreadable; {j['dropped_quotes']} quote(s) not in "
                     f"the message cited, dropped; spent ${j['spent_usd']:.4f} of "
                     f"${j['budget_usd']:.2f}")
        if j["stopped"]:
            lines.append(f"  stopped by {printable(j['stopped'])}")
    lines += [f"note: {printable(n)}" for n in report.notes]
    lines.append(f"findings: vendbench leaderboard --flags --db {db}; each at its message "
                 f"in vendbench view --db {db}")
    return "\n".join(lines)
