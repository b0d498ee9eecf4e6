"""AutoVend's diagnostics (design §32.1, the paper's §5.3-5.6): why a trial went as it
did, from its stored rows and its world replayed (no model, no cost).

The trial's tool calls run again, in order, through a fresh world of the same seeds;
before each night the replay notes which machines were visited and what the warehouse
held, and before each order what the product's stock covered. Then:

* reassignment gap (§5.3, Figure 5b): at each 30-day checkpoint, the expected daily
  gross profit of the best reassignment of the assortments the machines hold (each
  machine's listings, units and prices moved whole to another machine; no new product)
  against the agent's own placement, under the hidden demand (the pricing-regret
  model: neutral weather, the day's calendar), as a share of the best: (best − own) /
  best. The best is an assignment problem (``scipy.optimize.linear_sum_assignment``).
  The mean over checkpoints where anything is listed.
* visit-cycle contribution (§5.4, Figure 5c): each machine's gross profit over the
  nights from a paid visit to the next visit, less the first visit's fee, summed over
  every complete cycle of every machine, per site-day of those cycles (final,
  incomplete cycles excluded, as the paper excludes them; so are costs other than the
  fee).
* empty-site exposure (§5.4): the share of site-days on which a machine had a listed
  product with no unit on its shelf while the warehouse held unexpired units of it.
* growth early and late (§5.5, Figure 6), and days until sales stop (Vending-Bench):
  from the day rows (``_diagnostics``).
* failure modes (§5.6): every world's (``call_incidents``), and two of AutoVend's own:
  an order while the product's unexpired stock (warehouse, shelves, in transit) covers
  its sales of the last 7 days for more than the lead time plus a week (none before
  day 8: no week of sales to read), and a paid visit to a machine whose gross profit
  since its previous visit was below the visit fee.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from .._diagnostics import (GENERIC_MODES, Diagnosis, Diagnostic, FailureMode, Incident,
                            begin, day_diagnostics)
from .._protocol import Environment
from .._session import DAY_OVER, RecordingSession
from . import _demand as demand
from ._calendar import DEFAULT_START, day_info
from ._env import AutoVendEnv
from ._metrics import _expected_gp
from ._state import LEAD_TIME, VISIT_FEE, Business
from ._tools import MUTATING, TOOLS

CHECKPOINT_EVERY = 30                  # days between the reassignment's checkpoints
COVER_SLACK = 7                        # a week beyond the lead time: "covered"
SALES_WINDOW = 30                      # days of sales a cover is read against (none before)
SPARE_UNITS = 10                       # units a cover may hold beyond its safety stock
FEE = VISIT_FEE / 100                  # CNY
PHYSICAL = frozenset(n for n, t in TOOLS.items() if t.kind == "physical")
UNKNOWN = re.compile(r"unknown (tool|machine_id|product_id)")

DIAGNOSTICS = (
    Diagnostic("reassignment_gap", "lower", "reassign %", 100, 1,
               "AutoVend §5.3, Figure 5b", "share of the best placement's gross profit"),
    Diagnostic("visit_cycle_contribution", "higher", "cycle CNY", 1, 2,
               "AutoVend §5.4, Figure 5c", "CNY per site-day"),
    Diagnostic("empty_site_exposure", "lower", "empty+wh %", 100, 1, "AutoVend §5.4",
               "share of site-days"),
    *day_diagnostics("CNY", 0),
)
FAILURE_MODES = GENERIC_MODES + (
    FailureMode("bought_while_covered", "covered buys", "an order while the warehouse and "
                "the orders on their way hold more of the product than sells over the "
                "lead time plus a week at its last 30 days' rate (beyond three standard "
                "deviations and 10 units; none before day 31)"),
    FailureMode("visit_above_profit", "visits > GP", "a paid visit to a machine that "
                "earned less gross profit than the visit fee since its previous visit"),
)
NOT_APPLICABLE: dict[str, str] = {}


def diagnose(records: dict[str, list[dict[str, Any]]], calls: Sequence[dict[str, Any]], *,
             seed: int, world_seed: int, days: int, initial: float,
             world_salt: str | None = None, private: bool = False) -> Diagnosis:
    """One trial's diagnostics: ``records`` its stored day and sales rows, ``calls`` its
    tool calls (with ``seq``, ``exchange_seq``, ``day``, ``name``, ``args_json``,
    ``result_json``), ``days`` its horizon, ``initial`` its starting net assets. A
    private world is replayed only with its salt; without it, what needs the world is
    None and a note says so."""
    day_rows, sales = records.get("days", []), records.get("sales", [])
    finished = len(day_rows)
    out = begin(DIAGNOSTICS, day_rows, calls, actions=MUTATING, day_tool="end_day",
                unknown=UNKNOWN, days=days, initial=initial, refusal=DAY_OVER,
                not_applicable=NOT_APPLICABLE)
    if private and world_salt is None:
        out.notes.append("a private world: its replay and hidden demand need its salt "
                         "(VENDBENCH_WORLD_SALT)")
        return out
    seen = _replay(calls, seed, world_seed, days, world_salt)
    gp = _gross_profit(sales)
    ids = [m.id for m in seen.env.world.machines]
    out.values["visit_cycle_contribution"] = _cycles(seen.visits, gp, finished, ids)
    out.values["empty_site_exposure"] = _exposure(sales, seen.warehouse, finished,
                                                  seen.env.world)
    out.values["reassignment_gap"] = _reassignment_gap(seen.env, sales, finished)
    out.incidents += seen.covered + _visits_above_profit(seen.visits, seen.visit_calls, gp,
                                                         ids)
    out.incidents.sort(key=lambda i: (i.day, i.call if i.call is not None else 1 << 40))
    return out


class _Seen:
    """What the replay noted: each night's visited machines and fresh warehouse units,
    the call that paid each visit, and the orders placed while stock covered."""

    def __init__(self, env: AutoVendEnv) -> None:
        self.env = env
        self.visits: dict[int, set[int]] = {}            # day -> machines visited
        self.warehouse: dict[int, dict[int, int]] = {}   # day -> product -> fresh units
        self.visit_calls: dict[tuple[int, int], tuple[int, int | None]] = {}
        self.covered: list[Incident] = []


def _replay(calls: Sequence[dict[str, Any]], seed: int, world_seed: int, days: int,
            salt: str | None) -> _Seen:
    env = AutoVendEnv(seed=seed, days=days, world_seed=world_seed, world_salt=salt)
    biz = env.business
    seen = _Seen(env)
    night = biz.end_day

    def noted_night(*args: Any, **kwargs: Any) -> None:     # before customers buy
        day = biz.day
        seen.visits[day] = set(biz.visited)
        seen.warehouse[day] = {k: fresh for k in biz.stock.warehouse
                               if (fresh := biz.stock.fresh(k, day, 1 << 62)) > 0}
        night(*args, **kwargs)

    biz.end_day = noted_night                                  # type: ignore[method-assign]
    _, products = env._id_lists                                 # index -> id
    index = env.world.product_index()
    session = RecordingSession(cast(Environment, env))
    for c in calls:
        name, day = c["name"], c["day"]
        args = c["args_json"]
        cover = _covers(biz, args, index) if name == "place_order" and not env.done \
            and env.day == day else {}
        visited = set(biz.visited) if name in PHYSICAL else set()
        result = session.call(name, args, day=day)
        for k, (units, held, expected) in cover.items():
            if _accepted(result, products[k]):
                seen.covered.append(Incident(
                    "bought_while_covered", day, c["seq"], c.get("exchange_seq"),
                    f"ordered {units} of {products[k]} with {held} unexpired units in the "
                    f"warehouse and in transit, where {expected:.1f} would sell in "
                    f"{LEAD_TIME + COVER_SLACK} days at its last 30 days' rate"))
        for m in set(biz.visited) - visited:
            seen.visit_calls.setdefault((day, m), (c["seq"], c.get("exchange_seq")))
    return seen


def _covers(biz: Business, args_json: Any, index: dict[str, int]
            ) -> dict[int, tuple[int, int, float]]:
    """Per product an order names (and the world knows): (units ordered, unexpired
    units held in the warehouse and in transit, units expected to sell over the lead
    time plus a week at the last 30 days' rate), where the holding exceeds that
    expectation beyond any reasonable safety stock (``_excess``)."""
    day = biz.day
    if day <= SALES_WINDOW:
        return {}
    try:
        args = json.loads(args_json) if isinstance(args_json, str) else args_json
        items = args["items"]
    except (ValueError, TypeError, KeyError):
        return {}
    out: dict[int, tuple[int, int, float]] = {}
    days_seen = SALES_WINDOW
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("product_id") not in index:
            continue
        k = index[item["product_id"]]
        held = biz.stock.fresh(k, day, 1 << 62)
        held += sum(u for o in biz.open_orders() for kk, u in o.items if kk == k)
        expected = float(biz.sold_30d[:, k].sum()) / days_seen * (LEAD_TIME + COVER_SLACK)
        if _excess(held, expected):
            units = item.get("quantity")
            out[k] = (units if isinstance(units, int) else 0, held, expected)
    return out


def _excess(held: int, expected: float) -> bool:
    """Whether ``held`` units exceed ``expected`` demand beyond a safety stock of three
    standard deviations of Poisson demand and ``SPARE_UNITS`` units more."""
    return held > expected + 3 * math.sqrt(expected) + SPARE_UNITS


def _accepted(result: dict[str, Any], product: str) -> bool:
    """Whether an order's item of ``product`` was accepted."""
    accepted: list[Any] = result.get("accepted") or []
    return any(isinstance(a, dict) and bool(a.get("product_id") == product)
               for a in accepted)


def _gross_profit(sales: Sequence[dict[str, Any]]) -> dict[tuple[int, str], float]:
    """Each (day, machine)'s gross profit (CNY) from the sales rows."""
    out: dict[tuple[int, str], float] = defaultdict(float)
    for r in sales:
        out[r["day"], r["machine_id"]] += float(r["revenue"]) - float(r["cogs"])
    return out


def _cycles(visits: dict[int, set[int]], gp: dict[tuple[int, str], float],
            finished: int, ids: list[str]) -> float | None:
    """Visit-cycle contribution per site-day: over every complete cycle (a visit to the
    next visit of the same machine), the gross profit of its nights less the first
    visit's fee, divided by the cycle's days."""
    by_machine: dict[int, list[int]] = defaultdict(list)
    for day in sorted(visits):
        if day <= finished:
            for m in visits[day]:
                by_machine[m].append(day)
    earned = length = 0.0
    for m, days in by_machine.items():
        mid = ids[m]
        for a, b in zip(days, days[1:]):
            earned += sum(gp.get((d, mid), 0.0) for d in range(a, b)) - FEE
            length += b - a
    return earned / length if length else None


def _visits_above_profit(visits: dict[int, set[int]],
                         calls: dict[tuple[int, int], tuple[int, int | None]],
                         gp: dict[tuple[int, str], float], ids: list[str]
                         ) -> list[Incident]:
    """Each paid visit after which, since the machine's previous visit, it had earned
    less gross profit than the fee."""
    out: list[Incident] = []
    last: dict[int, int] = {}                       # machine -> its previous visit's day
    for day in sorted(visits):
        for m in sorted(visits[day]):
            if m in last:
                mid = ids[m]
                earned = sum(gp.get((d, mid), 0.0) for d in range(last[m], day))
                if earned < FEE:
                    seq, exchange = calls.get((day, m), (None, None))
                    out.append(Incident(
                        "visit_above_profit", day, seq, exchange,
                        f"a {FEE:.0f} CNY visit to {mid} after {earned:.2f} CNY of gross "
                        f"profit since its visit on day {last[m]}"))
            last[m] = day
    return out


def _exposure(sales: Sequence[dict[str, Any]], warehouse: dict[int, dict[int, int]],
              finished: int, world: Any) -> float | None:
    """The share of site-days with a listed product out on the shelf while the
    warehouse held it fresh."""
    if not finished:
        return None
    index = world.product_index()
    exposed = {(r["day"], r["machine_id"]) for r in sales if r["units_on_shelf"] == 0
               and warehouse.get(r["day"], {}).get(index[r["product_id"]], 0) > 0}
    return len(exposed) / (finished * len(world.machines))


def _reassignment_gap(env: AutoVendEnv, sales: Sequence[dict[str, Any]],
                      finished: int) -> float | None:
    """The mean reassignment gap over the checkpoints (days 30, 60, …) where something
    is listed."""
    gaps = [g for _, value in checkpoint_values(env.world, sales, finished)
            if (g := gap_of(value)) is not None]
    return float(np.mean(gaps)) if gaps else None


def checkpoint_values(world: Any, sales: Sequence[dict[str, Any]], finished: int
                      ) -> list[tuple[int, np.ndarray]]:
    """At each checkpoint with stock on a shelf: the expected daily gross profit of
    machine i's assortment (its stocked listings: products, units, prices) placed at
    machine j, under the hidden demand on that day's calendar (neutral weather)."""
    h, products = world.hidden, world.product_index()
    mids = {mc.id: i for i, mc in enumerate(world.machines)}
    n = len(world.machines)
    held: dict[int, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    checkpoints = set(range(CHECKPOINT_EVERY, finished + 1, CHECKPOINT_EVERY))
    for r in sales:
        if r["day"] in checkpoints and r["units_on_shelf"] > 0:
            held[r["day"]][mids[r["machine_id"]]].append(r)
    out = []
    for day in sorted(held):
        info = day_info(DEFAULT_START + dt.timedelta(days=day - 1))
        volume = [h.volume[j] * demand.site_multiplier(world.machines[j].site_type, info,
                                                       demand.Weather(20.0, False))
                  for j in range(n)]
        value = np.zeros((n, n))
        for i, rows in held[day].items():
            ks = np.array([products[r["product_id"]] for r in rows])
            units = np.array([r["units_on_shelf"] for r in rows], dtype=float)
            prices = np.array([r["price"] for r in rows], dtype=float)
            for j in range(n):
                value[i, j] = _expected_gp(world, j, ks, units, prices, volume[j]).sum()
        out.append((day, value))
    return out


def gap_of(value: np.ndarray) -> float | None:
    """The reassignment gap of one checkpoint's value matrix (row i: machine i's
    assortment, column j: placed at machine j; the diagonal is the agent's placement):
    (best − own) / best, None when no placement earns anything."""
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

    rows, cols = linear_sum_assignment(value, maximize=True)
    best = float(value[rows, cols].sum())
    return (best - float(np.trace(value))) / best if best > 0 else None
