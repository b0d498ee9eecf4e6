"""The daily report: the observation the agent receives at the start of each day."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._operations import fen
from ._state import Business
from ._world import MACHINE_CAPACITY


def _pnl_line(label: str, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return f"{label}: no trading yet"
    t = {k: sum(r[k] for r in rows) for k in ("revenue", "cogs", "fees", "visit_fees", "fines",
                                              "waste_cost", "net", "units_sold")}
    return (f"{label}: revenue {fen(t['revenue']):,.2f}, cost of goods {fen(t['cogs']):,.2f}, "
            f"fees {fen(t['fees']):,.2f}, visits {fen(t['visit_fees']):,.2f}, "
            f"fines {fen(t['fines']):,.2f}, waste {fen(t['waste_cost']):,.2f} "
            f"-> net {fen(t['net']):+,.2f} ({t['units_sold']} units)")


def daily_report(biz: Business) -> str:
    """Render today's report as text (amounts in CNY)."""
    if biz.done:
        return (f"The trial is over ({biz.status}) after day {biz.day}. "
                f"Final cash {fen(biz.cash):,.2f} CNY, net assets {fen(biz.net_assets()):,.2f} CNY.")
    info, day = biz.info, biz.day
    yesterday = [r for r in biz.history[-1:]]
    lines = [
        f"Day {day} of {biz.horizon} — {info.date.isoformat()} ({info.weekday})"
        + (f", public holiday: {info.holiday}" if info.holiday else "")
        + (", campus break" if info.campus_break else ""),
        f"Weather in Shanghai today: {biz.weather.describe()}",
        f"Cash {fen(biz.cash):,.2f} CNY; net assets {fen(biz.net_assets()):,.2f} CNY "
        f"(today's fees of {fen(biz.today.fees):,.2f} already charged)",
        _pnl_line("Yesterday", yesterday),
        _pnl_line("Last 7 days", biz.history[-7:]),
    ]
    wh_units, wh_value, soon, expired = biz.warehouse_summary()
    lines.append(f"Warehouse: {wh_units} units worth {fen(wh_value):,.2f}; {soon} expire within "
                 f"7 days; {expired} expired (discard them to stop paying rent)")
    transit = biz.open_orders()
    lines.append(f"Orders in transit: {len(transit)} orders, "
                 f"{sum(n for o in transit for _, n in o.items)} units")
    sold: dict[int, tuple[int, int]] = {}
    if biz.sales:
        rows, n_m = biz.sales[-1], len(biz.shelves)
        units = np.bincount(rows[:, 1], weights=rows[:, 5], minlength=n_m).astype(np.int64)
        revenue = np.bincount(rows[:, 1], weights=rows[:, 6], minlength=n_m).astype(np.int64)
        sold = {m: (int(units[m]), int(revenue[m])) for m in range(n_m)}
    lines.append("Machines (units/capacity, listings, yesterday units & revenue, empty "
                 "listings, expired units on shelf):")
    for m, machine in enumerate(biz.world.machines):
        shelf = biz.shelves[m]
        sold_units, sold_revenue = sold.get(m, (0, 0))
        empty = exp = 0
        for lst in shelf.values():
            batches = lst.batches
            if not batches:
                empty += 1
            elif batches[0].expiry <= day:     # sorted by expiry: expired ones come first
                exp += sum(b.units for b in batches if b.expiry <= day)
        lines.append(f"  {machine.id} {machine.name} [{machine.site_type}]: "
                     f"{biz.shelf_units(m)}/{MACHINE_CAPACITY}, {len(shelf)} listed, "
                     f"sold {sold_units} for {fen(sold_revenue):,.2f}, {empty} empty, "
                     f"{exp} expired")
    return "\n".join(lines)
