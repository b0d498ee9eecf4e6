"""The seed's rules that design §20.2-20.3 added to the network world, each played with the
agent's tools: an e-mail naming quantities buys at once, stock expires, the prices in
force at the day's end are the prices customers pay. (A call crossing midnight and the
day a quote is valid for: ``test_network.py``.)"""

from __future__ import annotations

import pytest

from vendbench.environment.network import NetworkEnv
from vendbench.environment.network._handlers import ordered

from .test_network import ECO, checked_ledger, found


def morning(env: NetworkEnv) -> None:
    env.call("wait_for_next_day")
    checked_ledger(env)


# -- an e-mail that names quantities is an order ---------------------------------------------
@pytest.mark.parametrize("text,named", [
    ("Please send 40 cola and 20 x iced tea.", [("cola", 40), ("iced-tea", 20)]),
    ("Order: cola: 30, sandwiches x 12", [("cola", 30), ("sandwich", 12)]),
    ("100 units of cold brew coffee please", [("cold-brew-coffee", 100)]),
    ("50 cold-brew-coffee, 10 latte cans, and 60 cola", [("cold-brew-coffee", 50),
                                                         ("latte-can", 10), ("cola", 60)]),
    ("cola: 30 ... on second thought cola: 90", [("cola", 30)]),        # the first counts
    ("We order every week: can you offer a discount?", []),
    ("Is cola still EUR 2.00?", []),                                     # a price, not units
    ("Please send 0 cola", []),
    ("Send 20000 cola", []),                                             # over the limit
])
def test_what_an_e_mail_orders(text, named):
    assert ordered(NetworkEnv(seed=1), text.lower()) == named


def test_an_e_mail_naming_quantities_buys_them_at_once():
    env = found(NetworkEnv(seed=1))
    price = env.unit_price("S-BEVDIRECT", "cola", 40)
    bank, minute = env.bank, env.minute
    sent = env.call("send_email", {"to": "trade@bevdirect.example", "subject": "Order",
                                   "body": "Hello, please send 40 cola. Thanks!"})
    assert sent["ok"] and "order" in sent["message"]
    order = sent["order"]
    assert order["ok"] and order["day"] == 1 and order["paid"] == 40 * price / 100
    assert order["receipt"] == [{"product_id": "cola", "quantity": 40,
                                 "unit_price": price / 100}]
    assert env.bank == bank - 40 * price and env.minute == minute + ECO["clock"]["cost"][
        "send_email"]                                         # an e-mail's minutes, no more
    assert [s.order_id for s in env.shipments] == [order["order_id"]]
    same = env.call("get_storage_inventory", {})["in_transit"]
    assert same[0]["units"] == 40
    morning(env)                                              # the reply confirms it
    reply = env.call("read_email", {"email_id": env.emails[-1].id})
    assert order["order_id"] in reply["body"] and "40 cola" in reply["body"]


def test_an_order_e_mail_that_cannot_be_paid_is_not_sent():
    env = found(NetworkEnv(seed=1))
    bank, shipments, outbox = env.bank, len(env.shipments), len(env.outbox)
    for body, why in (("Please send 9000 energy-drink", "not enough money"),
                      ("Please send 40 sandwiches", "not sold by S-BEVDIRECT")):
        refused = env.call("send_email", {"to": "trade@bevdirect.example",
                                          "subject": "Order", "body": body})
        assert not refused["ok"] and why in refused["error"]
        assert "the e-mail was not sent" in refused["error"]
    assert (env.bank, len(env.shipments), len(env.outbox)) == (bank, shipments, outbox)
    asked = env.call("send_email", {"to": "trade@bevdirect.example", "subject": "Terms",
                                    "body": "Could you give us a better price?"})
    assert asked["ok"] and "order" not in asked and env.bank == bank   # no quantities


def test_an_order_e_mail_to_an_insolvent_supplier_pays_and_ships_nothing():
    env = found(NetworkEnv(seed=1))
    env.call("search_web", {"query": "office gadgets"})
    while env.day < 20:                                       # Office Gadgets goes insolvent
        env.call("wait_for_next_day")
    bank = env.bank
    sent = env.call("send_email", {"to": "info@officegadgets.example", "subject": "Order",
                                   "body": "10 mixed nuts please"})
    assert sent["ok"] and env.bank < bank and env.units_lost == 10    # as order_goods does
    checked_ledger(env)


