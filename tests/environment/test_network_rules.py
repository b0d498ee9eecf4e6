"""The network world's rules that keep it from being gamed (design §12.1, 12.2, 12.6):
the price a customer sees is the price they pay, demand answers price the way shoppers
do, and the smaller rules as the seed means them."""

from __future__ import annotations

import pytest

from vendbench.environment.network import NetworkEnv
from vendbench.environment.network import _demand as demand
from vendbench.environment.network._config import load
from vendbench.environment.network._state import take

from .test_network import ECO, checked_ledger

COST = ECO["clock"]["cost"]


def stocked(env: NetworkEnv, **depot: int) -> NetworkEnv:
    for product, units in depot.items():                   # as if delivered today
        env.receive(product, units)
    env.units_ordered = sum(depot.values())
    return env


def sell(env: NetworkEnv, slot: str, units: int) -> None:
    """As if customers bought ``units`` from ``slot`` (units stay conserved)."""
    take(env.slots[slot].lots, units)
    env.units_sold += units


# -- §12.1 the price that drew the customer ----------------------------------------------
def test_each_unit_sells_at_the_price_of_the_facing_that_drew_the_customer():
    env = stocked(NetworkEnv(seed=4), cola=12)
    cheap, dear = "MAIN-LOUNGE:DRINKS:A1", "MAIN-LOUNGE:DRINKS:A2"
    env.call("restock_machine", {"slot_id": cheap, "product_id": "cola", "quantity": 2})
    env.call("restock_machine", {"slot_id": dear, "product_id": "cola", "quantity": 10})
    env.call("set_price", {"slot_id": cheap, "price": 1.50})
    env.call("set_price", {"slot_id": dear, "price": 2.00})
    env.call("wait_for_next_day")
    (row,) = env.drain_records()["sales"]                  # one pool, two facings
    sold = row["units_sold"]
    assert sold > 2 and env.slots[cheap].units == 0        # the cheap facing went first
    assert row["revenue"] == pytest.approx(2 * 1.50 + (sold - 2) * 2.00)
    checked_ledger(env)


def test_a_decoy_facing_sells_its_one_unit_and_draws_nobody_to_the_dear_ones():
    env = stocked(NetworkEnv(seed=1), cola=11)
    decoy, dear = "MAIN-LOUNGE:DRINKS:A1", "MAIN-LOUNGE:DRINKS:A2"
    env.call("restock_machine", {"slot_id": decoy, "product_id": "cola", "quantity": 1})
    env.call("restock_machine", {"slot_id": dear, "product_id": "cola", "quantity": 10})
    env.call("set_price", {"slot_id": decoy, "price": 0.10})
    env.call("set_price", {"slot_id": dear, "price": 10_000})
    for _ in range(7):
        env.call("wait_for_next_day")
    revenue = sum(r["revenue"] for r in env.drain_records()["sales"])
    assert env.slots[decoy].units == 0 and env.slots[dear].units == 10
    assert revenue == pytest.approx(0.10)                  # not 10 × EUR 10,000


def test_an_empty_facing_is_no_alternative():
    env = stocked(NetworkEnv(seed=2), cola=10)
    slot = "AI-HOUSE:DRINKS:A1"
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 10})
    sell(env, slot, 10)                                    # as if sold out
    env.call("wait_for_next_day")
    assert env.drain_records()["sales"] == [] and env.ledger.sales_cash == 0


# -- §12.2 demand answers price -----------------------------------------------------------
def cheapest_unit_cost(eco, product: str) -> int:
    """The lowest list price any supplier quotes for one unit (cents; negotiation,
    volume tiers and weekly discounts lower it further)."""
    return min(round(eco.products[product].cost * s.markup) for s in eco.suppliers.values()
               if product in s.products)


def best_price(eco, loc, product: str, others: list[str]) -> float:
    """The expected-profit-maximising price (cents) of ``product`` beside ``others`` at
    their reference prices, on a 0.5 % grid from 0.01× to 6× reference."""
    prod, cost = eco.products[product], cheapest_unit_cost(eco, product)
    offer = {q: eco.products[q].retail for q in others}

    def profit(price: float) -> float:
        return (price - cost) * demand.shares(eco, loc, {**offer, product: price})[product]

    return max((prod.retail * i / 200 for i in range(2, 1201)), key=profit)


