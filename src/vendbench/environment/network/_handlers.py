"""The network's 22 tools: each takes the world and its validated arguments (``_tools``)
and returns the result the agent reads. The world charges the working minutes first."""

from __future__ import annotations

import math
import re
import datetime as dt
from typing import Any, Callable, Protocol

from ._config import Economy
from ._state import (Complaint, Email, Ledger, Lots, Shipment, Slot, _cents, _euros, _stream,
                     count, put, take)


class World(Protocol):
    """The network world as its tools see it: what they read and change, and the few
    questions they ask it (``_env.NetworkEnv`` is the one implementation). Written here so
    the tools do not import the world that imports them."""

    eco: Economy
    seed: int
    days: int
    _day: int
    bank: int
    card_pending: int
    reputation: float
    missed_rent: int
    rent_owed: int
    ledger: Ledger
    _today: Ledger
    slots: dict[str, Slot]
    stock: dict[str, Lots]
    shipments: list[Shipment]
    known_suppliers: set[str]
    negotiated: dict[str, int]
    emails: list[Email]
    outbox: list[tuple[int, Email]]
    complaints: list[Complaint]
    campaigns: list[tuple[int, str, str, str]]
    notes: str
    reminders: list[tuple[int, str]]
    sales_log: list[dict[str, Any]]
    expired_today: dict[str, int]
    _ids: dict[str, int]
    units_ordered: int
    units_lost: int

    @property
    def depot(self) -> dict[str, int]: ...

    def date(self, day: int | None = None) -> dt.date: ...

    def _time(self) -> str: ...

    def minutes(self, name: str, arguments: dict[str, Any] | str | None = None) -> int: ...

    def unit_price(self, supplier: str, product: str, quantity: int,
                   day: int | None = None) -> int: ...

    def marketing_multiplier(self, location: str, day: int,
                             extra: tuple[tuple[int, str, str, str], ...] = ()) -> float: ...

    def _night(self) -> dict[str, Any]: ...


def status_report(env: World) -> dict[str, Any]:
    return {"ok": True, "day": env._day, "of_days": env.days,
            "date": env.date().isoformat(), "time": env._time(),
            "bank": _euros(env.bank), "card_receipts_pending": _euros(env.card_pending),
            "reputation": round(env.reputation, 3),
            "unread_emails": sum(not e.read for e in env.emails),
            "open_complaints": [c.id for c in env.complaints if not c.resolved],
            "reminders_today": [t for day, t in env.reminders if day == env._day],
            "missed_rent_payments": env.missed_rent,
            "expired_this_morning": dict(sorted(env.expired_today.items())),
            "rent_owed": _euros(env.rent_owed)}


def get_status(env: World, a: Any) -> dict[str, Any]:
    return status_report(env)


def get_sales_report(env: World, a: Any) -> dict[str, Any]:
    rows: dict[tuple[str, str], int] = {}
    for r in env.sales_log:
        if r["day"] > env._day - 1 - a.days:
            key = (r["machine"], r["product"])
            rows[key] = rows.get(key, 0) + r["units"]
    return {"ok": True, "days": a.days, "rows": [
        {"machine": m, "product_id": p, "units": n} for (m, p), n in sorted(rows.items())]}


def get_machine_inventory(env: World, a: Any) -> dict[str, Any]:
    ids = {loc.id for loc in env.eco.locations}
    if a.location is not None and a.location not in ids:
        return {"ok": False, "error": f"no location {a.location!r}; locations: "
                                      + ", ".join(sorted(ids))}
    return {"ok": True, "slots": [
        {"slot_id": s.id, "size": s.size, "capacity": s.capacity, "product_id": s.product,
         "units": s.units, "price": _euros(s.price) if s.product else None,
         "sell_by": s.sell_by}
        for s in env.slots.values()
        if a.location is None or s.machine.startswith(a.location + ":")]}


def get_storage_inventory(env: World, a: Any) -> dict[str, Any]:
    return {"ok": True, "depot": env.depot, "lots": [
        {"product_id": p, "units": n, "sell_by": day}
        for p, lots in sorted(env.stock.items()) for day, n in lots], "in_transit": [
        {"order_id": s.order_id, "supplier_id": s.supplier, "product_id": s.product,
         "units": s.ordered, "expected_day": None if s.arrives is None else
         max(s.arrives, env._day)} for s in env.shipments]}


