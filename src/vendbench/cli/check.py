"""``vendbench check``: what each model of a panel will do, before a run spends on it."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from typing import Any

from .._text import printable
from ._args import HelpFormatter, days, path, wrap

EPILOG = """\
For each LLM model: the model string and its provider, the endpoint (something must
listen there), the API key variable, the price, what one request reserves, and one real
request as a trial's first (briefing, first daily report, tools; a reply of at most 256
tokens): whether the model calls a tool, the prompt tokens the server counts against
ours, the latency and what that request cost; then what a trial and the run are forecast
to cost (as `run` prints before it starts). Exit 0 when every model is ready, 2 with
one line per problem otherwise. Nothing is written.

examples:
  vendbench check --models openai/gpt-4.1-mini
  vendbench check --models openai/local --api-base http://127.0.0.1:8080/v1 \\
                  --price openai/local=0,0
  vendbench check --panel examples/nightly.toml --no-request  # nothing sent
"""


def add(sub: Any) -> None:
    check = sub.add_parser(
        "check", help="check models and endpoints before a run (one small request each)",
        description=wrap("Check each LLM model of a panel before running it: provider, "
                         "endpoint, key, price, what a request reserves, and one real "
                         "request."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    which = check.add_mutually_exclusive_group(required=True)
    which.add_argument("--models", nargs="+", metavar="M", help="model strings to check")
    which.add_argument("--panel", metavar="FILE.toml", type=path, help="a panel file")
    check.add_argument("--price", action="append", default=[],
                       metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
                       help="USD per million tokens (repeatable)")
    check.add_argument("--scenario", metavar="S", help="autovend (default) or network")
    check.add_argument("--days", type=days, metavar="D", help="horizon (default: the "
                       "scenario's)")
    check.add_argument("--no-request", action="store_true",
                       help="check everything but the real request (sends nothing)")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    from .run import model_flags

    model_flags(check, panel=True)       # the run's own per-model settings, checked
    check.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from ..orchestrator import check
    from ..ui import forecast_lines
    from .run import config_from_args

    args.allow_unpriced = True                # a missing price is reported, not fatal
    config = config_from_args(args)
    report = asyncio.run(check(config, send=not args.no_request))
    records = report["models"]
    if args.json:
        print(json.dumps(report, default=str))
    else:
        for r in records:
            _print(r)
        if report["forecast"]:
            say("\n".join(forecast_lines(report["forecast"], config.days)))
    problems = [p for r in records for p in r["problems"]]
    for warning in (w for r in records for w in r.get("warnings", [])):
        print(f"vendbench: warning: {printable(warning)}", file=sys.stderr)
    for problem in problems:
        print(f"vendbench: {printable(problem)}", file=sys.stderr)
    if not records:
        print("no LLM model to check (the baseline/ policies need no check)", file=sys.stderr)
    return 2 if problems else 0


def say(text: str) -> None:
    """Print ``text``, whose names may carry control sequences, as plain text."""
    print(printable(text, keep="\n"))


def _print(r: dict[str, Any]) -> None:
    state = "NOT READY" if r["problems"] else \
        "ready to forecast; a run needs its API key" if r.get("warnings") else "ready"
    say(f"{r['model']}: {state}")
    if r.get("price"):
        p = r["price"]
        say(f"  price: ${p['input']} in, ${p['output']} out per million tokens "
              f"({p.get('source')})")
    reasoning = r.get("reasoning")
    if reasoning:
        say(textwrap.fill(f"reasoning: {reasoning['how']}", 80, initial_indent="  ",
                            subsequent_indent="    "))
        for note in reasoning["notes"]:
            say(textwrap.fill(f"note: {note}", 80, initial_indent="    ",
                                subsequent_indent="      "))
    for note in r.get("dropped") or []:
        say(textwrap.fill(f"note: {note}", 80, initial_indent="  ", subsequent_indent="    "))
    if r.get("first_prompt_tokens") is not None:
        reserves = f"${r['reserves_usd']:.4f}" if r.get("reserves_usd") is not None else "—"
        beyond = reasoning["reserved_beyond_max_tokens"] if reasoning else 0
        thinking = f" (with {beyond:,} thinking tokens beyond max_tokens)" if beyond else ""
        say(f"  first request: {r['first_prompt_tokens']:,} tokens by our count; "
              f"reserves {reserves}{thinking}")
    if r.get("usage_missing"):
        say(f"  one request: {'called a tool' if r['called_tool'] else 'NO tool call'}; "
              f"the server reported no usage, so each request of a run is charged its "
              f"full reservation; {r['latency_s']:.2f} s")
    elif "called_tool" in r:
        ratio = f"{r['token_ratio']:.2f}×" if r.get("token_ratio") else "—"
        cost = f"${r['probe_cost_usd']:.5f}" if r.get("probe_cost_usd") is not None else "—"
        say(f"  one request: {'called a tool' if r['called_tool'] else 'NO tool call'}; "
              f"the server counted {r['server_prompt_tokens']:,} prompt tokens ({ratio} "
              f"ours); {r['latency_s']:.2f} s; cost {cost}")
