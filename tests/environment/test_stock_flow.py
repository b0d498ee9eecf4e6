"""Stock flow, visit fees, expiry, fines and bankruptcy (design §2 "Stock flow", "Costs")."""

from __future__ import annotations

from vendbench.environment import make
from vendbench.environment.autovend import _demand as demand

from ..conftest import next_day, stock_machine

# The documented costs (design §2 "Costs", README "The world"), written here from the rules
# rather than imported from the code, in fen (1 CNY = 100 fen): a changed constant in the
# simulator must fail these tests, not move them along with it.
FIXED_FEE = 80_00            # 80 CNY a day
MACHINE_RENT = 4_00          # 4 CNY per machine per day
WAREHOUSE_RENT = 3           # 0.03 CNY per warehouse unit per day, expired units included
VISIT_FEE = 35_00            # 35 CNY per machine per day on which it was visited


def test_orders_arrive_at_the_start_of_day_t_plus_3(env):
    env.call("place_order", {"items": [{"product_id": "P0001", "quantity": 10}]})
    assert demand.delivery_delay(1, 1) == 0          # the first order of seed 1 is on time
    next_day(env, 2)
    assert 0 not in env.business.warehouse
    next_day(env)
    assert env.day == 4 and sum(b.units for b in env.business.warehouse[0]) == 10
    assert env.call("get_orders", {"status": "delivered"})["rows"][0]["arrived"] == "2026-04-04"


def test_some_orders_arrive_a_day_late():
    late = [n for n in range(1, 200) if demand.delivery_delay(1, n)]
    assert 10 <= len(late) <= 45                      # about one order in eight
    env = make("autovend", seed=1, days=30, daily_tool_calls=10**9)
    for n in range(1, late[0] + 1):                   # the late one is order number late[0]
        env.call("place_order", {"items": [{"product_id": f"P{n:04d}", "quantity": 1}]})
    next_day(env, 3)
    transit = env.call("get_orders", {"status": "in_transit"})["rows"]
    assert [o["order_id"] for o in transit] == [f"O{late[0]:05d}"]
    next_day(env)
    assert env.call("get_orders", {"status": "in_transit"})["rows"] == []


def test_visit_fee_once_per_machine_per_day_and_never_for_rejected_items(env):
    env.call("place_order", {"items": [{"product_id": "P0001", "quantity": 50},
                                       {"product_id": "P0002", "quantity": 50}]})
    next_day(env, 3)
    for _ in range(3):      # three physical calls on M01, one on M02
        env.call("restock", {"items": [{"machine_id": "M01", "product_id": "P0001",
                                        "quantity": 5}]})
    env.call("remove_stock", {"items": [{"machine_id": "M01", "product_id": "P0001",
                                         "quantity": 1}]})
    env.call("restock", {"items": [{"machine_id": "M02", "product_id": "P0002",
                                    "quantity": 5}]})
    # rejected items on other machines: no visit
    env.call("restock", {"items": [{"machine_id": "M03", "product_id": "P0003", "quantity": 5},
                                   {"machine_id": "M04", "product_id": "P0001",
                                    "quantity": 999}]})
    env.call("delist", {"items": [{"machine_id": "M05", "product_id": "P0001"}]})
    env.call("get_machine_inventory", {"machine_id": "M06"})     # queries are free
    next_day(env)
    row = env.business.history[-1]
    assert row["visit_fees"] == 2 * VISIT_FEE and row["machines_visited"] == 2


def test_recurring_fees_include_rent_on_expired_warehouse_units(env):
    env.call("place_order", {"items": [{"product_id": "P0001", "quantity": 100}]})
    next_day(env, 3)
    next_day(env)
    assert env.business.history[-1]["fees"] == FIXED_FEE + 20 * MACHINE_RENT + 100 * WAREHOUSE_RENT