def test_the_profit_maximising_price_is_between_1_1_and_3_times_the_cheapest_cost():
    eco = load()
    checked = 0
    for loc in eco.locations:
        for pid, prod in eco.products.items():
            if prod.machine == "none":
                continue
            machine = [q for q, p in eco.products.items() if p.machine == prod.machine]
            for others in ([], [q for q in machine if q != pid]):   # alone, and among all
                ratio = best_price(eco, loc, pid, others) / cheapest_unit_cost(eco, pid)
                assert 1.1 <= ratio <= 3.0, (loc.id, pid, others and "assortment", ratio)
                checked += 1
    assert checked == 3 * 17 * 2


def test_five_times_the_reference_price_sells_under_5_percent_of_the_reference():
    eco = load()
    for loc in eco.locations:
        for pid, prod in eco.products.items():
            if prod.machine == "none":
                continue
            machine = {q: eco.products[q].retail for q, p in eco.products.items()
                       if p.machine == prod.machine}
            at_ref = demand.shares(eco, loc, machine)[pid]
            at_five = demand.shares(eco, loc, {**machine, pid: 5 * prod.retail})[pid]
            assert at_five < 0.05 * at_ref, (loc.id, pid, at_five / at_ref)


def test_demand_falls_with_price_and_is_wider_where_shoppers_care_less():
    eco = load()
    house, lounge = (next(loc for loc in eco.locations if loc.id == i)
                     for i in ("AI-HOUSE", "MAIN-LOUNGE"))
    cola = eco.products["cola"]
    prices = [cola.retail * m for m in (0.5, 0.8, 1.0, 1.2, 1.5, 2.0)]
    for loc in (house, lounge):
        pulls = [demand.attraction(eco, cola, loc, p) for p in prices]
        assert pulls == sorted(pulls, reverse=True) and pulls[-1] < 0.2 * pulls[0]
    dear = cola.retail * 1.5                                 # AI House cares less (×0.75)
    assert demand.attraction(eco, cola, house, dear) > demand.attraction(eco, cola, lounge, dear)


# -- §12.6 the smaller rules --------------------------------------------------------------
def test_swapping_a_slot_to_the_product_it_holds_is_a_fill():
    env = stocked(NetworkEnv(seed=1), cola=25, **{"iced-tea": 10})
    slot = "AI-HOUSE:DRINKS:A1"
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 4})
    env.call("set_price", {"slot_id": slot, "price": 2.40})
    minute = env.minute
    got = env.call("swap_item", {"slot_id": slot, "product_id": "cola"})
    assert got["ok"] and got["units"] == 10 and got["price"] == 2.40   # refilled, price kept
    assert env.minute == minute + COST["restock_machine"] == minute + got["minutes"]
    checked_ledger(env)


def test_a_swap_that_puts_units_in_spends_a_fills_minutes():
    """design §20.1: filling an empty slot by a swap, or swapping another product's units
    out, is not cheaper than clear + fill (the 30-minute swap filled for two thirds)."""
    env = stocked(NetworkEnv(seed=1), cola=25, **{"iced-tea": 30, "latte-can": 10})
    fill, swap = COST["restock_machine"], COST["swap_item"]
    a, b = "AI-HOUSE:DRINKS:A1", "AI-HOUSE:DRINKS:A2"
    minute = env.minute
    got = env.call("swap_item", {"slot_id": a, "product_id": "cola"})      # an empty slot
    assert got["ok"] and got["units"] == 10 and env.minute == minute + fill == minute + 45
    assert got["price"] == ECO.products["cola"].retail / 100
    env.call("swap_item", {"slot_id": b, "product_id": "iced-tea"})
    sell(env, a, 8)                                                        # sold down
    sell(env, b, 7)
    minute = env.minute                                                    # rotation:
    one = env.call("swap_item", {"slot_id": a, "product_id": "iced-tea"})  # each swap takes
    two = env.call("swap_item", {"slot_id": b, "product_id": "cola"})      # units out
    assert one["ok"] and two["ok"] and one["minutes"] == two["minutes"] == fill + swap == 75
    assert env.minute == minute + 2 * (fill + swap)                        # = clear + fill
    assert (env.slots[a].product, env.slots[a].units) == ("iced-tea", 10)
    assert (env.slots[b].product, env.slots[b].units) == ("cola", 10)
    sell(env, a, 10)                                                       # sold out: no
    minute = env.minute                                                    # units come out
    got = env.call("swap_item", {"slot_id": a, "product_id": "latte-can"})
    assert got["ok"] and env.minute == minute + fill
    refused = env.call("swap_item", {"slot_id": b, "product_id": "energy-drink"})
    assert not refused["ok"] and env.minute == minute + fill + fill + swap  # rejected: as if
    checked_ledger(env)                                                      # it ran


