"""Why a trial went as it did (design §32.1): the AutoVend paper's diagnostics, computed
from a trial's stored rows and its world replayed, with no model and no cost.

A scenario declares its diagnostics in its descriptor (``Scenario.diagnostics``: a
module with ``DIAGNOSTICS``, ``NOT_APPLICABLE`` and ``diagnose``), as it declares its
metrics. This module holds what every world shares:

- the types: a ``Diagnostic`` (one number a trial has, declared once), an ``Incident``
  (one instance of a failure mode, with its day, its tool call and the exchange whose
  reply made it, so the viewer opens it) and a trial's ``Diagnosis``;
- the failure modes any world's tool calls show (``call_incidents``): rejected calls, a
  rejected call made again on a later day after its rejection was seen (a correction
  not kept), the same call again within a day, names of tools, machines or products that
  do not exist, and days without an action;
- the diagnostics every world's day rows give: growth early and late (AutoVend §5.5)
  and days until sales stop (Vending-Bench).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._records import DIRECTIONS
from ._arguments import canonical

# the paper's windows on its 180 days (§5.5); another horizon scales them
EARLY, LATE, PAPER_DAYS = (16, 45), (136, 165), 180
# the paper's reading of growth early and late, by a stated rule: late growth under this
# share of early growth (early growth above 0) reads "early gains then stagnation"
STAGNATION = 0.25
DETAIL_CHARS = 240                  # of an incident's detail


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One diagnostic of a scenario, declared once: the key its ``diagnose`` returns,
    which way is better, how a table shows it (the value times ``scale``, to
    ``decimals``), and where it comes from (the paper's section)."""

    name: str
    direction: str
    header: str
    scale: float = 1
    decimals: int = 1
    source: str = ""
    unit: str = ""

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"diagnostic {self.name}: direction is one of {DIRECTIONS}")


@dataclass(frozen=True, slots=True)
class FailureMode:
    """A kind of failure a trial's transcript shows (AutoVend §5.6), declared once."""

    kind: str
    header: str                    # a table's column
    words: str                     # what an instance is, in a line
    source: str = "AutoVend §5.6"


@dataclass(frozen=True, slots=True)
class Incident:
    """One instance of a failure mode: the day it happened, the tool call (its number in
    the trial) and the exchange whose reply made the call (None: no LLM, or a day)."""

    kind: str
    day: int
    call: int | None
    exchange: int | None
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "day": self.day, "call": self.call,
                "exchange": self.exchange, "detail": self.detail}


@dataclass
class Diagnosis:
    """A trial's diagnostics (None where one is undefined for it), its failure-mode
    instances in order, and the diagnostics its world does not have, with why."""

    values: dict[str, float | None]
    incidents: list[Incident] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def counts(self, kinds: Iterable[str]) -> dict[str, int]:
        """How many instances of each failure mode in ``kinds``."""
        out = dict.fromkeys(kinds, 0)
        for i in self.incidents:
            if i.kind in out:
                out[i.kind] += 1
        return out

    def as_json(self) -> dict[str, Any]:
        return {"values": self.values, "incidents": [i.as_json() for i in self.incidents],
                "not_applicable": self.not_applicable, "notes": self.notes}


# the failure modes every world's tool calls show
GENERIC_MODES = (
    FailureMode("rejected_call", "rejected", "a call the world rejected, or an item of a "
                "batch it rejected (each item once)"),
    FailureMode("correction_not_kept", "not kept", "a rejected call (or batch item) made "
                "again on a later day, after its rejection was seen"),
    FailureMode("repeated_call", "repeated", "the same call, tool and arguments, again "
                "within a day with nothing done between, itself changing nothing (a read, "
                "or a rejected action): the same answer asked for again"),
    FailureMode("unknown_name", "unknown", "a call naming a tool, machine, product or "
                "place that does not exist"),
    FailureMode("idle_day", "idle days", "a day that ended without an action (only reads, "
                "or nothing)", "Vending-Bench"),
)


def _parsed(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 1] + "…"


def call_incidents(calls: Sequence[dict[str, Any]], *, actions: frozenset[str],
                   day_tool: str, unknown: re.Pattern[str], days: int,
                   refusal: dict[str, Any]) -> list[Incident]:
    """The failure modes every world shows, from a trial's tool calls (each a row with
    ``seq``, ``exchange_seq``, ``day``, ``name``, ``args_json``, ``result_json``):
    ``actions`` are the tools that change the world, ``unknown`` matches a rejection
    that names what does not exist, ``days`` the days the trial finished, ``refusal``
    the harness's answer to a call made after its day ended (no failure of the
    model's world: not counted)."""
    out: list[Incident] = []
    rejected_on: dict[tuple[str, str], int] = {}   # a rejected call or item -> its day
    last_seen: dict[tuple[str, str], tuple[int, int]] = {}   # call -> (day, actions then)
    times: dict[tuple[str, str], int] = {}         # calls in a row with nothing between
    acted: set[int] = set()
    done = 0                                       # accepted actions so far
    for c in calls:
        day, name, seq, exchange = c["day"], str(c["name"]), c["seq"], c.get("exchange_seq")
        result = _parsed(c.get("result_json"))
        if not isinstance(result, dict) or result == refusal:
            continue
        args = _parsed(c.get("args_json"))
        key = canonical(args)
        failures = _failures(name, key, args, result)
        changed = name in actions and name != day_tool and (result.get("ok") is not False
                                                            or bool(result.get("accepted")))
        # the same call again the same day, nothing done between, changing nothing
        # itself: the same answer asked for again (an action that took is no repeat)
        if name != day_tool and not changed and last_seen.get((name, key)) == (day, done):
            times[name, key] += 1
            out.append(Incident("repeated_call", day, seq, exchange,
                                _clip(f"{name} {key}: the same call the "
                                      f"{_nth(times[name, key])} time, nothing done "
                                      "between")))
        elif name != day_tool:
            times[name, key] = 1
        if changed:
            acted.add(day)
            done += 1
        last_seen[name, key] = (day, done)
        for what, why in failures:
            out.append(Incident("rejected_call", day, seq, exchange,
                                _clip(f"{name}: {why}")))
            if unknown.search(why):
                out.append(Incident("unknown_name", day, seq, exchange, _clip(why)))
            first = rejected_on.get(what)
            if first is not None and first < day:
                out.append(Incident("correction_not_kept", day, seq, exchange,
                                    _clip(f"{name} rejected on day {first}, made again: "
                                          f"{why}")))
            rejected_on.setdefault(what, day)
    for day in range(1, days + 1):
        if day not in acted:
            out.append(Incident("idle_day", day, None, None,
                                "the day ended without an action"))
    out.sort(key=lambda i: (i.day, i.call if i.call is not None else 1 << 40))
    return out


