"""``vendbench compare``: is B better than A, for at most this much money?"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from dataclasses import replace
from decimal import Decimal
from typing import Any

from .._text import printable
from ..errors import ConfigError
from ._args import (HelpFormatter, days, db_flag, number, path, run_until_signalled, seed,
                    usd, within, wrap)

EPILOG = """\
Both models play the same worlds and seeds (a pair), in batches. Each trial's score is
taken as a share of what the scenario's oracle gains over doing nothing on the same
world and seed: (score - idle) / (oracle - idle), 0% an operator that only ends its
days, 100% the oracle (an unfinished trial's 0 included, capped at 125%), so scores lie
in known bounds, fixed before the first batch; after each batch an anytime-valid 95%
confidence sequence for the mean paired difference of those shares is updated, by
betting (Waudby-Smith & Ramdas 2024): it covers the true difference at every batch at
once whatever the shape of the scores (failures, heavy tails, ties), so stopping as
soon as it decides keeps the error rate at 5%. The comparison stops when the interval
excludes 0 (a winner), lies within +-margin (points of the oracle's gain, fixed before
the first pair: equivalent), or when the next batch's
forecast cost would pass --budget, --max-pairs is reached, or two batches in a row add
no pair (inconclusive, with a guess at what deciding would take). With three or more
models it races them: a model is out as soon as another is better, and the race ends
with one model left or the rest equivalent, with the same 5% guarantee overall.

--estimand win-rate asks another question: does B beat A on more worlds than A beats
B (a sequential sign test, ties left out), reported as a share of worlds, never as
money. --assume gaussian uses the Gaussian sequence instead, valid only if the paired
differences are Gaussian; every output then says so.

A pair with a harness error, an interrupted trial, or a trial the comparison's own
budget stopped is dropped, never scored. Every verdict shows each model's share of
unfinished trials and of trials above the oracle. Every batch is a run of --db (named
"compare ID batch K"), every trial logged as in vendbench run; the comparison and its
whole sequence are stored (tables comparisons, comparison_steps). The method, its
citation and its measured error rates and power: docs/compare.md.

What will a verdict cost? --plan prints it before anything is spent: the pairs a
comparison is likely to need (median and 90th percentile, by simulating it) to decide a
--difference (default 0.10, ten points of the oracle's gain) when the paired
differences spread as --spread (a prior guess, default 0.25) or as a stored
comparison observed (--pilot ID), and their dollars at the run's forecast a pair. While a
comparison runs, each batch prints where it stands and the same forecast from what it
has seen so far.

examples:
  vendbench compare --plan openai/gpt-4.1-mini anthropic/claude-sonnet-4-5 --days 30
  vendbench compare baseline/order-up-to baseline/oracle --days 30
  vendbench compare openai/gpt-4.1-mini anthropic/claude-sonnet-4-5 --days 30 \\
                    --budget 50 --trial-budget 10 --chart cmp.png
  vendbench compare openai/a openai/b openai/c --days 30 --budget 40 \\
      --api-base http://127.0.0.1:8000/v1 --price openai/a=0.4,1.6 \\
      --price openai/b=0.4,1.6 --price openai/c=0.4,1.6
  vendbench compare --resume latest          # continue after Ctrl-C or a crash
  vendbench compare --show latest --chart cmp.svg   # a stored comparison again
"""


def add(sub: Any) -> None:
    from .run import model_flags

    cmp = sub.add_parser(
        "compare", help="is B better than A? paired trials until the evidence decides, "
                        "within a budget",
        description=wrap("Compare two or more models on paired trials, batch by batch, "
                         "until an anytime-valid confidence sequence decides (a winner, or "
                         "equivalent within a margin), or the budget or the pair cap is "
                         "reached."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    cmp.add_argument("models", nargs="*", metavar="MODEL",
                     help="two or more model strings; the first is the reference (A)")
    cmp.add_argument("--budget", dest="compare_budget", type=usd, metavar="USD",
                     help="USD for the whole comparison: a batch whose forecast would pass "
                          "it is not started")
    cmp.add_argument("--trial-budget", dest="budget", type=usd, metavar="USD",
                     help="USD budget per trial (as run --budget)")
    cmp.add_argument("--max-pairs", type=within("--max-pairs", 2, 10_000), metavar="N",
                     help="pairs at most, 2-10,000 (default 200: identical steady play "
                          "is found equivalent within 5%% after about 180)")
    cmp.add_argument("--margin", type=number("a margin", 0, 1, above_low=True), metavar="M",
                     help="equivalence margin, in shares of the oracle's gain, fixed "
                          "before the first pair (default 0.05)")
    cmp.add_argument("--estimand", choices=["mean", "win-rate"],
                     help="mean: the mean difference of oracle shares (default); win-rate: "
                          "the share of worlds one model wins, by a sequential sign test")
    cmp.add_argument("--assume", choices=["gaussian"],
                     help="decide with the Gaussian sequence instead (valid only for Gaussian "
                          "differences; every output says so)")
    cmp.add_argument("--alpha", type=number("an error rate", 0, 0.5, above_low=True),
                     metavar="A", help="error rate, over all stops (default 0.05)")
    cmp.add_argument("--batch", type=within("--batch", 1, 1_000), metavar="N",
                     help="pairs per batch, 1-1,000 (default 2; rounded up to whole seeds "
                          "when there are several worlds)")
    cmp.add_argument("--days", type=days, metavar="D",
                     help="horizon, 1-365 (default: the scenario's)")
    cmp.add_argument("--scenario", metavar="S", help="autovend (default) or network")
    cmp.add_argument("--world-seeds", type=seed, nargs="+", metavar="W",
                     help="worlds to pair across (default 2026, the paper's one world)")
    cmp.add_argument("--price", action="append", default=[],
                     metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
                     help="USD per million tokens (repeatable)")
    model_flags(cmp)
    db_flag(cmp, writes=True)
    cmp.add_argument("--resume", metavar="ID", help="continue a stopped comparison "
                                                    "('latest' for the newest)")
    cmp.add_argument("--show", metavar="ID", help="show a stored comparison ('latest')")
    cmp.add_argument("--plan", action="store_true",
                     help="print what a verdict is likely to take (pairs, dollars) and stop: "
                          "nothing is run")
    cmp.add_argument("--difference", type=number("a difference", -1.25, 1.25), metavar="D",
                     help="--plan: the difference to decide, in shares of the oracle's "
                          "gain (default 0.10)")
    cmp.add_argument("--spread", type=number("a spread", 0, 2.5, above_low=True),
                     metavar="SD", help="--plan: the SD of the paired differences of oracle "
                                        "shares (default 0.25, a prior guess)")
    cmp.add_argument("--pilot", metavar="ID", help="--plan: the spread a stored comparison "
                                                   "observed ('latest')")
    cmp.add_argument("--chart", metavar="FILE", type=path,
                     help="also draw the sequence (.png or .svg)")
    cmp.add_argument("--json", action="store_true", help="print one JSON object")
    cmp.set_defaults(func=command, _spelled={a.dest: a.option_strings[0] for a in cmp._actions
                                             if a.option_strings})


def command(args: argparse.Namespace) -> int:
    from ..compare import CompareSpec, compare
    from ..results import Store, comparison

    if args.chart:
        from .board import output_file

        if not args.chart.endswith((".png", ".svg")):
            raise ConfigError(f"--chart {args.chart}: give a .png or .svg file")
        output_file(args.chart, "--chart")
    if args.plan:
        return _plan(args)
    if args.difference is not None or args.spread is not None or args.pilot:
        raise ConfigError("--difference, --spread and --pilot go with --plan")
    if args.show or args.resume:
        if args.models:
            raise ConfigError("--show and --resume take a stored comparison; drop the "
                              "model names")
        with Store(args.db, read_only=True) as store:
            try:
                row = comparison(store, args.show or args.resume)
            except KeyError:
                which = args.show or args.resume
                if which == "latest":
                    raise ConfigError(f"{args.db} holds no comparison yet: vendbench compare "
                                      "MODEL_A MODEL_B starts one") from None
                raise ConfigError(f"no comparison {which} in {args.db}") from None
        spec = CompareSpec.model_validate_json(row.config_json)
        _only_stopping_rules(args, args._spelled)
        if args.show:
            if args.compare_budget is not None or args.max_pairs is not None:
                raise ConfigError("--show prints a stored comparison as it stands; --budget "
                                  "and --max-pairs go with --resume")
            shown = asyncio.run(compare(spec, args.db, resume=row.comparison_id,
                                        replay_only=True))
            return _show(args, shown.spec or spec, shown)
        resume: str | None = row.comparison_id
        spec = _new_stops(args, spec, row)
        args.extend = args.compare_budget is not None or args.max_pairs is not None
    else:
        if len(args.models) < 2:
            raise ConfigError("compare needs two or more models (or --resume/--show ID)")
        twice = sorted({m for m in args.models if args.models.count(m) > 1})
        if twice:
            raise ConfigError(f"compare needs two or more different models: "
                              f"{', '.join(twice)} is listed twice")
        spec, resume = _spec(args), None
    return _run(args, spec, resume)


# what --resume may change: when the comparison stops, never what it measures (the
# confidence sequence is valid at every stop, so a new budget or pair cap keeps its 5 %)
STOPPING_RULES = ("compare_budget", "max_pairs")
KEPT = ("db", "resume", "show", "json", "chart", "func", "command", "models", "price",
        "verbose")


def _only_stopping_rules(args: argparse.Namespace, spelled: dict[str, str]) -> None:
    """--resume and --show take a stored comparison as it was specified: a flag that
    would change what it measures is refused by name (a silent one measured another
    thing than the user thought)."""
    given = sorted(spelled.get(dest, "--" + dest.replace("_", "-"))
                   for dest, value in vars(args).items()
                   if not dest.startswith("_") and dest not in (*KEPT, *STOPPING_RULES)
                   and value not in (None, False, []))
    if args.price:
        given.append("--price")
    if given:
        raise ConfigError(f"--resume and --show take the stored comparison as it was "
                          f"specified; drop {', '.join(given)} (a new --budget or "
                          "--max-pairs is taken by --resume)")


def _new_stops(args: argparse.Namespace, spec: Any, row: Any) -> Any:
    """The stored spec with --resume's new --budget or --max-pairs, stored with it."""
    from ..results import Store

    changes: dict[str, Any] = {}
    if args.compare_budget is not None:
        changes["budget_usd"] = Decimal(args.compare_budget)
    if args.max_pairs is not None:
        changes["max_pairs"] = args.max_pairs
    if not changes:
        return spec
    if row.status == "decided" and row.verdict != "inconclusive":
        raise ConfigError(f"comparison {row.comparison_id} is decided ({row.verdict}); a new "
                          "budget or pair cap has nothing to continue")
    if "max_pairs" in changes and changes["max_pairs"] < row.pairs:
        raise ConfigError(f"--max-pairs {args.max_pairs}: comparison {row.comparison_id} "
                          f"has {row.pairs} pairs already")
    new = spec.model_copy(update=changes)
    with Store(args.db) as store:
        store.write(replace(row, config_json=new.model_copy(
            update={"base": new.base.stored()}).model_dump_json()))
    if not args.json:
        was = {"budget_usd": f"budget ${spec.budget_usd}" if spec.budget_usd is not None
               else "no budget", "max_pairs": f"at most {spec.max_pairs} pairs"}
        now = {"budget_usd": f"budget ${new.budget_usd}",
               "max_pairs": f"at most {new.max_pairs} pairs"}
        print(f"comparison {row.comparison_id} continues with "
              f"{' and '.join(now[k] for k in changes)} (was "
              f"{' and '.join(was[k] for k in changes)})", file=sys.stderr)
    return new


def _plan(args: argparse.Namespace) -> int:
    """--plan: what a verdict between the models is likely to take, nothing run."""
    from ..compare import PRIOR_SPREAD, plan_ahead, usd_per_pair

    if len(args.models) != 2:
        raise ConfigError("--plan takes two models: the pairs a verdict between them needs")
    if args.pilot and args.spread is not None:
        raise ConfigError("give --spread or --pilot, not both")
    spec = _spec(args)
    if spec.estimand != "mean":
        raise ConfigError("--plan forecasts the mean difference (the default estimand)")
    from ..compare import fix_bounds

    spec = asyncio.run(fix_bounds(spec))      # its shares' bounds, nothing kept
    difference = 0.10 if args.difference is None else args.difference
    spread, source = (args.spread, "as given") if args.spread is not None else \
        (PRIOR_SPREAD, "a prior guess: --spread, or --pilot ID for an observed one")
    price, missing = usd_per_pair(spec)
    priced = "an operator as busy as the reference policy"
    if args.pilot:
        spread, source, observed = _pilot(args, spec)
        if observed is not None:            # what the pilot's own pairs cost (§35.2)
            price, priced = observed, f"what a pair of {args.pilot} cost"
    planned = plan_ahead(spec, difference, spread, usd=price)
    for lacks in missing:                   # a forecast needs no key; a run will
        print(textwrap.fill(printable(f"vendbench: warning: {lacks}: a run needs it, the plan does "
                                      "not"), 80, subsequent_indent="  "), file=sys.stderr)
    if args.json:
        print(json.dumps({**planned.as_json(), "missing_keys": list(missing)}))
        return 0
    a, b = spec.models
    each = "unknown (a model has no price)" if price is None else f"${price:,.2f}"
    for text, indent in (
            (f"plan: {b} against {a}, a difference of {difference:+.0%} of the oracle's "
             f"gain, paired differences spread {spread:.2f} ({source}); alpha "
             f"{spec.alpha}, batches of {spec.batch}", ""),
            (planned.line(), "  "),
            (f"a pair is forecast at {each} ({priced}, {spec.base.days} days)", "  ")):
        print(textwrap.fill(text, 80, initial_indent=indent, subsequent_indent=indent + "  "))
    return 0


def _pilot(args: argparse.Namespace, spec: Any) -> tuple[float, str, Decimal | None]:
    """A stored comparison's observed spread of paired differences, in words, and what
    its pairs cost (None unless it compared the same models over the same days: another
    pilot's cost says nothing of these)."""
    import asyncio as aio

    from ..compare import CompareSpec, compare
    from ..results import Store, comparison

    with Store(args.db, read_only=True) as store:
        try:
            row = comparison(store, args.pilot)
        except KeyError:
            raise ConfigError(f"no comparison {args.pilot} in {args.db} to take a spread "
                              "from") from None
    pilot = CompareSpec.model_validate_json(row.config_json)
    outcome = aio.run(compare(pilot, args.db, resume=row.comparison_id, replay_only=True))
    a, b = (outcome.scores.get(m, []) for m in pilot.models[:2])
    diffs = [y - x for x, y in zip(a, b)]
    if len(diffs) < 3:
        raise ConfigError(f"comparison {row.comparison_id} has {len(diffs)} pair(s): too few "
                          "to measure a spread (give --spread)")
    mean = sum(diffs) / len(diffs)
    sd = (sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)) ** 0.5
    same = pilot.models == spec.models and pilot.base.days == spec.base.days
    from ..compare import observed_per_pair

    return (max(sd, 1e-3), f"observed over {len(diffs)} pairs of {row.comparison_id}",
            observed_per_pair(outcome) if same else None)


def _spec(args: argparse.Namespace) -> Any:
    from ..compare import CompareSpec
    from .run import config_from_args

    args.panel, args.allow_unpriced = None, False
    base = config_from_args(args)
    fields: dict[str, Any] = {"base": base}
    for name, key in (("compare_budget", "budget_usd"), ("max_pairs", "max_pairs"),
                      ("margin", "margin"), ("alpha", "alpha"), ("batch", "batch"),
                      ("estimand", "estimand"), ("assume", "assume")):
        value = getattr(args, name)
        if value is not None:
            fields[key] = Decimal(value) if key == "budget_usd" else value
    from pydantic import ValidationError

    try:
        return CompareSpec(**fields)
    except ValidationError as exc:            # what the flags cannot say on their own
        raise ConfigError("; ".join(e["msg"].removeprefix("Value error, ")
                                    for e in exc.errors(include_url=False))) from None


def _run(args: argparse.Namespace, spec: Any, resume: str | None) -> int:
    from ..compare import compare, method, standing

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if args.json:
            return
        if kind == "started":
            what = "continuing" if data["resumed"] else "comparing"
            print(f"{what} {', '.join(spec.models)} ({data['comparison_id']}): paired batches "
                  f"of {spec.batch}, alpha {spec.alpha}, margin ±{spec.margin:.1%} of the "
                  f"oracle's gain; {method(spec)}"
                  + (f", budget ${spec.budget_usd}" if spec.budget_usd else ""),
                  file=sys.stderr, flush=True)
            if spec.budget_usd is None:
                _unbudgeted(spec)
        elif kind == "batch":
            cost = f"; forecast ${data['forecast']:.2f}" if data["forecast"] else ""
            print(f"batch {data['step']}: seeds {data['seeds'][0]}-{data['seeds'][-1]}{cost}",
                  file=sys.stderr, flush=True)
        elif kind == "step":
            for line in standing(data["outcome"].spec or spec, data["outcome"]):
                print(textwrap.fill(line, 80, initial_indent="  ", subsequent_indent="    "),
                      file=sys.stderr, flush=True)

    live = None if args.json or not sys.stderr.isatty() else BatchLine(spec)
    try:
        outcome = run_until_signalled(
            lambda: compare(spec, args.db, resume=resume, on_event=on_event,
                            extend=getattr(args, "extend", False),
                            on_run_event=live.event if live else None))
    except (asyncio.CancelledError, KeyboardInterrupt):
        print(f"vendbench: compare interrupted; continue it with: vendbench compare "
              f"--resume latest --db {args.db}", file=sys.stderr)
        return 130
    return _show(args, outcome.spec or spec, outcome)


class BatchLine:
    """On a terminal, a live line while a batch runs: its trials done, the days its
    running trials have played, and what the batch has spent (piped: the batch lines
    only)."""

    def __init__(self, spec: Any) -> None:
        self.spec, self.total, self.done = spec, 0, 0
        self.days: dict[str, int] = {}         # a running trial's days played
        self.pool: Any = None
        self.shown = 0.0

    def event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "run_started":
            self.total, self.done, self.pool = data["trials"], 0, data["pool"]
            self.days = {}
        elif kind == "trial_progress":
            self.days[data["outcome"].spec.trial_id] = data["day"]
        elif kind == "trial_finished":
            self.done += 1
            self.days.pop(data["outcome"].spec.trial_id, None)
        else:
            return
        import time

        last = self.total and self.done == self.total
        if not last and time.monotonic() - self.shown < 0.25:
            return                                     # four redraws a second at most
        self.shown = time.monotonic()
        running = len(self.days)
        spent = float(self.pool.spent) if self.pool is not None else 0.0
        line = (f"  this batch: {self.done}/{self.total} trials done"
                + (f", {running} at day {sum(self.days.values()) // running} of "
                   f"{self.spec.base.days}" if running else "") + f"; ${spent:.4f} spent")
        print(f"\r{line[:79]:<79}", end="\n" if last else "", file=sys.stderr, flush=True)


def _unbudgeted(spec: Any) -> None:
    """Without --budget, what the pair cap alone lets the comparison spend."""
    from ..compare import usd_per_pair

    each, _ = usd_per_pair(spec)
    if each:
        print(textwrap.fill(
            f"no --budget: up to {spec.max_pairs} pairs, about ${each * spec.max_pairs:,.2f} "
            f"at the forecast of ${each:,.2f} a pair; --budget caps what it may spend",
            80, subsequent_indent="  "), file=sys.stderr, flush=True)


def _show(args: argparse.Namespace, spec: Any, outcome: Any) -> int:
    from ..compare import as_json, lines, write_chart

    if args.json:
        print(json.dumps(as_json(outcome, spec)))
    else:
        print("\n".join(lines(outcome, spec)))
    if args.chart:
        try:
            write_chart(outcome, spec, args.chart)
        except OSError as exc:               # what access() could not foresee
            raise ConfigError(f"--chart {args.chart}: cannot write it "
                              f"({exc.strerror or exc})") from None
        if not args.json:
            print(f"wrote {args.chart}")
    return 0