def search_web(env: World, a: Any) -> dict[str, Any]:
    words = set(re.findall(r"[a-z]+", a.query.lower()))
    found = [s for s in env.eco.suppliers.values()
             if words & set(" ".join((*s.keywords, s.name.lower())).split())]
    for s in found:
        env.known_suppliers.add(s.id)
    return {"ok": True, "results": [
        {"supplier_id": s.id, "name": s.name, "email": s.email,
         "about": f"{s.name}: {', '.join(s.keywords)}"} for s in found]}


def list_emails(env: World, a: Any) -> dict[str, Any]:
    return {"ok": True, "emails": [
        {"email_id": e.id, "day": e.day, "from": e.sender, "subject": e.subject,
         "read": e.read} | ({"kind": e.kind} if e.kind else {})
        for e in reversed(env.emails)]}


def read_email(env: World, a: Any) -> dict[str, Any]:
    for e in env.emails:
        if e.id == a.email_id:
            e.read = True
            return {"ok": True, "email_id": e.id, "day": e.day, "from": e.sender,
                    "subject": e.subject, "body": e.body} | (
                        {"kind": e.kind} if e.kind else {})
    return {"ok": False, "error": f"no e-mail {a.email_id!r}; list_emails shows them"}


def send_email(env: World, a: Any) -> dict[str, Any]:
    sup = next((s for s in env.eco.suppliers.values() if s.email == a.to.lower()), None)
    if sup is None:
        if any(c.customer == a.to.lower() for c in env.complaints):
            return {"ok": True, "message": "sent"}
        return {"ok": False, "error": f"no known address {a.to!r}; search_web finds "
                                      "suppliers' addresses"}
    text = f"{a.subject} {a.body}".lower()
    neg = env.eco["negotiation"]
    d = env._day
    named = ordered(env, text)
    if named and not (sup.vanishes_on is not None and d >= sup.vanishes_on):
        refused = _refusal(env, sup, named)                 # an order e-mail buys at once,
        if refused:                                         # or is not sent at all
            return {"ok": False, "error": f"this e-mail names quantities, so it is an "
                                          f"order, and it cannot be placed: {refused}; "
                                          "the e-mail was not sent"}
    env.known_suppliers.add(sup.id)
    if sup.vanishes_on is not None and d >= sup.vanishes_on:
        return {"ok": True, "message": "sent"}                       # no one answers
    if named:
        order = _buy(env, sup, named)
        lines = "\n".join(f"- {r['quantity']} {r['product_id']} at EUR "
                          f"{r['unit_price']:.2f}" for r in order["receipt"])
        reply = (f"Thank you for your order {order['order_id']} (paid EUR "
                 f"{order['paid']:.2f} on day {d}):\n{lines}")
        env.outbox.append((d + 1, Email("", d + 1, sup.email, f"Re: {a.subject}"[:200],
                                         reply)))
        return {"ok": True, "message": "sent; it names quantities, so it is an order: "
                                       "paid at once at today's prices", "order": order}
    if sup.insolvent_on is not None and d >= sup.insolvent_on:
        reply = "We regret to inform you that we have ceased trading."
    elif any(k in text for k in neg["keywords_negotiate"]):
        step = env.negotiated.get(sup.id, 0)
        if step < len(neg["concessions"]):
            env.negotiated[sup.id] = step + 1               # in force from tomorrow
            total = 1 - math.prod(1 - c for c in neg["concessions"][:step + 1])
            reply = (f"For a valued customer we can take {total:.0%} off our list prices "
                     "from tomorrow.")
        else:
            reply = "These are our best terms; we cannot go lower."
    elif any(k in text for k in neg["keywords_catalogue"]):
        prices = [f"- {p}: EUR {_euros(env.unit_price(sup.id, p, 1, d + 1)):.2f}, keeps "
                  f"{env.eco.products[p].shelf_life} days" for p in sup.products]
        reply = (f"Our catalogue (unit prices at quantity 1, valid on day {d + 1}):\n"
                 + "\n".join(prices))
    else:
        reply = "Thank you for your message. Ask for our catalogue, or for better terms."
    env.outbox.append((d + 1, Email("", d + 1, sup.email, f"Re: {a.subject}"[:200], reply)))
    return {"ok": True, "message": "sent; replies arrive overnight"}


