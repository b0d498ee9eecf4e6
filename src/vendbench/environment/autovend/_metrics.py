"""Operational metrics of an AutoVend trial, from its logged rows (design §4).

The leaderboard hands this module a trial's ``days`` and ``sales`` rows (its ``RECORDS``)
and its ``tool_calls``;
it regenerates the frozen world from the run's ``world_seed`` for the two metrics that
need the hidden demand model:

* pricing regret (CNY per machine per day): for each machine-day, the expected gross
  profit of each listing at its actual price against the best price on a grid of
  0.5–2.0 × its reference price (others' prices held), summed over listings; expected
  sales are λ_m · E(m,t) · MNL share at the observed stock, fill and weather-free
  conditions, capped at the units on the shelf. 0 means no listing could have earned more by its price alone. It grows
  with a machine's volume, so it is also given as a share of what those listings could
  have earned at their best prices (``pricing_regret_share``): volume does not drive it.
* assortment score: for each machine-day, the summed gross-profit potential of the
  products listed — attraction b(m,k) × (reference price − unit cost), proportional to a
  product's expected gross profit at reference prices — divided by that of a reference
  assortment of the same size: the products with the highest potential at that machine.
  1.0 matches the reference.

Both are averaged over machine-days sampled every ``SAMPLE_EVERY`` days. A private
world (salted) can only be regenerated with its salt; without it they are None.

The others come from the logged rows alone; every rate is a fraction (0.25, not 25 %):
waste (cost of expired and discarded units / cost of goods sold), stock-outs (listed
product-days with no unit on the shelf / listed product-days), empty machines
(machine-days with nothing on the shelf at all / machine-days: the days before the first
delivery weigh on it), shelf utilisation, capital efficiency (gross profit per unit of
inventory capital), tool calls per day played (the last, unfinished day included), and
rejected batch items.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import numpy as np

from .._records import Metric, RecordTable
from . import _demand as demand
from ._calendar import DEFAULT_START, day_info
from ._world import MACHINE_CAPACITY, build_world

SAMPLE_EVERY = 7
# metric -> which way is better, for profiles and colours
# how a leaderboard shows them: (metric, header, scale for display, decimals)
# what a trial records day by day (``drain_records``), in the results file
RECORDS = (
    RecordTable("days", (
        ("day", "INTEGER"), ("date", "DATE"), ("cash", "DOUBLE"), ("net_assets", "DOUBLE"),
        ("revenue", "DOUBLE"), ("cogs", "DOUBLE"), ("purchases", "DOUBLE"),
        ("fees", "DOUBLE"), ("visit_fees", "DOUBLE"), ("fines", "DOUBLE"),
        ("waste_cost", "DOUBLE"), ("units_sold", "INTEGER"),
        ("expired_units_sold", "INTEGER"), ("machines_visited", "INTEGER"),
        ("transfers", "DOUBLE"), ("net", "DOUBLE"))),
    RecordTable("sales", (
        ("day", "INTEGER"), ("machine_id", "VARCHAR"), ("product_id", "VARCHAR"),
        ("price", "DOUBLE"), ("units_on_shelf", "INTEGER"), ("units_sold", "INTEGER"),
        ("revenue", "DOUBLE"), ("cogs", "DOUBLE"))),
)
# its operational metrics, each once; the table shows those with a header, in this order
METRICS = (
    Metric("waste_rate", "lower", "waste %", 100, 2, idle_wins=True),
    Metric("stockout_rate", "lower", "stock-outs %", 100, 1, idle_wins=True),
    # beside stock-outs: those count only the products listed, none for an idle operator
    # whose machines stand empty
    Metric("empty_machine_rate", "lower", "empty %", 100, 1),
    Metric("shelf_utilisation", "higher", "util %", 100, 1),
    # a one-day measure that ignores visit fees: the oracle, pricing for fewer visits, shows
    # more of it (docs/metrics.md); it describes, it does not rank (charts leave it grey)
    Metric("pricing_regret_share", "neither", "regret %", 100, 1),
    Metric("assortment_score", "higher", "assort.", 1, 3),
    Metric("capital_efficiency", "higher", "cap. eff", 1, 3, idle_wins=True),
    Metric("tool_calls_per_day", "neither", "calls/day", 1, 1),
    Metric("rejected_item_rate", "lower", "rejected %", 100, 1, idle_wins=True),
    Metric("pricing_regret", "neither"),
)
PRICE_GRID = np.linspace(0.5, 2.0, 16)


def trial_metrics(records: dict[str, list[dict[str, Any]]], tool_calls: list[dict[str, Any]],
                  world_seed: int | None = None, world_salt: str | None = None,
                  private: bool = False) -> dict[str, float | None]:
    """Every operational metric of one trial; None where a metric is undefined. A trial
    of a ``private`` world gets its hidden-model metrics only with ``world_salt``."""
    days, sales = records.get("days", []), records.get("sales", [])
    kwargs = {} if world_seed is None else {"world_seed": world_seed}
    world = build_world(**kwargs, salt=world_salt)
    hidden_known = not private or world_salt is not None
    n_machines = len(world.machines)
    n_days = len(days)
    cogs = sum(d["cogs"] for d in days)
    waste = sum(d["waste_cost"] for d in days)
    gross = sum(d["revenue"] - d["cogs"] for d in days)
    capital = sum(max(0.0, d["net_assets"] - d["cash"]) for d in days)
    stocked: dict[tuple[int, str], float] = {}
    for r in sales:
        key = (r["day"], r["machine_id"])
        stocked[key] = stocked.get(key, 0.0) + r["units_on_shelf"]
    machine_days = n_machines * n_days
    empty = machine_days - sum(1 for v in stocked.values() if v > 0)
    out_of_stock = sum(1 for r in sales if r["units_on_shelf"] == 0)
    accepted = rejected = 0
    for t in tool_calls:
        result = json.loads(t["result_json"]) if t["result_json"] else {}
        if isinstance(result, dict):
            accepted += len(result.get("accepted") or [])
            rejected += len(result.get("rejected") or [])
    # days played: the finished ones, and the one a trial stopped in, if it made calls
    played = max([n_days, *(t["day"] for t in tool_calls if t.get("day") is not None)])
    regret, regret_share, assortment = _hidden_model_metrics(world, sales) \
        if hidden_known else (None, None, None)
    return {
        "waste_rate": waste / cogs if cogs else None,
        "stockout_rate": out_of_stock / len(sales) if sales else None,
        "empty_machine_rate": empty / machine_days if machine_days else None,
        "shelf_utilisation": (sum(stocked.values()) / (machine_days * MACHINE_CAPACITY))
        if machine_days else None,
        "capital_efficiency": (gross / capital) if capital else None,
        "tool_calls_per_day": len(tool_calls) / played if played else None,
        "rejected_item_rate": rejected / (accepted + rejected) if accepted + rejected else None,
        "pricing_regret": regret,
        "pricing_regret_share": regret_share,
        "assortment_score": assortment,
    }


# a world's costs, by the world's identity: a World hashes every product it holds, and
# the hidden-model metrics and diagnostics ask for them thousands of times a trial
_COSTS: dict[int, tuple[Any, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}


def _costs(world: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit costs and reference prices (CNY) of every product, and a neutral weather."""
    hit = _COSTS.get(id(world))
    if hit is not None and hit[0] is world:
        return hit[1]
    cost = np.array([p.unit_cost for p in world.products], dtype=float) / 100
    ref = np.array([p.ref_price for p in world.products], dtype=float) / 100
    if len(_COSTS) >= 8:
        _COSTS.clear()
    _COSTS[id(world)] = (world, (cost, ref, np.ones(len(world.products))))
    return _COSTS[id(world)][1]


