"""The 18 tools of design §2.1: each one's happy path and each of its rejections."""

from __future__ import annotations

import json


from vendbench.environment import make
from vendbench.environment.autovend._tools import TOOLS

from ..conftest import next_day, stock_machine

SPEC_TOOLS = ["get_daily_report", "list_machines", "get_machine_inventory",
              "get_warehouse_inventory", "get_orders", "search_catalog", "get_sales_report",
              "get_financials", "query_sql", "place_order", "set_price", "discard", "end_day",
              "restock", "remove_stock", "delist", "read_notes", "write_notes"]


def rejected(out: dict) -> list[str]:
    return [r["reason"] for r in out.get("rejected", [])]


def test_exactly_the_18_spec_tools_with_openai_schemas(env):
    assert [t["function"]["name"] for t in env.tools] == SPEC_TOOLS
    for t in env.tools:
        assert t["type"] == "function"
        params = t["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert "$ref" not in json.dumps(params)
    order = next(t for t in env.tools if t["function"]["name"] == "place_order")
    items = order["function"]["parameters"]["properties"]["items"]
    assert items["minItems"] == 1 and items["maxItems"] == 100
    assert set(items["items"]["required"]) == {"product_id", "quantity"}


def test_schemas_reveal_no_hidden_parameter(env):
    text = json.dumps(env.tools).lower()
    for word in ("popularity", "elasticity", "attraction", "no_purchase"):
        assert word not in text


def test_unknown_tool_and_bad_json_are_errors_not_exceptions(env):
    out = env.call("place_ordr", {})
    assert not out["ok"] and "place_order" in out["error"]
    out = env.call("end_day", "{not json")
    assert not out["ok"] and "JSON" in out["error"] and env.day == 1
    out = env.call("list_machines", "[1, 2]")
    assert not out["ok"] and "object" in out["error"]
    out = env.call("list_machines", {"surprise": 1})
    assert not out["ok"] and "surprise" in out["error"]


def test_arguments_may_be_a_json_string(env):
    assert env.call("search_catalog", '{"subcategory": "water", "page_size": 2}')["ok"]
    assert env.call("end_day", "{}")["ok"] and env.day == 2


# --- queries -----------------------------------------------------------------------
def test_daily_report_and_list_machines(env):
    report = env.call("get_daily_report", {})["report"]
    assert report == env.observe() and "Day 1 of 30" in report and "2026-04-01" in report
    machines = env.call("list_machines", {})["machines"]
    assert len(machines) == 20 and machines[0]["capacity"] == 200


def test_machine_inventory(env):
    stock_machine(env)
    inv = env.call("get_machine_inventory", {"machine_id": "M01"})
    row = inv["listings"][0]
    assert row["product_id"] == "P0001" and row["units"] == row["sellable"] == 30
    assert row["expired"] == 0 and row["price"] == row["ref_price"]
    assert row["sold_7d"] == row["sold_30d"] == 0
    next_day(env, 8)
    row = env.call("get_machine_inventory", {"machine_id": "M01"})["listings"][0]
    report = env.call("get_sales_report", {"window": 30, "machine_id": "M01"})
    assert row["sold_30d"] == report["totals"]["units"] >= row["sold_7d"]
    assert not env.call("get_machine_inventory", {"machine_id": "M21"})["ok"]
    assert "list_machines" in env.call("get_machine_inventory", {"machine_id": "x"})["error"]
    assert not env.call("get_machine_inventory", {})["ok"]


def test_warehouse_inventory_and_pagination(env):
    items = [{"product_id": f"P{i:04d}", "quantity": 2} for i in range(1, 31)]
    assert env.call("place_order", {"items": items})["ok"]
    next_day(env, 3)
    wh = env.call("get_warehouse_inventory", {})
    assert wh["total_rows"] == 30 and len(wh["rows"]) == 20 and wh["pages"] == 2
    assert len(env.call("get_warehouse_inventory", {"page": 2})["rows"]) == 10
    assert len(env.call("get_warehouse_inventory", {"page_size": 50})["rows"]) == 30
    assert not env.call("get_warehouse_inventory", {"page_size": 51})["ok"]
    assert not env.call("get_warehouse_inventory", {"page": 0})["ok"]
    one = env.call("get_warehouse_inventory", {"product_id": "P0003"})
    assert one["total_rows"] == 1 and one["rows"][0]["units"] == 2
    assert not env.call("get_warehouse_inventory", {"product_id": "nope"})["ok"]


def test_orders_by_status(env):
    env.call("place_order", {"items": [{"product_id": "P0001", "quantity": 5}]})
    assert env.call("get_orders", {"status": "in_transit"})["total_rows"] == 1
    assert env.call("get_orders", {"status": "delivered"})["total_rows"] == 0
    assert not env.call("get_orders", {"status": "lost"})["ok"]


def test_search_catalog(env):
    out = env.call("search_catalog", {"subcategory": "coffee", "max_unit_cost": 3.0,
                                      "page_size": 50})
    assert out["rows"] and all(r["subcategory"] == "coffee" and r["unit_cost"] <= 3.0
                               for r in out["rows"])
    assert env.call("search_catalog", {"query": "P0042"})["rows"][0]["product_id"] == "P0042"
    # words match from their start: the catalogue has no cola, and "cola" no longer
    # finds its chocolates (it found 75 by substring)
    assert env.call("search_catalog", {"query": "cola"})["total_rows"] == 0
    chocolates = env.call("search_catalog", {"query": "choc", "page_size": 50})["rows"]
    assert chocolates and all("chocolate" in r["name"].lower() for r in chocolates)
    assert env.call("search_catalog", {})["total_rows"] == 1372
    assert not env.call("search_catalog", {"subcategory": "tobacco"})["ok"]
    assert not env.call("search_catalog", {"max_unit_cost": -1})["ok"]
    assert not env.call("search_catalog", {"max_unit_cost": "cheap"})["ok"]


def test_sales_report_and_financials(env):
    stock_machine(env, quantity=60, ordered=60)
    next_day(env, 3)
    out = env.call("get_sales_report", {"window": 7})
    assert out["totals"]["units"] > 0
    assert out["rows"][0]["machine_id"] == "M01" and out["rows"][0]["product_id"] == "P0001"
    by_day = env.call("get_sales_report", {"window": 3, "group_by": "day"})
    assert len(by_day["rows"]) == 3
    assert sum(r["units"] for r in by_day["rows"]) <= out["totals"]["units"]
    assert env.call("get_sales_report", {"window": 30, "machine_id": "M02"})["rows"] == []
    for bad in ({"window": 2}, {"window": "7"}, {}, {"window": 7, "group_by": "colour"}):
        assert not env.call("get_sales_report", bad)["ok"], bad
    fin = env.call("get_financials", {"window": 3})
    assert len(fin["days"]) == 3 and fin["totals"]["revenue"] > 0
    assert not env.call("get_financials", {"window": 5})["ok"]


def test_sales_report_groups_sum_the_raw_sales_rows():
    env = make("autovend", seed=2, days=30, daily_tool_calls=10**9)
    stock_machine(env, "M01", "P0001", quantity=40, ordered=80)
    assert env.call("restock", {"items": [{"machine_id": "M03", "product_id": "P0001",
                                           "quantity": 30}]})["ok"]
    next_day(env, 4)
    biz, rows = env.business, env.business.recent_sales(3)
    mids = [m.id for m in env.world.machines]
    expect = {}
    for d, m, k, price, _, units, revenue, _ in rows.tolist():
        gp = revenue - units * biz.cost[k]
        for group, key in (("machine", mids[m]), ("listing", (mids[m], f"P{k + 1:04d}")),
                           ("product", f"P{k + 1:04d}"), ("day", biz.iso(d))):
            t = expect.setdefault((group, key), [0, 0, 0])
            t[0], t[1], t[2] = t[0] + units, t[1] + revenue, t[2] + gp
    for group in ("machine", "listing", "product", "day"):
        out = env.call("get_sales_report", {"window": 3, "group_by": group, "page_size": 50})
        got = {}
        for r in out["rows"]:
            key = {"machine": r.get("machine_id"), "product": r.get("product_id"),
                   "listing": (r.get("machine_id"), r.get("product_id")),
                   "day": r.get("date")}[group]
            got[(group, key)] = [r["units"], round(r["revenue"] * 100),
                                 round(r["gross_profit"] * 100)]
        assert got == {k: v for k, v in expect.items() if k[0] == group}, group
    assert sum(v[0] for k, v in expect.items() if k[0] == "day") > 0


# --- remote mutations ----------------------------------------------------------------
def test_place_order_debits_cash_at_once_and_partial_batches(env):
    cash = env.business.cash
    out = env.call("place_order", {"items": [
        {"product_id": "P0001", "quantity": 10},
        {"product_id": "P9999", "quantity": 1},
        {"product_id": "P0002", "quantity": -3},
        {"product_id": "P0003", "quantity": 2.5},
        {"product_id": "P0004", "quantity": "5"},
        {"product_id": "P0005"},
        {"product_id": "P0006", "quantity": 10**9},
    ]})
    assert not out["ok"] and [a["index"] for a in out["accepted"]] == [0]
    assert [r["index"] for r in out["rejected"]] == [1, 2, 3, 4, 5, 6]
    assert env.business.cash == cash - 10 * env.business.cost[0]
    assert len(env.business.orders) == 1


def test_place_order_cannot_spend_more_cash_than_there_is(env):
    before = env.business.fingerprint()
    out = env.call("place_order", {"items": [{"product_id": "P0100", "quantity": 10_000}] * 4})
    assert "not enough cash" in " ".join(rejected(out))
    assert env.business.cash >= 0 and before != env.business.fingerprint()


def test_malformed_batches_are_rejected_whole(env):
    before = env.business.fingerprint()
    good = {"product_id": "P0001", "quantity": 1}
    for args in ({"items": []}, {"items": [good] * 101}, {"items": good}, {"items": [good, 3]},
                 {}, {"items": [good], "note": "x"}, {"items": "P0001"}):
        out = env.call("place_order", args)
        assert not out["ok"] and "malformed batch" in out["error"], args
    assert env.business.fingerprint() == before


def test_set_price(env):
    stock_machine(env)
    ref = env.business.ref_price[0] / 100
    out = env.call("set_price", {"items": [{"machine_id": "M01", "product_id": "P0001",
                                            "price": ref * 1.5}]})
    assert out["ok"] and env.business.shelves[0][0].price == round(ref * 150)
    for price in (ref * 0.49, ref * 2.01, 0, "2.0", float("nan")):
        out = env.call("set_price", {"items": [{"machine_id": "M01", "product_id": "P0001",
                                                "price": price}]})
        assert not out["ok"], price
    out = env.call("set_price", {"items": [{"machine_id": "M02", "product_id": "P0001",
                                            "price": ref}]})
    assert "not listed" in rejected(out)[0]


def test_discard_writes_off_expired_first(env):
    env.call("place_order", {"items": [{"product_id": "P0001", "quantity": 10}]})
    next_day(env, 4)
    env.call("place_order", {"items": [{"product_id": "P0001", "quantity": 5}]})
    next_day(env, 4)
    out = env.call("discard", {"items": [{"product_id": "P0001", "quantity": 12}]})
    assert out["ok"]
    left = env.business.warehouse[0]
    assert sum(b.units for b in left) == 3 and left[0].arrived == 8   # the newer batch
    assert "only 3" in rejected(env.call("discard", {"items": [{"product_id": "P0001",
                                                                "quantity": 4}]}))[0]


def test_end_day_advances_and_reports(env):
    out = env.call("end_day", {})
    assert out == {"ok": True, "closed_day": 1, "message": out["message"]}
    assert env.day == 2 and "Day 2 of 30" in env.observe()


# --- physical ------------------------------------------------------------------------
def test_restock_lists_new_products_and_respects_capacity_and_listing_limit(env):
    items = [{"product_id": f"P{i:04d}", "quantity": 10} for i in range(1, 43)]
    env.call("place_order", {"items": items + [{"product_id": "P0050", "quantity": 200}]})
    next_day(env, 3)
    out = env.call("restock", {"items": [{"machine_id": "M01", "product_id": f"P{i:04d}",
                                          "quantity": 4} for i in range(1, 42)]})
    assert len(out["accepted"]) == 40 and "already lists 40" in rejected(out)[0]
    out = env.call("restock", {"items": [{"machine_id": "M01", "product_id": "P0001",
                                          "quantity": 5}]})
    assert out["ok"] and out["accepted"][0]["units_on_shelf"] == 9
    assert env.call("restock", {"items": [{"machine_id": "M02", "product_id": "P0050",
                                           "quantity": 200}]})["ok"]
    out = env.call("restock", {"items": [{"machine_id": "M02", "product_id": "P0042",
                                          "quantity": 1}]})
    assert "room for 0" in rejected(out)[0]
    out = env.call("restock", {"items": [{"machine_id": "M03", "product_id": "P0042",
                                          "quantity": 11}]})
    assert "only 10 unexpired" in rejected(out)[0]


def test_remove_stock_and_delist(env):
    stock_machine(env, quantity=30, ordered=30)
    out = env.call("remove_stock", {"items": [{"machine_id": "M01", "product_id": "P0001",
                                               "quantity": 10}]})
    assert out["ok"] and out["accepted"][0]["units_on_shelf"] == 20
    assert sum(b.units for b in env.business.warehouse[0]) == 10
    assert "holds only 20" in rejected(env.call("remove_stock", {"items": [
        {"machine_id": "M01", "product_id": "P0001", "quantity": 21}]}))[0]
    out = env.call("delist", {"items": [{"machine_id": "M01", "product_id": "P0001"}]})
    assert out["accepted"][0]["returned_to_warehouse"] == 20
    assert 0 not in env.business.shelves[0]
    assert "not listed" in rejected(env.call("delist", {"items": [
        {"machine_id": "M01", "product_id": "P0001"}]}))[0]


# --- memory ----------------------------------------------------------------------------
def test_notes_up_to_6000_characters(env):
    assert env.call("read_notes", {})["text"] == ""
    assert env.call("write_notes", {"text": "a" * 6000})["ok"]
    out = env.call("write_notes", {"text": "b" * 6001})
    assert not out["ok"] and "6000" in out["error"]
    assert env.call("read_notes", {})["text"] == "a" * 6000
    assert not env.call("write_notes", {"text": 42})["ok"]


# --- the day's budget and the end of the trial --------------------------------------------
def test_daily_tool_budget_ends_the_day():
    env = make("autovend", seed=1, days=5)
    for i in range(39):
        assert "day_ended" not in env.call("list_machines", {})
    out = env.call("bogus_tool", {})                     # invalid calls count too
    assert out["day_ended"] and "40 tool calls" in out["notice"] and env.day == 2


def test_no_tool_call_after_the_trial_ends():
    env = make("autovend", seed=1, days=2)
    next_day(env, 2)
    assert env.done and env.summary()["status"] == "completed"
    out = env.call("list_machines", {})
    assert not out["ok"] and "over" in out["error"]


def test_every_tool_has_a_kind_from_the_spec():
    kinds = {n: t.kind for n, t in TOOLS.items()}
    assert {n for n, k in kinds.items() if k == "physical"} == {"restock", "remove_stock",
                                                                  "delist"}
    assert {n for n, k in kinds.items() if k == "memory"} == {"read_notes", "write_notes"}