_QUANTITY = r"(?<![\d.,])(\d{1,6})(?![\d.,]\d)"
_BETWEEN = r"\s*(?:x|×|\*|units? of|pcs\.? of|pieces of|cans of|of)?\s*"
_AFTER = r"\s*(?:x|×|\*|:|=|-|–)?\s*"


def ordered(env: World, text: str) -> list[tuple[str, int]]:
    """The quantities an e-mail names, as (product, quantity) in the order first named:
    "40 cola", "40 x cola", "40 units of cola", "cola: 40", "cola x 40" (a product's id,
    its hyphens written as spaces or not, and plurals). The first quantity named for a
    product counts."""
    found: dict[str, tuple[int, int]] = {}
    for pid in env.eco.products:
        name = r"[\s-]?".join(map(re.escape, pid.split("-"))) + r"(?:e?s)?\b"
        for pattern in (_QUANTITY + _BETWEEN + r"\b" + name, r"\b" + name + _AFTER + _QUANTITY):
            for m in re.finditer(pattern, text):
                quantity = int(m.group(1))
                if 1 <= quantity <= 10_000 and (pid not in found or m.start() < found[pid][0]):
                    found[pid] = (m.start(), quantity)
    return [(p, q) for p, (_, q) in sorted(found.items(), key=lambda kv: kv[1][0])]


def _supplier(env: World, sid: str) -> tuple[Any, str | None]:
    sup = env.eco.suppliers.get(sid)
    if sup is None or sid not in env.known_suppliers:
        return None, f"no supplier {sid!r} found yet; search_web finds suppliers"
    if sup.vanishes_on is not None and env._day >= sup.vanishes_on:
        return None, f"{sid} does not answer any more"
    return sup, None


def check_offers(env: World, a: Any) -> dict[str, Any]:
    sup, err = _supplier(env, a.supplier_id)
    if err:
        return {"ok": False, "error": err}
    return {"ok": True, "supplier_id": sup.id, "quantity": a.quantity,
            "valid_day": env._day, "offers": [
                {"product_id": p, "fits": _fits_text(env, p),
                 "unit_price": _euros(env.unit_price(sup.id, p, a.quantity)),
                 "keeps_days": env.eco.products[p].shelf_life}
                for p in sup.products]}


def _fits_text(env: World, pid: str) -> str:
    prod = env.eco.products[pid]
    if prod.machine == "none":
        return "no slot of these machines (a specialty item)"
    return (f"{prod.machine} machine, {prod.size} slots" if prod.machine == "snack"
            else "drinks machine")


def order_goods(env: World, a: Any) -> dict[str, Any]:
    sup, err = _supplier(env, a.supplier_id)
    if err:
        return {"ok": False, "error": err}
    return _buy(env, sup, [(it.product_id, it.quantity) for it in a.items])


def _refusal(env: World, sup: Any, items: list[tuple[str, int]]) -> str | None:
    """Why an order of ``items`` from ``sup`` cannot be paid now, or None."""
    bad = [f"item {i}: {p} is not sold by {sup.id}"
           for i, (p, _) in enumerate(items) if p not in sup.products]
    if bad:
        return "; ".join(bad) + "; nothing was ordered"
    if sum(q * env.unit_price(sup.id, p, q) for p, q in items) > env.bank:
        return "not enough money in the bank for this order; nothing was ordered"
    return None


def _buy(env: World, sup: Any, items: list[tuple[str, int]]) -> dict[str, Any]:
    """Pay for ``items`` (product, quantity) at today's prices and ship them."""
    refused = _refusal(env, sup, items)
    if refused:
        return {"ok": False, "error": refused}
    lines = [(p, q, env.unit_price(sup.id, p, q)) for p, q in items]
    total = sum(q * u for _, q, u in lines)
    env.bank -= total
    env.ledger.purchases += total
    env._today.purchases += total
    env._ids["order"] += 1
    oid = f"O{env._ids['order']:04d}"
    rng = _stream(env.seed, "shipment", sup.id, env._day, env._ids["order"])
    insolvent = sup.insolvent_on is not None and env._day >= sup.insolvent_on
    receipt = []
    for p, q, u in lines:
        delay = int(rng.integers(1, 3)) if rng.random() < sup.delay_chance else 0
        short = rng.random() < sup.short_chance
        arrive_q = max(1, int(q * rng.uniform(0.5, 0.9))) if short else q
        env.shipments.append(Shipment(oid, sup.id, p, 0 if insolvent else arrive_q, q, u,
                                       None if insolvent else
                                       env._day + sup.lead_days + delay))
        env.units_ordered += q
        env.units_lost += q if insolvent else q - arrive_q
        receipt.append({"product_id": p, "quantity": q, "unit_price": _euros(u)})
    return {"ok": True, "order_id": oid, "day": env._day, "paid": _euros(total),
            "receipt": receipt}


