"""The read-only tools: reports, inventories, catalog search, sales and financials."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from . import _schemas as s
from ._operations import Resolver, fen
from ._state import Business
from ._world import MACHINE_CAPACITY


def paginate(rows: list[dict], page: int, page_size: int) -> dict[str, Any]:
    total = len(rows)
    pages = max(1, -(-total // page_size))
    first = (page - 1) * page_size
    return {"rows": rows[first:first + page_size], "page": page, "pages": pages,
            "total_rows": total}


def list_machines(biz: Business, _: s.NoArgs, __: Resolver) -> dict:
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


def machine_inventory(biz: Business, args: s.MachineArgs, ids: Resolver) -> dict:
    m = ids.machine(args.machine_id)
    sold7: dict[int, int] = defaultdict(int)
    for _, mm, k, _, _, n, _, _ in biz.recent_sales(7):
        if mm == m:
            sold7[k] += n
    rows = []
    for k, lst in sorted(biz.shelves[m].items()):
        p = biz.world.products[k]
        expired = sum(b.units for b in lst.batches if b.expiry <= biz.day)
        fresh = [b.expiry for b in lst.batches if b.expiry > biz.day]
        rows.append({"product_id": p.id, "name": p.name, "subcategory": p.subcategory,
                     "units": lst.units, "sellable": lst.units - expired, "expired": expired,
                     "price": fen(lst.price), "ref_price": fen(p.ref_price),
                     "unit_cost": fen(p.unit_cost),
                     "next_expiry": biz.date_of(min(fresh)).isoformat() if fresh else None,
                     "sold_7d": sold7.get(k, 0)})
    machine = biz.world.machines[m]
    return {"machine_id": machine.id, "site_type": machine.site_type,
            "units": biz.shelf_units(m), "capacity": MACHINE_CAPACITY, "listings": rows}


def warehouse_inventory(biz: Business, args: s.WarehouseArgs, ids: Resolver) -> dict:
    only = ids.product(args.product_id) if args.product_id is not None else None
    rows = []
    for k in sorted(biz.warehouse):
        if only is not None and k != only:
            continue
        p = biz.world.products[k]
        for b in biz.warehouse[k]:
            rows.append({"product_id": p.id, "name": p.name, "units": b.units,
                         "arrived": biz.date_of(b.arrived).isoformat(),
                         "expires": biz.date_of(b.expiry).isoformat(),
                         "expired": b.expiry <= biz.day})
    summary = {"units": sum(r["units"] for r in rows),
               "expired_units": sum(r["units"] for r in rows if r["expired"])}
    return {**summary, **paginate(rows, args.page, args.page_size)}


def orders(biz: Business, args: s.OrdersArgs, _: Resolver) -> dict:
    rows = []
    for o in reversed(biz.orders):
        status = "in_transit" if o.arrived is None else "delivered"
        if args.status and status != args.status:
            continue
        for k, n in o.items:
            rows.append({"order_id": o.id, "product_id": biz.world.products[k].id,
                         "quantity": n, "cost": fen(o.cost), "status": status,
                         "placed": biz.date_of(o.placed).isoformat(),
                         "expected": biz.date_of(o.placed + 3).isoformat(),
                         "arrived": biz.date_of(o.arrived).isoformat() if o.arrived else None})
    return paginate(rows, args.page, args.page_size)


def search_catalog(biz: Business, args: s.CatalogArgs, _: Resolver) -> dict:
    words = (args.query or "").lower().split()
    limit = None if args.max_unit_cost is None else round(args.max_unit_cost * 100)
    rows = []
    for p in biz.world.products:
        if args.subcategory and p.subcategory != args.subcategory:
            continue
        if limit is not None and p.unit_cost > limit:
            continue
        hay = f"{p.id} {p.name} {p.subcategory}".lower()
        if any(w not in hay for w in words):
            continue
        rows.append({"product_id": p.id, "name": p.name, "subcategory": p.subcategory,
                     "unit_cost": fen(p.unit_cost), "ref_price": fen(p.ref_price),
                     "shelf_life_days": p.shelf_life})
    return paginate(rows, args.page, args.page_size)


def sales_report(biz: Business, args: s.SalesArgs, ids: Resolver) -> dict:
    m_only = ids.machine(args.machine_id) if args.machine_id is not None else None
    k_only = ids.product(args.product_id) if args.product_id is not None else None
    w, mids = biz.world, [m.id for m in biz.world.machines]
    keyers = {
        "listing": lambda d, m, k: (mids[m], w.products[k].id),
        "machine": lambda d, m, k: (mids[m],),
        "product": lambda d, m, k: (w.products[k].id,),
        "subcategory": lambda d, m, k: (w.products[k].subcategory,),
        "day": lambda d, m, k: (biz.date_of(d).isoformat(),),
    }
    names = {"listing": ("machine_id", "product_id"), "machine": ("machine_id",),
             "product": ("product_id",), "subcategory": ("subcategory",), "day": ("date",)}
    key_of = keyers[args.group_by]
    agg: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for d, m, k, _, _, n, rev, _ in biz.recent_sales(args.window):
        if (m_only is not None and m != m_only) or (k_only is not None and k != k_only):
            continue
        a = agg[key_of(d, m, k)]
        a[0] += n
        a[1] += rev
        a[2] += rev - n * int(biz.unit_cost[k])
    rows = [{**dict(zip(names[args.group_by], key)), "units": u, "revenue": fen(r),
             "gross_profit": fen(g)} for key, (u, r, g) in agg.items()]
    rows.sort(key=lambda r: (r["date"],) if args.group_by == "day" else (-r["gross_profit"],))
    totals = {"units": sum(v[0] for v in agg.values()),
              "revenue": fen(sum(v[1] for v in agg.values())),
              "gross_profit": fen(sum(v[2] for v in agg.values()))}
    return {"window_days": args.window, "totals": totals,
            **paginate(rows, args.page, args.page_size)}


def financials(biz: Business, args: s.FinancialsArgs, _: Resolver) -> dict:
    money = ("cash", "net_assets", "revenue", "cogs", "purchases", "fees", "visit_fees",
             "fines", "waste_cost")
    rows = [{"date": r["date"], **{k: fen(r[k]) for k in money}, "units_sold": r["units_sold"]}
            for r in biz.history[-args.window:]]
    totals = {k: fen(sum(r[k] for r in biz.history[-args.window:]))
              for k in money[2:]}
    return {"window_days": args.window, "days": rows, "totals": totals}