def test_expired_warehouse_units_keep_paying_rent_until_discarded():
    env = make("autovend", seed=1, days=60, daily_tool_calls=10**9)
    bread = next(p for p in env.world.products if p.subcategory == "bread/cakes")
    env.call("place_order", {"items": [{"product_id": bread.id, "quantity": 100}]})
    next_day(env, 36)                                  # arrived day 4, expired day 34
    assert env.call("get_warehouse_inventory", {})["rows"][0]["expired"]
    fees = env.business.history[-1]["fees"]
    assert fees == FIXED_FEE + 20 * MACHINE_RENT + 100 * WAREHOUSE_RENT
    env.call("discard", {"items": [{"product_id": bread.id, "quantity": 100}]})
    next_day(env, 2)       # today's rent was charged this morning; tomorrow's is not
    assert env.business.history[-1]["fees"] == FIXED_FEE + 20 * MACHINE_RENT


def two_bread_batches(first: int, second: int):
    """An environment on day 9 whose warehouse holds ``first`` units of a 30-day bread that
    arrived on day 4 and ``second`` that arrived on day 9; the bread and its index."""
    env = make("autovend", seed=1, days=60, daily_tool_calls=10**9)
    bread = next(p for p in env.world.products if p.subcategory == "bread/cakes")
    env.call("place_order", {"items": [{"product_id": bread.id, "quantity": first}]})
    next_day(env, 5)
    env.call("place_order", {"items": [{"product_id": bread.id, "quantity": second}]})
    next_day(env, 4)
    return env, bread, int(bread.id[1:]) - 1


def test_restock_takes_earliest_expiry_first_and_never_expired_units():
    env, bread, k = two_bread_batches(5, 5)
    env.call("restock", {"items": [{"machine_id": "M01", "product_id": bread.id,
                                    "quantity": 6}]})
    shelf = env.business.shelves[0][k].batches
    assert [(b.arrived, b.units) for b in shelf] == [(4, 5), (9, 1)]
    next_day(env, 25)                                  # day 35: the day-4 batch has expired
    wh = env.business.warehouse[k]
    assert [(b.arrived, b.units) for b in wh] == [(9, 4)]


def test_restocked_units_keep_their_batches_in_expiry_order_on_the_shelf():
    env, bread, k = two_bread_batches(5, 9)

    def restock(n):
        out = env.call("restock", {"items": [{"machine_id": "M01", "product_id": bread.id,
                                              "quantity": n}]})
        assert out["ok"], out

    def shelf():
        return [(b.arrived, b.units) for b in env.business.shelves[0][k].batches]

    restock(2)                    # from the oldest batch, which holds enough
    restock(2)                    # the same batch again: merged, not a second entry
    assert shelf() == [(4, 4)]
    restock(3)                    # the rest of the day-4 batch and the start of day 9's
    restock(2)                    # day 9's again: merged into the shelf's last batch
    assert shelf() == [(4, 5), (9, 4)]
    out = env.call("remove_stock", {"items": [{"machine_id": "M01", "product_id": bread.id,
                                               "quantity": 2}]})
    assert out["ok"], out         # two day-4 units go back: the warehouse's oldest again
    assert shelf() == [(4, 3), (9, 4)]
    restock(1)                    # older than the shelf's last batch: merged in its place
    assert shelf() == [(4, 4), (9, 4)]
    assert [(b.arrived, b.units) for b in env.business.warehouse[k]] == [(4, 1), (9, 5)]


def test_expired_units_sell_first_and_each_costs_a_1000_cny_fine():
    env = make("autovend", seed=1, days=60, daily_tool_calls=10**9)
    dairy = next(p for p in env.world.products if p.subcategory == "dairy/yogurt")
    k = int(dairy.id[1:]) - 1
    env.call("place_order", {"items": [{"product_id": dairy.id, "quantity": 200}]})
    next_day(env, 3)
    env.call("restock", {"items": [{"machine_id": "M13", "product_id": dairy.id,
                                    "quantity": 200}]})
    biz = env.business
    while env.day < 34:
        next_day(env)
    # day 34: the batch (arrived day 4) has expired on the shelf but still sells
    units_before = biz.shelves[12][k].units
    inv = env.call("get_machine_inventory", {"machine_id": "M13"})["listings"][0]
    assert inv["expired"] == units_before and inv["sellable"] == 0
    next_day(env)
    row = biz.history[-1]
    assert row["expired_units_sold"] > 0
    assert row["fines"] == 100_000 * row["expired_units_sold"]
    assert row["cogs"] == 0                   # their cost was written off when they expired