def test_a_rejected_call_spends_the_minutes_of_its_kind():
    env = NetworkEnv(seed=1)
    for name, args in (("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1",
                                            "product_id": "cola", "quantity": 5}),
                       ("check_offers", {"supplier_id": "S-NOPE"}),
                       ("set_price", {"slot_id": "AI-HOUSE:DRINKS:A1", "price": "x"})):
        minute = env.minute
        assert not env.call(name, args)["ok"]
        assert env.minute == minute + COST[name], name
    minute = env.minute
    assert not env.call("launch_rocket", {})["ok"] and env.minute == minute   # no kind
    env.minute = ECO["clock"]["close"] - 10                     # a rejected call that
    refused = env.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1",  # crosses
                                           "product_id": "cola", "quantity": 5})  # midnight
    assert not refused["ok"] and refused["crossed_midnight"]["closed_day"] == 1
    assert env.day == 2 and env.minute == ECO["clock"]["open"] + 45 - 10


def test_a_negotiated_price_holds_from_the_next_day_as_the_reply_says():
    env = NetworkEnv(seed=1)
    env.call("search_web", {"query": "drinks"})
    list_price = env.unit_price("S-BEVDIRECT", "cola", 1)
    env.call("send_email", {"to": "trade@bevdirect.example", "subject": "deal",
                            "body": "a discount please"})
    assert env.call("check_offers", {"supplier_id": "S-BEVDIRECT"})["offers"][0][
        "unit_price"] == list_price / 100                                      # not today
    env.call("wait_for_next_day")
    reply = next(e for e in env.emails if e.sender == "trade@bevdirect.example")
    assert "from tomorrow" in reply.body
    assert env.unit_price("S-BEVDIRECT", "cola", 1) == round(list_price * 0.94)


def test_missed_rent_is_owed_and_paid_from_the_next_income():
    env = NetworkEnv(seed=1, days=5)
    env.bank = env.initial_cash = 500                      # EUR 5: less than a day's rent
    env.call("wait_for_next_day")
    assert env.bank == 0 and env.rent_owed == 700 and env.missed_rent == 1
    assert env.call("get_status")["rent_owed"] == 7.0
    env.bank += 5000                                       # income (kept in the books
    env.initial_cash += 5000                               # as if it were start cash)
    env.call("wait_for_next_day")
    assert env.rent_owed == 0 and env.missed_rent == 0
    assert env.bank == 5000 - 700 - 1200 and env.ledger.rent == 500 + 700 + 1200
    checked_ledger(env)


def test_rent_still_owed_at_the_end_comes_off_the_final_balance():
    env = NetworkEnv(seed=1, days=1)
    env.bank = env.initial_cash = 500
    env.call("wait_for_next_day")
    assert env.status == "completed" and env.rent_owed == 0 and env.bank == -700
    assert env.score() == 0.0 and env.ledger.rent == 1200
    checked_ledger(env)


def test_restocking_an_emptied_slot_with_another_product_starts_at_its_reference():
    env = stocked(NetworkEnv(seed=1), cola=3, **{"iced-tea": 5})
    slot = "MAIN-LOUNGE:DRINKS:A1"
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 3})
    env.call("set_price", {"slot_id": slot, "price": 0.10})
    env.call("wait_for_next_day")
    assert env.slots[slot].units == 0 and env.slots[slot].product == "cola"   # sold out
    got = env.call("restock_machine", {"slot_id": slot, "product_id": "iced-tea",
                                       "quantity": 5})
    assert got["ok"] and got["price"] == ECO.products["iced-tea"].retail / 100   # not 0.10
    checked_ledger(env)
