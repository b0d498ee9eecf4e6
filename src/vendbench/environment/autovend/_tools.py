"""The 18 agent tools: their schemas, batch validation and dispatch.

A tool call goes: JSON arguments -> the tool's pydantic model (strict, no unknown keys)
-> for batch tools, each item validated and executed on its own -> a JSON-able dict
with ``ok`` and, on failure, an ``error`` that says what was wrong and how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ...errors import ToolError
from . import _operations as ops
from . import _queries as q
from .._arguments import describe_errors, openai_schema
from . import _schemas as s
from ._report import daily_report
from ._state import Business


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    kind: str                       # query | remote | physical | memory
    description: str
    model: type[BaseModel]          # the whole call's arguments: schema and validation
    run: Callable[..., dict[str, Any]] | None = None   # non-batch handler (biz, args, ids)
    item: type[BaseModel] | None = None           # batch tools: one item's model
    op: Callable[..., dict[str, Any]] | None = None    # batch tools: one item's operation

    def schema(self) -> dict[str, Any]:
        return openai_schema(self.name, f"[{self.kind}] {self.description}", self.model)


def _batch(tool: Tool, biz: Business, raw: dict[str, Any], ids: ops.Resolver
           ) -> dict[str, Any]:
    items = raw.get("items")
    extra = sorted(set(raw) - {"items"})
    if extra or not isinstance(items, list) or not 1 <= len(items) <= s.MAX_BATCH \
            or not all(isinstance(i, dict) for i in items):
        why = (f"unknown argument(s) {extra}" if extra else
               "'items' must be a list of 1–100 objects" if not isinstance(items, list)
               or not all(isinstance(i, dict) for i in items)
               else f"'items' holds {len(items)} entries; send 1–100 per call")
        return {"ok": False, "error": f"{tool.name}: malformed batch, nothing done: {why}"}
    accepted, rejected = [], []
    context: dict[str, Any] = {}      # shared by the items of one call (the purchase order)
    try:                              # all at once when all are well-formed (the usual case)
        checked: list[Any] | None = _list_adapter(tool.item).validate_python(items)
    except ValidationError:
        checked = None                # one by one, so that each bad item gets its reason
    op, model = tool.op, tool.item
    assert op is not None and model is not None             # a batch tool has both
    for index, item in enumerate(checked if checked is not None else items):
        try:
            if checked is None:
                item = model.model_validate(item)
            result = op(biz, ids, item, context)
        except ValidationError as exc:
            rejected.append({"index": index, "reason": describe_errors(exc, f"items[{index}].")})
        except ToolError as exc:
            rejected.append({"index": index, "reason": str(exc)})
        else:
            accepted.append({"index": index, **result})
    out: dict[str, Any] = {"ok": not rejected, "accepted": accepted, "rejected": rejected}
    if rejected:
        out["error"] = (f"{len(rejected)} of {len(items)} items rejected (they changed nothing); "
                        "see 'rejected' for each reason")
    return out


@cache
def _list_adapter(item: type[BaseModel]) -> TypeAdapter[Any]:
    return TypeAdapter(list[item])  # type: ignore[valid-type]


def _order(biz: Business, ids: ops.Resolver, it: s.OrderItem, ctx: dict[str, Any]
           ) -> dict[str, Any]:
    k = ids.product(it.product_id)
    order = ctx["order"] = ops.place_order(biz, k, it.quantity, ctx.get("order"))
    return {"order_id": order.id, "product_id": it.product_id, "quantity": it.quantity,
            "cost": ops.fen(it.quantity * biz.cost[k]),
            "expected_arrival": biz.iso(order.placed + 3)}


def _price(biz: Business, ids: ops.Resolver, it: s.PriceItem, _: dict[str, Any]
           ) -> dict[str, Any]:
    return ops.set_price(biz, ids.machine(it.machine_id), ids.product(it.product_id), it.price)


def _discard(biz: Business, ids: ops.Resolver, it: s.DiscardItem, _: dict[str, Any]
             ) -> dict[str, Any]:
    return ops.discard(biz, ids.product(it.product_id), it.quantity)


def _restock(biz: Business, ids: ops.Resolver, it: s.StockItem, _: dict[str, Any]
             ) -> dict[str, Any]:
    return ops.restock(biz, ids.machine(it.machine_id), ids.product(it.product_id), it.quantity)


def _remove(biz: Business, ids: ops.Resolver, it: s.StockItem, _: dict[str, Any]
            ) -> dict[str, Any]:
    return ops.remove_stock(biz, ids.machine(it.machine_id), ids.product(it.product_id),
                            it.quantity)


def _delist(biz: Business, ids: ops.Resolver, it: s.DelistItem, _: dict[str, Any]
            ) -> dict[str, Any]:
    return ops.delist(biz, ids.machine(it.machine_id), ids.product(it.product_id))


def _read_notes(biz: Business, _: s.NoArgs, __: ops.Resolver) -> dict[str, Any]:
    return {"text": biz.notes, "chars": len(biz.notes), "limit": s.MAX_NOTES}


def _write_notes(biz: Business, args: s.NotesArgs, _: ops.Resolver) -> dict[str, Any]:
    biz.notes = args.text
    return {"chars": len(args.text), "limit": s.MAX_NOTES}


def _report(biz: Business, _: s.NoArgs, __: ops.Resolver) -> dict[str, Any]:
    return {"report": daily_report(biz)}


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("get_daily_report", "query", "Today's daily report again.", s.NoArgs, _report),
    Tool("list_machines", "query", "All machines: site type, units/capacity, fill, listings.",
         s.NoArgs, q.list_machines),
    Tool("get_machine_inventory", "query", "One machine's listings: units, sellable, expired, "
         "price, reference price, unit cost, next expiry, units sold in the last 7 and 30 days.",
         s.MachineArgs, q.machine_inventory),
    Tool("get_warehouse_inventory", "query", "Warehouse batches: units, arrival, expiry, "
         "expired. Paginated.", s.WarehouseArgs, q.warehouse_inventory),
    Tool("get_orders", "query", "Purchase orders in transit or delivered. Paginated.",
         s.OrdersArgs, q.orders),
    Tool("search_catalog", "query", "Search the 1,372-SKU catalog: unit cost, reference price, "
         "shelf life. Paginated.", s.CatalogArgs, q.search_catalog),
    Tool("get_sales_report", "query", "Units, revenue and gross profit over the last 1, 3, 7 "
         "or 30 days, grouped by listing, machine, product, subcategory or day. Paginated.",
         s.SalesArgs, q.sales_report),
    Tool("get_financials", "query", "Profit-and-loss lines by day over the last 1, 3, 7 or 30 "
         "days.", s.FinancialsArgs, q.financials),
    Tool("query_sql", "query", "One read-only SQL SELECT over your own records (views: catalog, "
         "machines, sales, daily_pnl, orders, machine_inventory, warehouse); at most 50 rows.",
         s.SqlArgs, None),
    Tool("place_order", "remote", "Buy stock for the warehouse: cash is debited now, the order "
         "arrives in about 3 days.", s.batch_of(s.OrderItem, "PlaceOrderArgs"),
         item=s.OrderItem, op=_order),
    Tool("set_price", "remote", "Set listing prices, 0.5–2.0 × the reference price.",
         s.batch_of(s.PriceItem, "SetPriceArgs"), item=s.PriceItem, op=_price),
    Tool("discard", "remote", "Write off warehouse units, expired ones first.",
         s.batch_of(s.DiscardItem, "DiscardArgs"), item=s.DiscardItem, op=_discard),
    Tool("end_day", "remote", "Close today's action window; customers buy overnight.",
         s.NoArgs, None),
    Tool("restock", "physical", "Move warehouse units (earliest expiry first) onto a machine; "
         "lists the product if new. Costs a 35 CNY visit per machine per day.",
         s.batch_of(s.StockItem, "RestockArgs"), item=s.StockItem, op=_restock),
    Tool("remove_stock", "physical", "Move units (oldest first) from a machine back to the "
         "warehouse. Costs a visit.", s.batch_of(s.StockItem, "RemoveStockArgs"),
         item=s.StockItem, op=_remove),
    Tool("delist", "physical", "Remove a listing: sellable units return to the warehouse, "
         "expired ones are written off. Costs a visit.",
         s.batch_of(s.DelistItem, "DelistArgs"), item=s.DelistItem, op=_delist),
    Tool("read_notes", "memory", "Read your notebook.", s.NoArgs, _read_notes),
    Tool("write_notes", "memory", "Replace your notebook (at most 6,000 characters; a longer "
         "text is rejected and the old notes stay).", s.NotesArgs, _write_notes),
)}
MUTATING = frozenset(n for n, t in TOOLS.items() if t.kind in ("remote", "physical"))