def test_units_expiring_are_counted_as_waste_once():
    env = make("autovend", seed=1, days=60, daily_tool_calls=10**9)
    bread = next(p for p in env.world.products if p.subcategory == "bread/cakes")
    env.call("place_order", {"items": [{"product_id": bread.id, "quantity": 10}]})
    next_day(env, 40)
    waste = [r["waste_cost"] for r in env.business.history]
    assert sum(waste) == 10 * bread.unit_cost and waste[33] == 10 * bread.unit_cost
    env.call("discard", {"items": [{"product_id": bread.id, "quantity": 10}]})
    next_day(env)
    assert env.business.history[-1]["waste_cost"] == 0


def test_bankrupt_after_ten_days_below_zero():
    env = make("autovend", seed=1, days=60, daily_tool_calls=10**9)
    expensive = max(env.world.products, key=lambda p: p.unit_cost)
    n = env.business.cash // expensive.unit_cost
    assert env.call("place_order", {"items": [{"product_id": expensive.id, "quantity": n}]})["ok"]
    while not env.done:
        next_day(env)
    summary = env.summary()
    assert summary["status"] == "bankrupt"
    negative = [r["day"] for r in env.business.history if r["cash"] < 0]
    assert len(negative) == 10 and negative[-1] == summary["day"]


def test_a_short_dip_below_zero_is_not_bankruptcy():
    env = make("autovend", seed=1, days=20, daily_tool_calls=10**9)
    env.business.cash = 10_000          # 100 CNY: fees take it below zero on day 2
    next_day(env, 5)
    env.business.cash += 1_000_000      # the business recovers (a test-only injection)
    while not env.done:
        next_day(env)
    assert env.summary()["status"] == "completed"


def test_net_assets_value_unexpired_stock_at_cost(env):
    stock_machine(env, quantity=20, ordered=30)
    biz = env.business
    assert biz.net_assets() == biz.cash + 30 * biz.cost[0] - 0
    assert env.summary()["net_assets"] == biz.net_assets() / 100


def test_stock_keeps_its_own_indices_through_every_move():
    """``Stock`` alone (no business around it): after each move, the figures it keeps
    without a scan equal a recount of its batches."""
    from vendbench.environment.autovend._stock import Listing, Stock

    stock = Stock(cost=[100, 250], machines=2)

    def check(day):
        wh_units, expiring, value = stock.recount(day)
        assert stock.wh_units == wh_units
        assert stock.value_on(day) == (expiring, value)
        assert [stock.count_shelf(m) for m in range(2)] == stock.on_shelf

    stock.receive([(0, 10)], life=[4, 1], day=1)          # expires on day 5
    stock.receive([(0, 4), (1, 6)], life=[7, 1], day=2)   # days 9 and 3
    check(2)
    listing = stock.shelves[0][0] = Listing(price=300)
    stock.restock(0, 0, listing, 12, day=2)
    assert [(b.expiry, b.units) for b in listing.batches] == [(5, 10), (9, 2)]
    check(2)
    assert [(b.expiry, b.units) for b in stock.unshelve(0, 0, 3)] == [(5, 3)]
    check(2)
    assert stock.fresh(1, day=3, enough=100) == 0          # expired on day 3
    assert [(b.expiry, b.units) for b in stock.discard(1, 4, day=3)] == [(3, 4)]
    check(3)
    fresh, stale = stock.delist(0, 0, day=5)                # the day-5 units expired
    assert [(b.expiry, b.units) for b in fresh] == [(9, 2)]
    assert [(b.expiry, b.units) for b in stale] == [(5, 7)] and 0 not in stock.shelves[0]
    check(5)