# -- stock expires ----------------------------------------------------------------------------
def test_stock_expires_on_the_shelf_and_in_the_depot():
    env = found(NetworkEnv(seed=3))
    life = ECO.products["sandwich"].shelf_life
    order = env.call("order_goods", {"supplier_id": "S-FRESHCO",
                                     "items": [{"product_id": "sandwich", "quantity": 30}]})
    assert order["ok"]
    offers = env.call("check_offers", {"supplier_id": "S-FRESHCO"})["offers"]
    assert {o["product_id"]: o["keeps_days"] for o in offers}["sandwich"] == life
    while not env.depot.get("sandwich"):
        morning(env)
    arrived, units = env.day, env.depot["sandwich"]
    lots = env.call("get_storage_inventory", {})["lots"]
    assert lots == [{"product_id": "sandwich", "units": units,
                     "sell_by": arrived + life - 1}]
    slot = "AI-LOUNGE:SNACK:C1"                               # the quietest location
    env.call("restock_machine", {"slot_id": slot, "product_id": "sandwich", "quantity": 2})
    env.call("set_price", {"slot_id": slot, "price": 40.0})   # priced so nobody buys
    shelf = env.call("get_machine_inventory", {"location": "AI-LOUNGE"})["slots"]
    assert {s["slot_id"]: s["sell_by"] for s in shelf}[slot] == arrived + life - 1
    while env.day < arrived + life:                            # sells until the night of
        assert env.slots[slot].units == 2 and env.depot["sandwich"] == units - 2   # its
        morning(env)                                                  # sell-by day...
    status = env.call("get_status", {})                       # ...written off the next day
    assert status["expired_this_morning"] == {"sandwich": units}
    assert env.slots[slot].units == 0 and "sandwich" not in env.depot
    assert env.units_expired == units and env.slots[slot].product == "sandwich"
    assert env.call("get_status", {})["expired_this_morning"] == {"sandwich": units}
    morning(env)
    assert env.call("get_status", {})["expired_this_morning"] == {}
    days = env.drain_records()["days"]
    written_off = [d for d in days if d["units_expired"]]
    assert [(d["day"], d["units_expired"]) for d in written_off] == [(arrived + life, units)]
    assert written_off[0]["waste_cost"] == units * ECO.products["sandwich"].cost / 100


def test_the_oldest_units_sell_and_fill_first():
    env = found(NetworkEnv(seed=1))
    env.receive("cola", 13)                                    # day 1's lot
    env.units_ordered = 13
    slot = "AI-HOUSE:DRINKS:A1"
    old = env.sell_by("cola", 1)
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 3})
    env.call("set_price", {"slot_id": slot, "price": 40.0})   # nobody buys tonight
    morning(env)
    env.receive("cola", 10)                                    # day 2's: a day fresher
    env.units_ordered = 23
    got = env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 7})
    assert got["sell_by"] == old                               # the depot's oldest went in
    assert env.slots[slot].lots == [[old, 10]]
    assert env.stock["cola"] == [[old, 3], [old + 1, 10]]
    env.call("clear_slot", {"slot_id": slot})                  # back to the depot, lots kept
    assert env.stock["cola"] == [[old, 13], [old + 1, 10]]
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 6})
    env.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A2", "product_id": "cola",
                                 "quantity": 7})               # A2: the last 7 old units
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 4})
    assert env.slots[slot].lots == [[old, 6], [old + 1, 4]]    # A1: old and fresh
    for s in (slot, "AI-HOUSE:DRINKS:A2"):
        env.call("set_price", {"slot_id": s, "price": 1.00})   # cheap: many buy
    morning(env)
    sold = 10 - env.slots[slot].units
    assert 0 < sold and env.slots[slot].lots == ([[old, 6 - sold], [old + 1, 4]] if sold < 6
                                                 else [[old + 1, 10 - sold]] if sold < 10
                                                 else [])


# -- the prices in force at the day's end -----------------------------------------------------
def test_customers_pay_the_price_in_force_when_the_day_ends():
    """Setting a price during the day and changing it back before wait_for_next_day
    changes nothing: the night sells at the last price."""
    def night(steps: list[float]) -> tuple[int, int]:
        env = NetworkEnv(seed=2)
        env.receive("cola", 10)
        env.units_ordered = 10
        env.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola",
                                     "quantity": 10})
        for price in steps:
            env.call("set_price", {"slot_id": "AI-HOUSE:DRINKS:A1", "price": price})
        env.call("wait_for_next_day")
        return env.units_sold, env.ledger.sales_cash + env.card_pending

    assert night([0.10, 50.0, 2.00]) == night([2.00])
    assert night([2.00, 0.10]) != night([2.00])
    for text in ("prices in force when the day ends", "a price set during the day changes "
                 "nothing before then"):
        assert text in " ".join(NetworkEnv(seed=1).instructions.split())
    tools = {t["function"]["name"]: t["function"]["description"]
             for t in NetworkEnv(seed=1).tools}
    assert "prices in force when the day ends" in tools["set_price"]
    assert "prices then in force" in tools["wait_for_next_day"]


def test_the_waste_rate_is_what_expired_per_euro_bought():
    from vendbench.environment import make_policy
    from vendbench.environment.network._metrics import trial_metrics

    env = NetworkEnv(seed=1, days=30)
    policy = make_policy("order-up-to", env)
    records: dict[str, list] = {"days": [], "sales": []}
    while not env.done:
        policy.play_day(env.call, env.observe())
        for table, rows in env.drain_records().items():
            records[table] += rows
    days = records["days"]
    wasted = sum(d["waste_cost"] for d in days)
    assert env.units_expired > 0 and wasted > 0             # it orders what keeps, still
    assert sum(d["units_expired"] for d in days) == env.units_expired   # some goes off
    out = trial_metrics(records, [])
    assert out["waste_rate"] == pytest.approx(wasted / sum(d["purchases"] for d in days))
    old = {**records, "days": [{k: v for k, v in d.items() if k != "waste_cost"}
                               for d in days]}
    assert trial_metrics(old, [])["waste_rate"] is None      # recorded before expiry
