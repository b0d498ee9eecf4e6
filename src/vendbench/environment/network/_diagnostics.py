"""The network world's diagnostics (design §32.1): those of the AutoVend paper that apply
to six machines run from one depot in a working day, from a trial's stored rows and
its world replayed (no model, no cost).

* empty-site exposure: the share of machine-days on which a machine had a slot of a
  product with no unit left in it while the depot held units of that product;
* growth early and late (net assets, the paper's windows scaled to the horizon) and
  days until sales stop, from the day rows (``_diagnostics``);
* failure modes: every world's (``call_incidents``), an order while the depot and the
  shipments on their way hold more of the product than its last 30 days' sales say
  will sell over the supplier's lead time plus a week (beyond a safety stock; none
  before day 31), and an e-mail to an address that is no supplier's (nor a
  complaining customer's).

Not here, and why (``NOT_APPLICABLE``): the reassignment gap (two kinds of machine, a
drinks machine's assortment cannot stand in a snack machine, and three locations) and
the visit-cycle contribution and paid visits (no visit fee: restocking costs working
time). An order placed by e-mail is not read for the cover (its quantities are free
text).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, cast

from .._diagnostics import (GENERIC_MODES, Diagnosis, Diagnostic, FailureMode, Incident,
                            begin, day_diagnostics)
from .._protocol import Environment
from .._session import DAY_OVER, RecordingSession
from ._env import NetworkEnv

SALES_WINDOW = 30                  # days of sales a cover is read against (none before)
COVER_SLACK = 7                    # a week beyond the supplier's lead time
SPARE_UNITS = 10                   # units a cover may hold beyond its safety stock
UNKNOWN = re.compile(r"^(unknown tool|no slot|no product|no location)")
NOT_A_SUPPLIER = "no known address"
# the tools that change the world (the rest read it, or keep notes)
ACTIONS = frozenset({"order_goods", "restock_machine", "swap_item", "set_price",
                     "clear_slot", "send_payment", "run_marketing", "send_email"})

DIAGNOSTICS = (
    Diagnostic("empty_site_exposure", "lower", "empty+depot %", 100, 1, "AutoVend §5.4",
               "share of machine-days"),
    *day_diagnostics("EUR", 2),
)
FAILURE_MODES = GENERIC_MODES + (
    FailureMode("bought_while_covered", "covered buys", "an order while the depot and the "
                "shipments on their way hold more of the product than sells over the "
                "supplier's lead time plus a week at its last 30 days' rate (beyond three "
                "standard deviations and 10 units; none before day 31)"),
    FailureMode("email_not_a_supplier", "bad e-mail", "an e-mail to an address that is no "
                "supplier's (nor a complaining customer's)", "Vending-Bench"),
)
NOT_APPLICABLE = {
    "reassignment_gap": "two kinds of machine at three locations: a drinks machine's "
                        "assortment cannot stand in a snack machine",
    "visit_cycle_contribution": "no visit fee: restocking costs working time",
    "visit_above_profit": "no visit fee: restocking costs working time",
}


def diagnose(records: dict[str, list[dict[str, Any]]], calls: Sequence[dict[str, Any]], *,
             seed: int, world_seed: int, days: int, initial: float,
             world_salt: str | None = None, private: bool = False) -> Diagnosis:
    """One trial's diagnostics (as AutoVend's ``diagnose``)."""
    day_rows, sales = records.get("days", []), records.get("sales", [])
    finished = len(day_rows)
    out = begin(DIAGNOSTICS, day_rows, calls, actions=ACTIONS, day_tool="wait_for_next_day",
                unknown=UNKNOWN, days=days, initial=initial, refusal=DAY_OVER,
                not_applicable=NOT_APPLICABLE)
    out.incidents += [Incident("email_not_a_supplier", i.day, i.call, i.exchange, i.detail)
                      for i in out.incidents if i.kind == "rejected_call"
                      and i.detail.startswith(f"send_email: {NOT_A_SUPPLIER}")]
    if private and world_salt is None:
        out.notes.append("a private world: its replay needs its salt (VENDBENCH_WORLD_SALT)")
        return out
    exposed, machines, covered = _replay(calls, seed, world_seed, days, world_salt,
                                         _sold(sales))
    out.values["empty_site_exposure"] = len(exposed) / (finished * machines) \
        if finished else None
    out.incidents += covered
    out.incidents.sort(key=lambda i: (i.day, i.call if i.call is not None else 1 << 40))
    return out


def _sold(sales: Sequence[dict[str, Any]]) -> dict[str, dict[int, int]]:
    """Units of each product sold each day."""
    out: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for r in sales:
        out[r["product_id"]][r["day"]] += int(r["units_sold"])
    return out


def _replay(calls: Sequence[dict[str, Any]], seed: int, world_seed: int, days: int,
            salt: str | None, sold: dict[str, dict[int, int]]
            ) -> tuple[set[tuple[int, str]], int, list[Incident]]:
    """The machine-days with a slot empty of its product while the depot held it (the
    night's shelves, before customers buy; the sales rows list stocked slots only), the
    machines, and the orders placed while the product was covered."""
    env = NetworkEnv(seed=seed, days=days, world_seed=world_seed,
                     **({"world_salt": salt} if salt else {}))
    exposed: set[tuple[int, str]] = set()
    night = env._night

    def noted_night() -> dict[str, Any]:                    # before customers buy
        held = env.depot
        exposed.update((env._day, s.machine) for s in env.slots.values()
                       if s.product is not None and s.units == 0 and held.get(s.product))
        return night()

    env._night = noted_night                                   # type: ignore[method-assign]
    session = RecordingSession(cast(Environment, env))
    covered: list[Incident] = []
    for c in calls:
        name, day = c["name"], c["day"]
        cover = _covers(env, c["args_json"], sold) if name == "order_goods" \
            and not env.done and env.day == day else []
        result = session.call(name, c["args_json"], day=day)
        if result.get("ok") is True:
            covered += [Incident("bought_while_covered", day, c["seq"], c.get("exchange_seq"),
                                 text) for text in cover]
    return exposed, len({s.machine for s in env.slots.values()}), covered


def _covers(env: NetworkEnv, args_json: Any, sold: dict[str, dict[int, int]]
            ) -> list[str]:
    """For each product an order names that its stock already covers, why (in words)."""
    day = env.day
    if day <= SALES_WINDOW:
        return []
    try:
        args = json.loads(args_json) if isinstance(args_json, str) else args_json
        supplier = env.eco.suppliers.get(args["supplier_id"])
        items = args["items"]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []
    if supplier is None or not isinstance(items, list):
        return []
    out, held_now = [], env.depot
    for item in items:
        product = item.get("product_id") if isinstance(item, dict) else None
        if product not in env.eco.products:
            continue
        held = held_now.get(product, 0) + sum(
            s.quantity for s in env.shipments if s.product == product and s.arrives is not None)
        lead = supplier.lead_days + COVER_SLACK
        recent = sum(n for d, n in sold.get(product, {}).items() if day - SALES_WINDOW <= d < day)
        expected = recent / SALES_WINDOW * lead
        if held > expected + 3 * math.sqrt(expected) + SPARE_UNITS:
            out.append(f"ordered {item.get('quantity')} of {product} with {held} units in "
                       f"the depot and on their way, where {expected:.1f} would sell in "
                       f"{lead} days at its last 30 days' rate")
    return out
