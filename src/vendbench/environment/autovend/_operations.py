"""Item-level business operations: check one item, then execute it, or raise ToolError.

Each function either changes the state completely or not at all: every check runs
before the first mutation, so a rejected item leaves no trace (and triggers no visit).
"""

from __future__ import annotations

from typing import Any

from ...errors import ToolError
from ._state import LEAD_TIME, Business, Order
from ._stock import Listing
from ._world import MACHINE_CAPACITY, MAX_LISTINGS
from . import _demand as demand

MAX_ORDER_UNITS = 10_000


def fen(amount: int) -> float:
    """Fen to CNY for display. Division is correctly rounded, so the float's shortest
    repr is the exact two-decimal amount for any int below 2**53."""
    return amount / 100


class Resolver:
    """Turns the ids an agent sends into indices, with errors that say what exists."""

    def __init__(self, biz: Business) -> None:
        world = biz.world
        self.products = world.product_index()
        self.machines = {m.id: i for i, m in enumerate(world.machines)}
        self.product_ids = [p.id for p in world.products]      # index -> id
        self.machine_ids = [m.id for m in world.machines]

    def product(self, product_id: str) -> int:
        try:
            return self.products[product_id]
        except KeyError:
            raise ToolError(f"unknown product_id {product_id!r}: ids look like 'P0042' "
                            "(P0001–P1372); use search_catalog to find them") from None

    def machine(self, machine_id: str) -> int:
        try:
            return self.machines[machine_id]
        except KeyError:
            raise ToolError(f"unknown machine_id {machine_id!r}: ids are M01–M20; "
                            "use list_machines") from None


def place_order(biz: Business, k: int, quantity: int, order: Order | None) -> Order:
    """Add one line to this call's purchase order (created on the first accepted line)."""
    if quantity > MAX_ORDER_UNITS:
        raise ToolError(f"quantity {quantity} is over the {MAX_ORDER_UNITS} units allowed per item")
    cost = quantity * biz.cost[k]
    if cost > biz.cash:
        raise ToolError(f"not enough cash: {quantity} units cost {fen(cost):.2f} CNY, "
                        f"cash is {fen(biz.cash):.2f} CNY")
    if order is None:
        order_no = len(biz.orders) + 1
        due = biz.day + LEAD_TIME + demand.delivery_delay(biz.seed, order_no)
        order = Order(f"O{order_no:05d}", biz.day, due, [], 0)
        biz.orders.append(order)
    order.items.append((k, quantity))
    order.cost += cost
    biz.cash -= cost
    biz.today.purchases += cost
    biz.in_transit += cost
    biz.units.ordered += quantity
    return order


def set_price(biz: Business, m: int, k: int, price: float) -> dict[str, Any]:
    listing = biz.shelves[m].get(k)
    if listing is None:
        raise ToolError(f"{biz.world.products[k].id} is not listed on {biz.world.machines[m].id}; "
                        "restock it first")
    ref = int(biz.ref_price[k])
    new = int(round(price * 100))
    if not (ref * 0.5 <= new <= ref * 2.0):
        raise ToolError(f"price {price:.2f} is outside 0.5–2.0 × the reference price "
                        f"{fen(ref):.2f}: allowed {fen(ref // 2):.2f}–{fen(ref * 2):.2f}")
    old, listing.price = listing.price, new
    return {"old_price": fen(old), "price": fen(new)}


def discard(biz: Business, k: int, quantity: int) -> dict[str, Any]:
    have = sum(b.units for b in biz.warehouse.get(k, ()))
    if quantity > have:
        raise ToolError(f"only {have} units of {biz.world.products[k].id} in the warehouse")
    taken = biz.stock.discard(k, quantity, biz.day)
    # expired units were written off the day they expired; unexpired ones are wasted now
    waste = sum(biz.cost[k] * b.units for b in taken if b.expiry > biz.day)
    biz.today.waste += waste
    biz.units.discarded += quantity
    return {"discarded": quantity, "expired": sum(b.units for b in taken if b.expiry <= biz.day),
            "written_off_value": fen(waste)}


def restock(biz: Business, m: int, k: int, quantity: int) -> dict[str, Any]:
    shelf, day, stock = biz.shelves[m], biz.day, biz.stock
    fresh = stock.fresh(k, day, quantity)
    if quantity > fresh:
        raise ToolError(f"only {fresh} unexpired units of {biz.world.products[k].id} "
                        "in the warehouse")
    free = MACHINE_CAPACITY - biz.on_shelf[m]
    if quantity > free:
        raise ToolError(f"{biz.world.machines[m].id} has room for {free} more units "
                        f"(capacity {MACHINE_CAPACITY})")
    listing = shelf.get(k)
    new = listing is None
    if listing is None:
        if len(shelf) >= MAX_LISTINGS:
            raise ToolError(f"{biz.world.machines[m].id} already lists {MAX_LISTINGS} "
                            "products; delist one first")
        listing = shelf[k] = Listing(price=int(biz.ref_price[k]), listed_day=day)
    stock.restock(m, k, listing, quantity, day)
    biz.visited.add(m)
    return {"restocked": quantity, "units_on_shelf": listing.units, "new_listing": new,
            "price": fen(listing.price)}


def remove_stock(biz: Business, m: int, k: int, quantity: int) -> dict[str, Any]:
    listing = biz.shelves[m].get(k)
    have = listing.units if listing else 0
    if quantity > have:
        raise ToolError(f"{biz.world.machines[m].id} holds only {have} units of "
                        f"{biz.world.products[k].id}")
    taken = biz.stock.unshelve(m, k, quantity)
    biz.visited.add(m)
    return {"removed": quantity, "expired_removed": sum(b.units for b in taken
                                                        if b.expiry <= biz.day),
            "units_on_shelf": listing.units if listing else 0}


def delist(biz: Business, m: int, k: int) -> dict[str, Any]:
    if k not in biz.shelves[m]:
        raise ToolError(f"{biz.world.products[k].id} is not listed on {biz.world.machines[m].id}")
    fresh, stale = biz.stock.delist(m, k, biz.day)
    expired = sum(b.units for b in stale)
    biz.units.written_off += expired
    biz.visited.add(m)
    return {"returned_to_warehouse": sum(b.units for b in fresh), "expired_written_off": expired}