def _slot(env: World, sid: str) -> Slot | str:
    """The slot ``sid``, or the error that says there is none."""
    slot = env.slots.get(sid)
    if slot is None:
        return (f"no slot {sid!r}; slot ids look like AI-HOUSE:DRINKS:A1 "
                "(get_machine_inventory lists them)")
    return slot


def _fits(env: World, slot: Slot, pid: str) -> str | None:
    prod = env.eco.products.get(pid)
    if prod is None:
        return f"no product {pid!r}"
    if prod.machine != slot.kind or prod.size != slot.size:
        return (f"{pid} ({prod.machine}, {prod.size}) does not fit {slot.id} "
                f"({slot.kind}, {slot.size})")
    return None


def restock_machine(env: World, a: Any) -> dict[str, Any]:
    slot = _slot(env, a.slot_id)
    if isinstance(slot, str):
        return {"ok": False, "error": slot}
    err = _fits(env, slot, a.product_id)
    if err:
        return {"ok": False, "error": err}
    if slot.product not in (None, a.product_id) and slot.units > 0:
        return {"ok": False, "error": f"{slot.id} holds {slot.product}; swap_item or "
                                      "clear_slot first"}
    room = slot.capacity - (slot.units if slot.product == a.product_id else 0)
    have = count(env.stock.get(a.product_id, []))
    if a.quantity > room or a.quantity > have:
        return {"ok": False, "error": f"{slot.id} has room for {room} and the depot "
                                      f"holds {have} of {a.product_id}"}
    if slot.product != a.product_id:                 # another product: its own price
        slot.product, slot.lots = a.product_id, []
        slot.price = env.eco.products[a.product_id].retail
    put(slot.lots, take(env.stock[a.product_id], a.quantity))     # oldest units first
    return {"ok": True, "slot_id": slot.id, "product_id": slot.product,
            "units": slot.units, "price": _euros(slot.price), "sell_by": slot.sell_by}


def swap_item(env: World, a: Any) -> dict[str, Any]:
    slot = _slot(env, a.slot_id)
    if isinstance(slot, str):
        return {"ok": False, "error": slot}
    err = _fits(env, slot, a.product_id)
    if err:
        return {"ok": False, "error": err}
    have = count(env.stock.get(a.product_id, []))
    if have == 0:
        return {"ok": False, "error": f"the depot holds no {a.product_id}"}
    price = slot.price if slot.product == a.product_id else None   # a refill keeps it
    minutes = env.minutes("swap_item", {"slot_id": slot.id, "product_id": a.product_id})
    _empty(env, slot)
    slot.product = a.product_id
    slot.lots = take(env.stock[a.product_id], slot.capacity)      # oldest units first
    slot.price = price or env.eco.products[a.product_id].retail
    return {"ok": True, "slot_id": slot.id, "product_id": slot.product,
            "units": slot.units, "price": _euros(slot.price), "sell_by": slot.sell_by,
            "minutes": minutes}


def _empty(env: World, slot: Slot) -> None:
    if slot.product and slot.lots:
        put(env.stock.setdefault(slot.product, []), slot.lots)
    slot.product, slot.lots, slot.price = None, [], 0


def clear_slot(env: World, a: Any) -> dict[str, Any]:
    slot = _slot(env, a.slot_id)
    if isinstance(slot, str):
        return {"ok": False, "error": slot}
    if slot.product is None:
        return {"ok": False, "error": f"{slot.id} is already empty"}
    back = slot.units
    _empty(env, slot)
    return {"ok": True, "slot_id": slot.id, "returned_to_depot": back}


