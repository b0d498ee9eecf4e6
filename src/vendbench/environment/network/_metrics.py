"""The network scenario's operational metrics, from a trial's logged rows."""

from __future__ import annotations

import json
from typing import Any

from .._records import Metric, RecordTable
from ._config import load

# what a trial records day by day (``drain_records``): the days and sales tables AutoVend
# also records, with the network's own columns (the others stay empty for its trials)
RECORDS = (
    RecordTable("days", (
        ("day", "INTEGER"), ("date", "DATE"), ("cash", "DOUBLE"), ("net_assets", "DOUBLE"),
        ("revenue", "DOUBLE"), ("cogs", "DOUBLE"), ("purchases", "DOUBLE"),
        ("fees", "DOUBLE"), ("units_sold", "INTEGER"), ("units_expired", "INTEGER"),
        ("waste_cost", "DOUBLE"), ("net", "DOUBLE"))),
    RecordTable("sales", (
        ("day", "INTEGER"), ("machine_id", "VARCHAR"), ("product_id", "VARCHAR"),
        ("price", "DOUBLE"), ("units_on_shelf", "INTEGER"), ("units_sold", "INTEGER"),
        ("revenue", "DOUBLE"), ("cogs", "DOUBLE"))),
)
# how a leaderboard shows them: (metric, header, scale for display, decimals)
# its operational metrics, each once, in the table's order
METRICS = (
    Metric("profit", "higher", "profit", 1, 0),
    # won by an operator that does nothing (nothing listed, bought, marketed or sold):
    # they rank only operators that ran the business (design §34.3)
    Metric("stockout_rate", "lower", "sold out %", 100, 1, idle_wins=True),
    Metric("waste_rate", "lower", "waste %", 100, 1, idle_wins=True),
    Metric("marketing_spend", "lower", "marketing", 1, 2, idle_wins=True),
    Metric("refunds", "lower", "refunds", 1, 2, idle_wins=True),
    Metric("working_hours_use", "higher", "hours used %", 100, 1),
    Metric("tool_calls_per_day", "neither", "calls/day", 1, 1),
    Metric("rejected_call_rate", "lower", "rejected %", 100, 1, idle_wins=True),
)


def trial_metrics(records: dict[str, list[dict[str, Any]]], tool_calls: list[dict[str, Any]],
                  world_seed: int | None = None, world_salt: str | None = None,
                  private: bool = False) -> dict[str, float | None]:
    days, sales = records.get("days", []), records.get("sales", [])
    eco = load()
    start = eco["economy"]["start_cash"] / 100
    played = len(days)
    listed = [s for s in sales if s["units_on_shelf"]]
    spent = {"run_marketing": 0.0, "send_payment": 0.0}
    minutes = 0
    for c in tool_calls:
        if not c["ok"]:
            continue
        result = json.loads(c["result_json"])
        minutes += result.get("minutes", eco["clock"]["cost"].get(c["name"], 0))
        if c["name"] in spent:
            spent[c["name"]] += result.get("paid", 0.0)
    hours = (eco["clock"]["close"] - eco["clock"]["open"]) * max(played, 1)
    return {
        # the score's own quantity: the bank at the last day (the final balance once the
        # trial completes) less the starting cash; stock bought and unsold is no profit
        "profit": days[-1]["cash"] - start if days else None,
        "stockout_rate": (sum(s["units_sold"] >= s["units_on_shelf"] for s in listed)
                          / len(listed)) if listed else None,
        "waste_rate": _waste_rate(days),
        "marketing_spend": spent["run_marketing"], "refunds": spent["send_payment"],
        "working_hours_use": minutes / hours if played else None,
        "tool_calls_per_day": len(tool_calls) / played if played else None,
        "rejected_call_rate": (sum(not c["ok"] for c in tool_calls) / len(tool_calls))
        if tool_calls else None}


def _waste_rate(days: list[dict[str, Any]]) -> float | None:
    """The cost of the units written off past their sell-by day, per euro of purchases
    (None before any purchase, or for a trial recorded before stock expired)."""
    bought = sum(d["purchases"] for d in days)
    wasted = [d.get("waste_cost") for d in days]
    if not bought or any(w is None for w in wasted):
        return None
    rate: float = sum(w for w in wasted if w is not None) / bought
    return rate