def _expected_gp(world: Any, m: int, ks: np.ndarray, units: np.ndarray, prices: np.ndarray,
                 volume: float) -> np.ndarray:
    """Expected gross profit per listing per day (CNY) under the hidden MNL: expected
    buyers, but never more units than are on the shelf (a dear price that rations scarce
    stock loses nothing)."""
    cost, ref, neutral = _costs(world)
    fill = min(1.0, units.sum() / MACHINE_CAPACITY)
    share = demand.choice_probabilities(world.hidden, m, ks, units, prices, ref[ks], fill,
                                        neutral)
    profit: np.ndarray = np.minimum(volume * share, units) * (prices - cost[ks])
    return profit


def _best_single_price_gp(world: Any, m: int, ks: np.ndarray, units: np.ndarray,
                          prices: np.ndarray, volume: float) -> np.ndarray:
    """Per listing, the best expected gross profit over the price grid, the other
    listings' prices held (vectorised: listings × grid)."""
    h = world.hidden
    cost, ref_all, neutral = _costs(world)
    ref, cost = ref_all[ks], cost[ks]
    fill = min(1.0, units.sum() / MACHINE_CAPACITY)
    base = demand.attraction(h, m, ks, units, ref, ref, fill, neutral)   # at p = p̄
    eps = h.elasticity[m]
    w_now = base * (prices / ref) ** (-eps)
    others = w_now.sum() - w_now                                   # (n,)
    grid = np.round(ref[:, None] * PRICE_GRID[None, :], 2)         # (n, g)
    w = base[:, None] * (grid / ref[:, None]) ** (-eps)
    share = w / (h.no_purchase[m] + others[:, None] + w)
    best: np.ndarray = (np.minimum(volume * share, units[:, None])
                        * (grid - cost[:, None])).max(axis=1)
    return best


def _hidden_model_metrics(world: Any, sales: list[dict[str, Any]]
                          ) -> tuple[float | None, float | None, float | None]:
    """Pricing regret (CNY per machine-day, and as a share of the best achievable gross
    profit) and the assortment score."""
    if not sales:
        return None, None, None
    mids = {mc.id: i for i, mc in enumerate(world.machines)}
    pids = world.product_index()
    h = world.hidden
    cost, ref, _ = _costs(world)
    ref_gp = h.attraction * (ref - cost)[None, :]             # GP potential at p̄, (M, K)
    ranked = np.sort(ref_gp, axis=1)[:, ::-1]
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for r in sales:
        if r["day"] % SAMPLE_EVERY == 1 and r["units_on_shelf"] > 0:
            groups.setdefault((r["day"], mids[r["machine_id"]]), []).append(r)
    regrets, shares, scores = [], [], []
    for (day, m), rows in groups.items():
        info = day_info(DEFAULT_START + dt.timedelta(days=day - 1))
        site = world.machines[m].site_type
        volume = h.volume[m] * demand.site_multiplier(site, info, demand.Weather(20.0, False))
        ks = np.array([pids[r["product_id"]] for r in rows])
        units = np.array([r["units_on_shelf"] for r in rows], dtype=float)
        prices = np.array([r["price"] for r in rows], dtype=float)
        actual = _expected_gp(world, m, ks, units, prices, volume)
        best = np.maximum(actual, _best_single_price_gp(world, m, ks, units, prices, volume))
        regrets.append(float((best - actual).sum()))
        achievable = float(best.sum())
        if achievable > 0:
            shares.append(regrets[-1] / achievable)
        scores.append(float(ref_gp[m, ks].sum() / ranked[m, :len(ks)].sum()))
    if not regrets:
        return None, None, None
    return (float(np.mean(regrets)), float(np.mean(shares)) if shares else None,
            float(np.mean(scores)))