def set_price(env: World, a: Any) -> dict[str, Any]:
    slot = _slot(env, a.slot_id)
    if isinstance(slot, str):
        return {"ok": False, "error": slot}
    if slot.product is None:
        return {"ok": False, "error": f"{slot.id} is empty; restock it first"}
    cents = _cents(a.price)
    if cents is None or cents < 10:
        return {"ok": False, "error": "a price is at least EUR 0.10, in whole cents"}
    slot.price = cents
    return {"ok": True, "slot_id": slot.id, "price": _euros(cents)}


def send_payment(env: World, a: Any) -> dict[str, Any]:
    target = a.to.lower()
    open_ = [c for c in env.complaints if not c.resolved
             and target in (c.id.lower(), c.customer)]
    if not open_:
        return {"ok": False, "error": f"no open complaint for {a.to!r}"}
    c = open_[0]
    cents = _cents(a.amount)
    if cents is None or cents < c.amount:
        return {"ok": False, "error": f"refunds must cover the full amount: {c.id} asks "
                                      f"EUR {_euros(c.amount):.2f}"}
    if cents > env.bank:
        return {"ok": False, "error": "not enough money in the bank"}
    env.bank -= cents
    env.ledger.refunds += cents
    env._today.refunds += cents
    c.resolved = True
    return {"ok": True, "complaint_id": c.id, "paid": _euros(cents)}


def run_marketing(env: World, a: Any) -> dict[str, Any]:
    if a.location not in {loc.id for loc in env.eco.locations}:
        return {"ok": False, "error": f"no location {a.location!r}"}
    ch = env.eco.channels[a.channel]
    if ch.cost > env.bank:
        return {"ok": False, "error": "not enough money in the bank"}
    env.bank -= ch.cost
    env.ledger.marketing += ch.cost
    env._today.marketing += ch.cost
    env.campaigns.append((env._day, a.location, a.channel, a.message))
    return {"ok": True, "location": a.location, "channel": a.channel,
            "paid": _euros(ch.cost),
            "multiplier_today": round(env.marketing_multiplier(a.location, env._day), 3)}


def get_marketing_report(env: World, a: Any) -> dict[str, Any]:
    return {"ok": True, "channels": [
        {"channel": c.channel, "cost": _euros(c.cost), "days": c.days, "bonus": c.bonus,
         "uses_before_fatigue_7d": c.uses, "penalty": c.penalty}
        for c in env.eco.channels.values()],
        "recent": [{"day": d, "location": loc, "channel": ch}
                   for d, loc, ch, _ in env.campaigns if d > env._day - 7],
        "multipliers": {loc.id: round(env.marketing_multiplier(loc.id, env._day), 3)
                        for loc in env.eco.locations}}


def write_note(env: World, a: Any) -> dict[str, Any]:
    env.notes = a.text
    return {"ok": True, "characters": len(a.text)}


def read_notes(env: World, a: Any) -> dict[str, Any]:
    return {"ok": True, "notes": env.notes}


def set_reminder(env: World, a: Any) -> dict[str, Any]:
    if a.day < env._day:
        return {"ok": False, "error": f"day {a.day} has passed"}
    env.reminders.append((a.day, a.text))
    return {"ok": True, "day": a.day}


def list_reminders(env: World, a: Any) -> dict[str, Any]:
    return {"ok": True, "reminders": [{"day": d, "text": t} for d, t in env.reminders
                                      if d >= env._day]}


def wait_for_next_day(env: World, a: Any) -> dict[str, Any]:
    return env._night()


HANDLERS: dict[str, Callable[[World, Any], dict[str, Any]]] = {
    "get_status": get_status,
    "get_sales_report": get_sales_report,
    "get_machine_inventory": get_machine_inventory,
    "get_storage_inventory": get_storage_inventory,
    "search_web": search_web,
    "list_emails": list_emails,
    "read_email": read_email,
    "send_email": send_email,
    "check_offers": check_offers,
    "order_goods": order_goods,
    "restock_machine": restock_machine,
    "swap_item": swap_item,
    "clear_slot": clear_slot,
    "set_price": set_price,
    "send_payment": send_payment,
    "run_marketing": run_marketing,
    "get_marketing_report": get_marketing_report,
    "write_note": write_note,
    "read_notes": read_notes,
    "set_reminder": set_reminder,
    "list_reminders": list_reminders,
    "wait_for_next_day": wait_for_next_day,
}
