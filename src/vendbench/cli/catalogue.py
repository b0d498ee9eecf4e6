"""``vendbench list``: what there is to run and read (design §35.7), as Inspect's and
HAL's users look for it: each scenario with its score, horizon and day's budget, its
reference policies by role, its operational metrics, and what else there is."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from ._args import HelpFormatter, wrap

EPILOG = """\
examples:
  vendbench list                     # every scenario, its policies and metrics
  vendbench list --json              # the same, as one JSON object

A scenario installed by another package (entry point vendbench.scenarios) is listed
as the built-in ones are.
"""


def add(sub: Any) -> None:
    cmd = sub.add_parser(
        "list", help="the scenarios, their reference policies and metrics",
        description=wrap("List what vendbench can run and measure: each scenario (its "
                         "score, default horizon, a day's interaction budget, arena and "
                         "Inspect task), its reference policies by role (the reference "
                         "'vs base' pairs with, the oracle a share's 100%, doing nothing "
                         "its 0%), its operational metrics, and its diagnostics and "
                         "failure modes (leaderboard --diagnostics)."),
        formatter_class=HelpFormatter, epilog=EPILOG)
    cmd.add_argument("--json", action="store_true", help="print one JSON object")
    cmd.set_defaults(func=command)


def catalogue() -> dict[str, Any]:
    """Every scenario as ``list`` shows it."""
    from ..environment import (diagnostics, failure_modes, not_applicable, policy_names,
                               scenario, scenario_metrics, scenario_names)

    out = []
    for name in scenario_names():
        entry = scenario(name)
        roles = {f"baseline/{p}": role for p, role in
                 ((entry.reference, "reference"), (entry.ceiling, "ceiling"),
                  (entry.floor, "floor")) if p}
        out.append({
            "name": name, "summary": entry.summary, "score": entry.score_name,
            "currency": entry.currency, "default_days": entry.default_days,
            "calls_per_day": entry.calls_per_day, "day_tool": entry.day_tool,
            "arena": entry.arena is not None, "inspect_task": entry.inspect_task,
            "policies": [{"model": f"baseline/{p}", "role": roles.get(f"baseline/{p}")}
                         for p in policy_names(name)],
            "arena_policies": [f"baseline/{p}" for p in policy_names(name, arena=True)
                               if p not in policy_names(name)],
            "metrics": [{"name": m.name, "header": m.header, "better": m.direction,
                         "idle_wins": m.idle_wins} for m in scenario_metrics(name)],
            "diagnostics": [{"name": d.name, "header": d.header, "better": d.direction,
                             "unit": d.unit, "source": d.source}
                            for d in diagnostics(name)],
            "failure_modes": [{"kind": m.kind, "what": m.words, "source": m.source}
                              for m in failure_modes(name)],
            "not_applicable": not_applicable(name)})
    from ..screen import CATEGORIES, RUBRIC_VERSION, SCANNERS

    return {"scenarios": out,
            "scanners": [{"name": s.name, "version": s.version, "what": s.words,
                          "scope": s.scope} for s in SCANNERS.values()],
            "judge_rubric": {"version": RUBRIC_VERSION, "categories": CATEGORIES}}


def command(args: argparse.Namespace) -> int:
    data = catalogue()
    if args.json:
        print(json.dumps(data))
        return 0
    lines = []
    for s in data["scenarios"]:
        budget = (f"{s['calls_per_day']} tool calls a day" if s["calls_per_day"]
                  else "no day's budget declared")
        extra = ", ".join(x for x in ("arena" if s["arena"] else "",
                                      f"Inspect task {s['inspect_task']}"
                                      if s["inspect_task"] else "") if x)
        lines.append(textwrap.fill(f"{s['name']}: {s['summary']}", 80,
                                   subsequent_indent="    "))
        arena = ("arena only: " + ", ".join(s["arena_policies"])) if s["arena_policies"] \
            else ""
        for text in (f"score: {s['score']} ({s['currency']}); {s['default_days']} days by "
                     f"default; {budget} (then the day ends){'; ' + extra if extra else ''}",
                     "reference policies: " + ", ".join(
                         p["model"] + (f" ({p['role']})" if p["role"] else "")
                         for p in s["policies"]) + (f"; {arena}" if arena else ""),
                     "metrics: " + ", ".join(m["header"] or m["name"] for m in s["metrics"]),
                     "diagnostics (leaderboard --diagnostics): " + ", ".join(
                         d["name"].replace("_", " ") for d in s["diagnostics"]),
                     "failure modes: " + ", ".join(m["kind"].replace("_", " ")
                                                   for m in s["failure_modes"]),
                     *(["not here: " + ", ".join(k.replace("_", " ")
                                                 for k in s["not_applicable"])]
                       if s["not_applicable"] else [])):
            lines.append(textwrap.fill(text, 80, initial_indent="  ",
                                       subsequent_indent="    "))
    lines += ["", textwrap.fill(
        "scanners (vendbench screen): " + ", ".join(
            f"{x['name']} v{x['version']}" for x in data["scanners"])
        + f"; with --judge, rubric v{data['judge_rubric']['version']}: "
        + ", ".join(data["judge_rubric"]["categories"]), 80, subsequent_indent="  ")]
    lines += ["", textwrap.fill(
        "roles: reference, the rule-based policy 'vs base' pairs with; ceiling, the "
        "privileged oracle, a share's 100%; floor, doing nothing, a share's 0% "
        "(docs/metrics.md)", 80, subsequent_indent="  ")]
    print("\n".join(lines))
    return 0