def _nth(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _failures(name: str, key: str, args: Any, result: dict[str, Any]
              ) -> list[tuple[tuple[str, str], str]]:
    """What a call's result rejected: each rejected batch item (by the item), or the call
    itself (by its arguments), with the world's reason."""
    rejected = result.get("rejected")
    if isinstance(rejected, list) and rejected:
        items = args.get("items") if isinstance(args, dict) else None
        out = []
        for r in rejected:
            if not isinstance(r, dict):
                continue
            index = r.get("index")
            item = items[index] if isinstance(items, list) and isinstance(index, int) \
                and 0 <= index < len(items) else index
            out.append(((name, canonical(item)), str(r.get("reason", ""))))
        return out
    if result.get("ok") is False:
        return [((name, key), str(result.get("error", "")))]
    return []


def windows(days: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The early and late growth windows of a ``days``-day trial: the paper's days 16-45
    and 136-165 of 180, scaled (rounded half up, at least a day each)."""
    def scaled(a: int, b: int) -> tuple[int, int]:
        lo = max(1, int(a * days / PAPER_DAYS + 0.5))
        return lo, max(lo, int(b * days / PAPER_DAYS + 0.5))

    return scaled(*EARLY), scaled(*LATE)


def growth(values: Sequence[float], start: float, days: int
           ) -> dict[str, float | str | None]:
    """Mean daily growth of a trial's score quantity (``values``: its value at the end
    of each day, from day 1; ``start``: before day 1) over the early and the late window,
    their ratio, and the paper's reading of them (§5.5)."""
    (a, b), (c, d) = windows(days)

    def mean_growth(lo: int, hi: int) -> float | None:
        if len(values) < hi:
            return None
        before = start if lo == 1 else values[lo - 2]
        return (values[hi - 1] - before) / (hi - lo + 1)

    early, late = mean_growth(a, b), mean_growth(c, d)
    ratio = late / early if early is not None and late is not None and early > 0 else None
    reading = None
    if early is not None and late is not None:
        reading = ("no early growth" if early <= 0 else
                   "early gains then stagnation" if late < STAGNATION * early else
                   "sustained growth")
    return {"growth_early": early, "growth_late": late, "growth_ratio": ratio,
            "growth_reading": reading}


def days_until_sales_stop(day_rows: Sequence[dict[str, Any]]) -> float | None:
    """The last day with a sale (Vending-Bench's "days until sales stop"); None when
    nothing ever sold."""
    sold = [r["day"] for r in day_rows if (r.get("units_sold") or 0) > 0]
    return float(max(sold)) if sold else None


def day_diagnostics(currency: str, decimals: int) -> tuple[Diagnostic, ...]:
    """The diagnostics every world's day rows give, in its currency: growth early and
    late and their ratio (AutoVend §5.5) and the last sale (Vending-Bench)."""
    return (
        Diagnostic("growth_early", "higher", "growth early", 1, decimals,
                   "AutoVend §5.5, Figure 6", f"{currency} a day"),
        Diagnostic("growth_late", "higher", "growth late", 1, decimals,
                   "AutoVend §5.5, Figure 6", f"{currency} a day"),
        Diagnostic("growth_ratio", "higher", "late/early", 1, 2, "AutoVend §5.5", "ratio"),
        Diagnostic("last_sale_day", "higher", "last sale", 1, 0, "Vending-Bench", "day"))


def begin(declared: Sequence[Diagnostic], day_rows: Sequence[dict[str, Any]],
          calls: Sequence[dict[str, Any]], *, actions: frozenset[str], day_tool: str,
          unknown: re.Pattern[str], days: int, initial: float, refusal: dict[str, Any],
          not_applicable: dict[str, str]) -> Diagnosis:
    """A trial's diagnosis as far as its day rows and tool calls go (``declared`` all
    None until the world's replay fills them): growth, the last sale, and every world's
    failure modes (``call_incidents``)."""
    values: dict[str, float | None] = dict.fromkeys(d.name for d in declared)
    grown = growth([float(r["net_assets"]) for r in day_rows], initial, days)
    values.update({k: v for k, v in grown.items() if not isinstance(v, str)})
    values["last_sale_day"] = days_until_sales_stop(day_rows)
    incidents = call_incidents(calls, actions=actions, day_tool=day_tool, unknown=unknown,
                               days=len(day_rows), refusal=refusal)
    out = Diagnosis(values, incidents, dict(not_applicable))
    if grown["growth_reading"]:
        out.notes.append(f"growth: {grown['growth_reading']}")
    return out
