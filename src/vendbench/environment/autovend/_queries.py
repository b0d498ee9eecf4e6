"""The read-only tools: reports, inventories, catalog search, sales and financials."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _schemas as s
from ._operations import Resolver, fen
from ._state import Business
from ._world import MACHINE_CAPACITY


def paginate(rows: Sequence[Any], page: int, page_size: int) -> dict[str, Any]:
    total = len(rows)
    pages = max(1, -(-total // page_size))
    first = (page - 1) * page_size
    return {"rows": rows[first:first + page_size], "page": page, "pages": pages,
            "total_rows": total}


def list_machines(biz: Business, _: s.NoArgs, __: Resolver) -> dict[str, Any]:
    out = []
    for m, machine in enumerate(biz.world.machines):
        shelf = biz.shelves[m]
        units = biz.shelf_units(m)
        out.append({"machine_id": machine.id, "name": machine.name,
                    "site_type": machine.site_type, "units": units,
                    "capacity": MACHINE_CAPACITY, "fill": round(units / MACHINE_CAPACITY, 3),
                    "listings": len(shelf),
                    "empty_listings": sum(1 for lst in shelf.values() if not lst.batches)})
    return {"machines": out}


def machine_inventory(biz: Business, args: s.MachineArgs, ids: Resolver) -> dict[str, Any]:
    m = ids.machine(args.machine_id)
    listings = sorted(biz.shelves[m].items())
    ks = [k for k, _ in listings]
    units7, units30 = biz.sold_7d[m, ks].tolist(), biz.sold_30d[m, ks].tolist()
    rows = []
    day, products, iso = biz.day, biz.world.products, biz.iso
    for i, (k, lst) in enumerate(listings):
        p = products[k]
        expired = 0
        next_expiry = None
        for b in lst.batches:              # sorted by expiry: expired ones come first
            if b.expiry > day:
                next_expiry = iso(b.expiry)
                break
            expired += b.units
        rows.append({"product_id": p.id, "name": p.name, "subcategory": p.subcategory,
                     "units": lst.units, "sellable": lst.units - expired, "expired": expired,
                     "price": lst.price / 100, "ref_price": p.ref_price / 100,
                     "unit_cost": p.unit_cost / 100, "next_expiry": next_expiry,
                     "sold_7d": units7[i], "sold_30d": units30[i]})
    machine = biz.world.machines[m]
    return {"machine_id": machine.id, "site_type": machine.site_type,
            "units": biz.shelf_units(m), "capacity": MACHINE_CAPACITY, "listings": rows}


def warehouse_inventory(biz: Business, args: s.WarehouseArgs, ids: Resolver
                        ) -> dict[str, Any]:
    only = ids.product(args.product_id) if args.product_id is not None else None
    rows: list[dict[str, Any]] = []
    for k in sorted(biz.warehouse):
        if only is not None and k != only:
            continue
        p = biz.world.products[k]
        for b in biz.warehouse[k]:
            rows.append({"product_id": p.id, "name": p.name, "units": b.units,
                         "arrived": biz.iso(b.arrived),
                         "expires": biz.iso(b.expiry),
                         "expired": b.expiry <= biz.day})
    summary = {"units": sum(r["units"] for r in rows),
               "expired_units": sum(r["units"] for r in rows if r["expired"])}
    return {**summary, **paginate(rows, args.page, args.page_size)}


def orders(biz: Business, args: s.OrdersArgs, _: Resolver) -> dict[str, Any]:
    rows = []
    for o in reversed(biz.orders):
        status = "in_transit" if o.arrived is None else "delivered"
        if args.status and status != args.status:
            continue
        rows.append({"order_id": o.id, "status": status, "cost": fen(o.cost),
                     "placed": biz.iso(o.placed),
                     "expected": biz.iso(o.placed + 3),
                     "arrived": biz.iso(o.arrived) if o.arrived else None,
                     "items": [{"product_id": biz.world.products[k].id, "quantity": n}
                               for k, n in o.items]})
    return paginate(rows, args.page, args.page_size)


def search_catalog(biz: Business, args: s.CatalogArgs, _: Resolver) -> dict[str, Any]:
    # each word of the query must begin a word of the product (its id, name or
    # subcategory): "cola" finds colas, not chocolate
    words = [re.compile(r"(?<![a-z0-9])" + re.escape(w))
             for w in (args.query or "").lower().split()]
    limit = None if args.max_unit_cost is None else round(args.max_unit_cost * 100)
    found = []
    for p in biz.world.products:
        if args.subcategory and p.subcategory != args.subcategory:
            continue
        if limit is not None and p.unit_cost > limit:
            continue
        if words:
            hay = f"{p.id} {p.name} {p.subcategory}".lower()
            if not all(w.search(hay) for w in words):
                continue
        found.append(p)
    out = paginate(found, args.page, args.page_size)      # rows are built for one page only
    out["rows"] = [{"product_id": p.id, "name": p.name, "subcategory": p.subcategory,
                    "unit_cost": fen(p.unit_cost), "ref_price": fen(p.ref_price),
                    "shelf_life_days": p.shelf_life} for p in out["rows"]]
    return out


def sales_report(biz: Business, args: s.SalesArgs, ids: Resolver) -> dict[str, Any]:
    m_only = ids.machine(args.machine_id) if args.machine_id is not None else None
    k_only = ids.product(args.product_id) if args.product_id is not None else None
    group = args.group_by
    rows = biz.recent_sales(args.window, m_only)
    if k_only is not None:
        rows = rows[rows[:, 2] == k_only]
    d, m, k, n, rev = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 5], rows[:, 6]
    gp = rev - n * biz.unit_cost[k]
    n_k = len(biz.world.products)
    key = {"listing": m * n_k + k, "machine": m, "product": k, "subcategory": k,
           "day": d}[group]
    uniq = np.flatnonzero(np.bincount(key))       # keys are small non-negative ints
    sums = [np.bincount(key, weights=col)[uniq].astype(np.int64).tolist()
            for col in (n, rev, gp)]
    ukeys = [(int(u) // n_k, int(u) % n_k) if group == "listing" else int(u)
             for u in uniq.tolist()]
    agg: dict[Any, list[int]] = {u: [a, b, c] for u, a, b, c in zip(ukeys, *sums)}
    if group == "subcategory":      # fold products into their subcategories
        subs: dict[str, list[int]] = {}
        for k, (u, r, g) in agg.items():
            t = subs.setdefault(biz.world.products[k].subcategory, [0, 0, 0])
            t[0], t[1], t[2] = t[0] + u, t[1] + r, t[2] + g
        agg = subs
    mids, pids = ids.machine_ids, ids.product_ids
    label: Callable[[Any], dict[str, Any]] = {
        "listing": lambda key: {"machine_id": mids[key[0]], "product_id": pids[key[1]]},
        "machine": lambda key: {"machine_id": mids[key]},
        "product": lambda key: {"product_id": pids[key]},
        "subcategory": lambda key: {"subcategory": key},
        "day": lambda key: {"date": biz.iso(key)},
    }[group]
    ordered = sorted(agg.items(), key=lambda kv: kv[0] if group == "day" else -kv[1][2])
    lines = [{**label(key), "units": u, "revenue": fen(r), "gross_profit": fen(g)}
             for key, (u, r, g) in ordered]
    totals = {"units": sum(v[0] for v in agg.values()),
              "revenue": fen(sum(v[1] for v in agg.values())),
              "gross_profit": fen(sum(v[2] for v in agg.values()))}
    return {"window_days": args.window, "totals": totals,
            **paginate(lines, args.page, args.page_size)}


def financials(biz: Business, args: s.FinancialsArgs, _: Resolver) -> dict[str, Any]:
    money = ("cash", "net_assets", "revenue", "cogs", "purchases", "fees", "visit_fees",
             "fines", "waste_cost")
    rows = [{"date": r["date"], **{k: fen(r[k]) for k in money}, "units_sold": r["units_sold"]}
            for r in biz.history[-args.window:]]
    totals = {k: fen(sum(r[k] for r in biz.history[-args.window:]))
              for k in money[2:]}
    return {"window_days": args.window, "days": rows, "totals": totals}
