"""The network scenario (after Prosus Vending Bench): tools, money, time, determinism,
invariants every simulated day, fuzzing, and the calibration of its reference
policies against Prosus's published reference."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import statistics
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vendbench.environment import make
from vendbench.environment.network import NetworkEnv
from vendbench.environment.network._config import load
from vendbench.environment import make_policy

ECO = load()
DAY_MINUTES = ECO["clock"]["close"] - ECO["clock"]["open"]


def fingerprint(env: NetworkEnv, clock: bool = True) -> str:
    """Everything a call could change (but the clock, with ``clock=False``: its minutes
    and the day's count of calls, which every call adds to, design §35.0)."""
    skip = ({"eco", "tools", "instructions", "_records", "_discounts",     # _discounts: a memo
             "market", "handlers"}                                  # an arena's operator
            | (set() if clock else {"minute", "_calls_today", "_calls_day"}))
    state = {k: v for k, v in env.__dict__.items() if k not in skip}
    def plain(o):
        if dataclasses.is_dataclass(o):
            return dataclasses.asdict(o)
        return sorted(o) if isinstance(o, set) else str(o)

    return json.dumps(state, default=plain, sort_keys=True)


def checked_ledger(env: NetworkEnv) -> None:
    """The bank moves only by sales, purchases, rent, marketing and refunds (and, in an
    arena, payments between operators); units are conserved from order to sale, loss
    (short shipments, insolvent suppliers) or expiry; every lot is whole and in date."""
    led = env.ledger
    assert env.bank == (env.initial_cash + led.sales_cash + led.sales_card - led.purchases
                        - led.rent - led.marketing - led.refunds - led.paid_operators
                        + led.from_operators)
    assert env.units_ordered == (env.units_held() + env.units_sold + env.units_lost
                                 + env.units_expired)
    assert all(0 <= s.units <= s.capacity for s in env.slots.values())
    lots = [lot for s in env.slots.values() for lot in s.lots] + [
        lot for product_lots in env.stock.values() for lot in product_lots]
    assert all(n > 0 and sell_by >= env.day for sell_by, n in lots)
    assert all(s.product is not None or not s.lots for s in env.slots.values())
    assert isinstance(env.bank, int) and isinstance(env.card_pending, int)


def play(policy: str, seed: int, days: int, check: bool = False) -> NetworkEnv:
    env = make("network", seed=seed, days=days)
    pol = make_policy(policy, env)

    def call(name, args=None):
        result = env.call(name, args)
        if check and name == "wait_for_next_day":
            checked_ledger(env)
        return result

    while not env.done:
        pol.play_day(call, env.observe())
    return env


def deliver(env: NetworkEnv, units: dict[str, int]) -> NetworkEnv:
    """As if ``units`` arrived at the depot today."""
    for product, n in units.items():
        env.receive(product, n)
    return env


def found(env: NetworkEnv) -> NetworkEnv:
    assert env.call("search_web", {"query": "drinks snacks coffee sweets"})["ok"]
    return env


# -- the world of the seed --------------------------------------------------------------
def test_the_world_has_the_seeds_machines_slots_tools_and_rules():
    env = NetworkEnv(seed=1)
    assert env.days == 30 and env.bank == 150_000
    machines = {s.machine for s in env.slots.values()}
    assert len(machines) == 6 and len(env.slots) == 72
    for m in machines:
        assert sum(s.machine == m for s in env.slots.values()) == 12
    caps = {(s.kind, s.size): s.capacity for s in env.slots.values()}
    assert caps == {("snack", "small"): 18, ("snack", "large"): 10, ("drinks", "can"): 10}
    assert "AI-HOUSE:DRINKS:A1" in env.slots
    assert [t["function"]["name"] for t in env.tools] == [
        "get_status", "get_sales_report", "get_machine_inventory", "get_storage_inventory",
        "search_web", "list_emails", "read_email", "send_email", "check_offers",
        "order_goods", "restock_machine", "swap_item", "set_price", "clear_slot",
        "send_payment", "run_marketing", "get_marketing_report", "write_note", "read_notes",
        "set_reminder", "list_reminders", "wait_for_next_day"]
    # the briefing is generated from the economy file
    for fact in ("EUR 1,500.00", "EUR 12.00 a day", "09:00-17:00", "AI House", "×1.30",
                 "prints: EUR 8.00, +10% traffic for 7 days"):
        assert fact in env.instructions, fact
    assert NetworkEnv(seed=1, days=365).days == 365


def test_suppliers_offers_orders_and_deliveries():
    env = NetworkEnv(seed=1)
    assert "search_web" in env.call("check_offers", {"supplier_id": "S-BEVDIRECT"})["error"]
    found(env)
    offers = env.call("check_offers", {"supplier_id": "S-BEVDIRECT", "quantity": 100})
    one = env.call("check_offers", {"supplier_id": "S-BEVDIRECT", "quantity": 1})
    cola = {o["product_id"]: o["unit_price"] for o in offers["offers"]}["cola"]
    assert cola < {o["product_id"]: o["unit_price"] for o in one["offers"]}["cola"]  # volume
    bank = env.bank
    order = env.call("order_goods", {"supplier_id": "S-BEVDIRECT",
                                     "items": [{"product_id": "cola", "quantity": 100}]})
    assert order["ok"] and env.bank == bank - round(order["paid"] * 100)
    assert order["receipt"][0]["unit_price"] == cola
    bad = env.call("order_goods", {"supplier_id": "S-BEVDIRECT",
                                   "items": [{"product_id": "sandwich", "quantity": 1}]})
    assert not bad["ok"] and "nothing was ordered" in bad["error"]
    broke = env.call("order_goods", {"supplier_id": "S-BEVDIRECT",
                                     "items": [{"product_id": "energy-drink",
                                                "quantity": 10_000}]})
    assert not broke["ok"] and "not enough money" in broke["error"]
    assert env.depot.get("cola", 0) == 0               # in transit: a day, plus any delay
    while not env.depot.get("cola") and env.day < 6:
        env.call("wait_for_next_day")
    assert 50 <= env.depot["cola"] <= 100              # short shipments happen


def test_weekly_discounts_repeat_from_the_seed_and_move_between_weeks():
    a, b = found(NetworkEnv(seed=4)), found(NetworkEnv(seed=4))
    b.call("order_goods", {"supplier_id": "S-FRESHCO",               # other actions...
                           "items": [{"product_id": "sandwich", "quantity": 5}]})
    assert a.call("check_offers", {"supplier_id": "S-SWEETSUPPLY"}) == \
        b.call("check_offers", {"supplier_id": "S-SWEETSUPPLY"})     # ...same offers
    weeks = {tuple(a.weekly_discount(s, p, d) for s in ECO.suppliers for p in ECO.products)
             for d in (1, 8, 15, 22)}
    assert len(weeks) > 1
    discounts = [a.weekly_discount(s, p, d) for s in ECO.suppliers for p in ECO.products
                 for d in range(1, 365, 7)]
    assert set(discounts) <= {0.0, 0.1, 0.2, 0.3}
    assert 0.2 < sum(x > 0 for x in discounts) / len(discounts) < 0.4     # 30 % chance


def test_negotiation_catalogues_and_unreliable_suppliers():
    env = found(NetworkEnv(seed=1))
    before = env.unit_price("S-FRESHCO", "sandwich", 1)
    for _ in range(4):
        assert env.call("send_email", {"to": "sales@freshco.example", "subject": "Terms",
                                       "body": "Could you give us a better price?"})["ok"]
        env.minute = ECO["clock"]["open"]
    env.call("send_email", {"to": "sales@freshco.example", "subject": "Catalogue please",
                            "body": "Please send your price list."})
    cut = round(before * 0.94 * 0.96 * 0.98)
    assert env.unit_price("S-FRESHCO", "sandwich", 1) == before       # as the reply says:
    assert env.unit_price("S-FRESHCO", "sandwich", 1, env.day + 1) == cut   # from tomorrow
    env.call("wait_for_next_day")                                     # replies overnight
    assert env.unit_price("S-FRESHCO", "sandwich", 1) == cut
    bodies = [e.body for e in env.emails if e.sender == "sales@freshco.example"]
    assert any("take 6% off" in b for b in bodies) and any("best terms" in b for b in bodies)
    assert any("sandwich: EUR" in b for b in bodies)
    unknown = env.call("send_email", {"to": "who@nowhere.example", "subject": "x", "body": "y"})
    assert not unknown["ok"]
    # CheapMart stops answering on day 12; Office Gadgets takes money and ships nothing
    env.call("search_web", {"query": "cheap office gadgets"})
    while env.day < 20:
        env.call("wait_for_next_day")
    assert "does not answer" in env.call("check_offers", {"supplier_id": "S-CHEAPMART"})["error"]
    lost = env.units_lost
    assert env.call("order_goods", {"supplier_id": "S-GADGETS",
                                    "items": [{"product_id": "mixed-nuts", "quantity": 5}]})["ok"]
    assert env.units_lost == lost + 5
    checked_ledger(env)


def test_slots_restock_swap_clear_price_and_fit():
    env = NetworkEnv(seed=1)
    deliver(env, {"cola": 30, "sandwich": 12, "chocolate-bar": 40})
    env.units_ordered = 82                              # as if delivered
    slot = "AI-HOUSE:DRINKS:A1"
    assert "does not fit" in env.call("restock_machine", {"slot_id": slot,
                                                          "product_id": "sandwich",
                                                          "quantity": 1})["error"]
    assert "room for 10" in env.call("restock_machine", {"slot_id": slot, "product_id": "cola",
                                                        "quantity": 11})["error"]
    assert env.call("restock_machine", {"slot_id": slot, "product_id": "cola",
                                        "quantity": 10})["ok"]
    assert env.minute == ECO["clock"]["open"] + 3 * 45        # the two rejections cost too
    assert env.call("set_price", {"slot_id": slot, "price": 2.35})["price"] == 2.35
    assert not env.call("set_price", {"slot_id": slot, "price": 2.355})["ok"]
    assert not env.call("set_price", {"slot_id": "AI-HOUSE:DRINKS:B1", "price": 2.0})["ok"]
    assert not env.call("restock_machine", {"slot_id": "X:Y:Z", "product_id": "cola",
                                            "quantity": 1})["ok"]
    assert not env.call("restock_machine", {"slot_id": "AI-HOUSE:SNACK:A1",
                                            "product_id": "desk-lamp", "quantity": 1})["ok"]
    assert env.call("clear_slot", {"slot_id": slot})["returned_to_depot"] == 10
    assert env.depot["cola"] == 30 and not env.call("clear_slot", {"slot_id": slot})["ok"]
    assert env.call("swap_item", {"slot_id": "AI-HOUSE:SNACK:C1",
                                  "product_id": "sandwich"})["units"] == 10
    checked_ledger(env)


def test_the_working_day_is_eight_hours_and_about_ten_fills():
    env = NetworkEnv(seed=1)
    deliver(env, {"cola": 1000})
    env.units_ordered = 1000
    slots = [s for s in env.slots if ":DRINKS:" in s]
    for slot in slots[:DAY_MINUTES // 45]:
        result = env.call("restock_machine", {"slot_id": slot, "product_id": "cola",
                                              "quantity": 1})
        assert result["ok"] and "crossed_midnight" not in result and env.day == 1
    assert DAY_MINUTES // 45 == 10 and env._time() == "16:30"
    env.call("wait_for_next_day")
    assert env.minute == ECO["clock"]["open"] and env.day == 2
    checked_ledger(env)


def test_a_call_that_does_not_fit_the_day_crosses_midnight():
    """design §20.3: it spends what is left of today, the night passes at the prices in
    force, and it finishes tomorrow with the rest (its result says so)."""
    env = NetworkEnv(seed=1, days=3)
    deliver(env, {"cola": 100})
    env.units_ordered = 100
    slot, other = "AI-HOUSE:DRINKS:A1", "AI-HOUSE:DRINKS:A2"
    env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 10})
    env.minute = ECO["clock"]["close"] - 30                              # 16:30
    got = env.call("restock_machine", {"slot_id": other, "product_id": "cola",
                                       "quantity": 10})
    assert got["ok"] and env.day == 2 and env._time() == "09:15"         # 30 + 15 minutes
    night = got["crossed_midnight"]
    assert night["closed_day"] == 1 and night["finished"] == "day 2, 09:15"
    sales = {r["machine_id"]: r for r in env.drain_records()["sales"]}
    assert sales["AI-HOUSE:DRINKS"]["units_on_shelf"] == 10   # the fill came after the night
    assert night["sold_units"] == sales["AI-HOUSE:DRINKS"]["units_sold"] > 0
    env.minute = ECO["clock"]["close"] - 5                               # a quote crossing
    quote = env.call("check_offers", {"supplier_id": "S-BEVDIRECT"})     # midnight is for
    assert not quote["ok"] and quote["crossed_midnight"]["closed_day"] == 2   # tomorrow
    env.call("search_web", {"query": "drinks"})
    env.minute = ECO["clock"]["close"] - 5
    quote = env.call("check_offers", {"supplier_id": "S-BEVDIRECT"})     # the last day:
    assert not quote["ok"] and "last day" in quote["error"] and env.day == 3  # nothing
    assert env.minute == ECO["clock"]["close"] - 5                           # crosses
    checked_ledger(env)


def test_a_quote_carries_the_day_it_is_valid_for():
    env = found(NetworkEnv(seed=1, days=30))
    for day in range(1, 16):                              # into a week with another price
        env.minute = ECO["clock"]["close"] - 5
        quote = env.call("check_offers", {"supplier_id": "S-BEVDIRECT", "quantity": 50})
        assert quote["ok"] and quote["valid_day"] == env.day == day + 1
        assert quote["crossed_midnight"]["closed_day"] == day
        prices = {o["product_id"]: o["unit_price"] for o in quote["offers"]}
        assert prices == {p: env.unit_price("S-BEVDIRECT", p, 50) / 100 for p in prices}
    checked_ledger(env)


def test_sales_banking_rent_and_shared_demand_pools():
    env = NetworkEnv(seed=2)
    deliver(env, {"cola": 40})
    env.units_ordered = 40
    for slot in ("MAIN-LOUNGE:DRINKS:A1", "MAIN-LOUNGE:DRINKS:A2"):   # one product, twice
        env.call("restock_machine", {"slot_id": slot, "product_id": "cola", "quantity": 10})
    bank = env.bank
    night = env.call("wait_for_next_day")
    revenue = round(night["revenue"] * 100)
    cash = revenue * 55 // 100
    assert env.bank == bank + cash - ECO["economy"]["rent_per_day"]     # cash banked
    assert env.card_pending == revenue - cash                           # card: tomorrow
    (row,) = env.drain_records()["sales"]                               # one pool
    assert row["units_on_shelf"] == 20 and row["product_id"] == "cola"
    card = env.card_pending
    env.call("wait_for_next_day")
    assert env.ledger.sales_card == card
    checked_ledger(env)


def test_complaints_refunds_and_reputation():
    env = play("oracle", 1, 30)
    assert env.complaints and all(c.resolved for c in env.complaints if c.day < 29)
    env = NetworkEnv(seed=1)
    from vendbench.environment.network._env import Complaint

    env.complaints.append(Complaint("C0001", 1, "c@mail.example", 250))
    assert "full amount" in env.call("send_payment", {"to": "C0001", "amount": 2.0})["error"]
    rep = env.reputation
    for _ in range(4):
        env.call("wait_for_next_day")
    assert env.reputation < rep                         # unresolved, it costs reputation
    assert env.call("send_payment", {"to": "c@mail.example", "amount": 2.5})["ok"]
    assert env.ledger.refunds == 250
    assert not env.call("send_payment", {"to": "C0001", "amount": 2.5})["ok"]


def test_marketing_bonuses_fatigue_and_bounds():
    env = NetworkEnv(seed=1)
    m = env.marketing_multiplier
    assert m("AI-HOUSE", 1) == 1.0
    env.campaigns = [(1, "AI-HOUSE", "prints", "x")]
    assert m("AI-HOUSE", 1) == pytest.approx(1.10) and m("AI-HOUSE", 7) == pytest.approx(1.10)
    assert m("AI-HOUSE", 8) == 1.0 and m("AI-LOUNGE", 1) == 1.0        # others unaffected
    env.campaigns += [(1, "AI-HOUSE", "prints", "x")]                   # saturates
    assert m("AI-HOUSE", 1) == pytest.approx(1.10)
    env.campaigns += [(1, "AI-HOUSE", "prints", "x")]                   # 3 > 2 uses
    assert m("AI-HOUSE", 1) == pytest.approx(1.10 - 0.12)
    env.campaigns = [(1, "AI-HOUSE", c, "x") for c in ("prints", "slack", "email")]
    assert m("AI-HOUSE", 1) == pytest.approx(1.35)                      # the ceiling
    env.campaigns = [(1, "AI-HOUSE", "email", "x")] * 6
    assert m("AI-HOUSE", 1) == pytest.approx(0.50)                      # the floor
    env.campaigns = []
    bank = env.bank
    assert env.call("run_marketing", {"location": "AI-HOUSE", "channel": "slack",
                                      "message": "New snacks!"})["multiplier_today"] == 1.15
    assert env.bank == bank - 100
    assert not env.call("run_marketing", {"location": "MOON", "channel": "slack",
                                          "message": "x"})["ok"]


def test_notes_reminders_and_reward():
    env = NetworkEnv(seed=1, days=2)
    assert env.call("write_note", {"text": "buy cola"})["ok"]
    assert env.call("read_notes")["notes"] == "buy cola"
    assert not env.call("write_note", {"text": "x" * 6001})["ok"]
    assert env.call("set_reminder", {"day": 2, "text": "reorder"})["ok"]
    assert not env.call("set_reminder", {"day": 0, "text": "x"})["ok"]
    env.call("wait_for_next_day")
    assert env.call("get_status")["reminders_today"] == ["reorder"]
    assert env.score() == 0.0                           # unfinished: 0
    env.call("wait_for_next_day")
    assert env.status == "completed" and env.score() == round(env.bank / 100, 2) > 0
    assert not env.call("get_status")["ok"]
    broke = NetworkEnv(seed=1, days=30)
    broke.bank = 0
    broke.initial_cash = 0
    for _ in range(11):
        broke.call("wait_for_next_day")
    assert broke.status == "bankrupt" and broke.score() == 0.0       # > 10 missed rents


def test_the_score_is_the_bank_and_net_assets_count_the_stock():
    """The trial record keeps both (design §21): the score is the final bank balance, and
    ``final_net_assets`` is what the business holds, cash, card receipts and stock."""
    env = NetworkEnv(seed=1, days=2)
    env.call("search_web", {"query": "wholesale vending snacks"})
    supplier = sorted(env.known_suppliers)[0]
    product = env.eco.suppliers[supplier].products[0]
    assert env.call("order_goods", {"supplier_id": supplier,
                                    "items": [{"product_id": product, "quantity": 40}]})["ok"]
    env.call("wait_for_next_day")
    env.call("wait_for_next_day")
    final = env.final_state()
    assert final["score"] == env.score() == final["final_cash"] == round(env.bank / 100, 2)
    assert final["final_net_assets"] == round(env.net_worth() / 100, 2) > final["score"]


# -- determinism and invariants -------------------------------------------------------
def test_identical_results_across_processes():
    code = ("import hashlib; from tests.environment.test_network import play, fingerprint; "
            "e = play('order-up-to', 3, 30); "
            "print(e.score(), hashlib.sha256(fingerprint(e).encode()).hexdigest())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)}
    here = play("order-up-to", 3, 30)
    assert outs == {f"{here.score()} {hashlib.sha256(fingerprint(here).encode()).hexdigest()}\n"}


@pytest.mark.parametrize("policy,days", [("oracle", 30), ("order-up-to", 30),
                                         ("oracle", 365), ("order-up-to", 365)])
def test_accounting_holds_every_day_of_full_episodes(policy, days):
    env = play(policy, 2, days, check=True)
    assert env.status == "completed" and env.day == days + 1
    assert env.card_pending == 0                                      # settled at the end


# -- fuzzing: a rejected call changes nothing -----------------------------------------
args = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6)
                    | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=8)
known = st.fixed_dictionaries({}, optional={
    "slot_id": st.sampled_from(["AI-HOUSE:DRINKS:A1", "AI-LOUNGE:SNACK:C2", "nope"]),
    "product_id": st.sampled_from(["cola", "sandwich", "desk-lamp", "x"]),
    "quantity": st.integers(-5, 200), "price": st.floats(-1, 100, allow_nan=False),
    "supplier_id": st.sampled_from(["S-BEVDIRECT", "S-CHEAPMART", "S-NONE"]),
    "to": st.sampled_from(["C0001", "sales@freshco.example", "x"]),
    "amount": st.floats(-1, 10, allow_nan=False), "location": st.sampled_from(
        ["AI-HOUSE", "MOON"]), "channel": st.sampled_from(["prints", "fax"]),
    "items": st.lists(st.fixed_dictionaries({"product_id": st.sampled_from(["cola", "x"]),
                                             "quantity": st.integers(-2, 20000)}),
                      max_size=3)})


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from([t["function"]["name"] for t in NetworkEnv(seed=1).tools]
                            + ["launch_rocket"]), arguments=known | args)
def test_a_rejected_call_changes_nothing(name, arguments):
    env = found(NetworkEnv(seed=1))
    deliver(env, {"cola": 5})
    env.units_ordered = 5
    env.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola",
                                 "quantity": 5})
    before, minute, calls = fingerprint(env, clock=False), env.minute, env._calls_today
    result = env.call(name, arguments)
    assert env._calls_today == calls + 1             # every call counts, rejected too
    assert isinstance(result, dict) and "ok" in result
    if not result["ok"]:                 # nothing changes but the clock, by the call's kind
        assert result["error"] and fingerprint(env, clock=False) == before
        spent = ECO["clock"]["cost"].get(name, 0)
        parsed, _ = env._parse(name, arguments) if name in ECO["clock"]["cost"] \
            else (None, None)
        if name == "swap_item":               # a fill's minutes, and the swap's when units
            spent = ECO["clock"]["cost"]["restock_machine"]           # of another product
            if parsed is not None and parsed.slot_id == "AI-HOUSE:DRINKS:A1" \
                    and parsed.product_id != "cola":                  # would come out
                spent += ECO["clock"]["cost"]["swap_item"]
        assert env.minute == minute + spent
    checked_ledger(env)


# -- calibration against Prosus's published reference ----------------------------------
@pytest.mark.parametrize("days,reference,low,high", [(30, 3227.89, 2944.77, 3323.17),
                                                     (365, 61218.52, 57954.45, 64709.50)])
def test_the_reference_policies_land_where_prosus_does(days, reference, low, high):
    oracle = [play("oracle", s, days).score() for s in range(1, 6)]
    baseline = [play("order-up-to", s, days).score() for s in range(1, 6)]
    mean = statistics.fmean(oracle)
    assert abs(mean / reference - 1) <= 0.25, (oracle, reference)
    assert statistics.stdev(oracle) / mean < 0.10
    assert all(b < o for b, o in zip(baseline, oracle)), (baseline, oracle)


# The network's reference episodes (30 days), pinned: the final bank balance to the cent,
# tool calls, units sold and units expired. A change to the world, its demand or a
# reference policy must update these pins and docs/scenarios.md's calibration table
# together, in the same commit, saying why they moved (last: design §29.3, the oracle
# markets on a weekly schedule that meets no penalty and values a working minute by
# whether the day's fills fit).
PINS = {
    ("order-up-to", 1): (1_902.43, 559, 1449, 344),
    ("order-up-to", 2): (2_104.06, 543, 1528, 274),
    ("order-up-to", 3): (2_025.31, 553, 1515, 265),
    ("oracle", 1): (3_339.17, 473, 1214, 98),
    ("oracle", 2): (3_461.00, 491, 1229, 79),
    ("oracle", 3): (3_505.64, 488, 1264, 78),
}


@pytest.mark.parametrize("episode", sorted(PINS), ids=lambda e: f"{e[0]}-seed{e[1]}")
def test_the_reference_episodes_are_pinned(episode):
    policy, seed = episode
    env = make("network", seed=seed, days=30)
    pol = make_policy(policy, env)
    calls = []

    def call(name, args=None):
        calls.append(name)
        return env.call(name, args)

    while not env.done:
        pol.play_day(call, env.observe())
    got = (env.score(), len(calls), env.units_sold, env.units_expired)
    assert got == PINS[episode], (f"{policy} seed {seed} moved: {got}. If the world, its "
                                  "demand or the policy changed on purpose, update PINS "
                                  "here and docs/scenarios.md's calibration table together")


def test_the_documented_calibration_table_shows_the_pins():
    from pathlib import Path

    table = (Path(__file__).parents[2] / "docs" / "scenarios.md").read_text()
    for (policy, _), (score, *_rest) in PINS.items():
        row = next(line for line in table.splitlines()
                   if line.startswith(f"| 30 days, `{policy}`"))
        assert f"{score:,.2f}" in row, (policy, score, row)


def test_every_tool_has_a_happy_path_and_a_rejection():
    env = found(NetworkEnv(seed=1))
    deliver(env, {"cola": 30})
    env.units_ordered = 30
    env.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola",
                                 "quantity": 10})
    env.call("send_email", {"to": "trade@bevdirect.example", "subject": "catalogue",
                            "body": "price list please"})
    env.call("wait_for_next_day")
    email = env.call("list_emails")["emails"][0]["email_id"]
    from vendbench.environment.network._env import Complaint

    env.complaints.append(Complaint("C0999", 1, "z@mail.example", 200))
    happy = {
        "get_status": {}, "get_sales_report": {"days": 7},
        "get_machine_inventory": {"location": "AI-HOUSE"}, "get_storage_inventory": {},
        "search_web": {"query": "coffee"}, "list_emails": {}, "read_email": {"email_id": email},
        "send_email": {"to": "hello@beanworks.example", "subject": "hi", "body": "deal?"},
        "check_offers": {"supplier_id": "S-BEANWORKS", "quantity": 5},
        "order_goods": {"supplier_id": "S-BEANWORKS",
                        "items": [{"product_id": "latte-can", "quantity": 5}]},
        "restock_machine": {"slot_id": "AI-HOUSE:DRINKS:A2", "product_id": "cola",
                            "quantity": 5},
        "swap_item": {"slot_id": "AI-HOUSE:DRINKS:A2", "product_id": "cola"},
        "set_price": {"slot_id": "AI-HOUSE:DRINKS:A1", "price": 2.2},
        "clear_slot": {"slot_id": "AI-HOUSE:DRINKS:A2"},
        "send_payment": {"to": "C0999", "amount": 2.0},
        "run_marketing": {"location": "AI-LOUNGE", "channel": "prints", "message": "hi"},
        "get_marketing_report": {}, "write_note": {"text": "n"}, "read_notes": {},
        "set_reminder": {"day": 5, "text": "r"}, "list_reminders": {},
        "wait_for_next_day": {}}
    rejected = {
        "get_status": {"x": 1}, "get_sales_report": {"days": 2},
        "get_machine_inventory": {"location": "MARS"}, "get_storage_inventory": {"a": 1},
        "search_web": {"query": ""}, "list_emails": {"page": 2},
        "read_email": {"email_id": "E9999"}, "send_email": {"to": "a@b.example",
                                                            "subject": "", "body": ""},
        "check_offers": {"supplier_id": "S-NOPE"},
        "order_goods": {"supplier_id": "S-BEANWORKS", "items": []},
        "restock_machine": {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola",
                            "quantity": 50},
        "swap_item": {"slot_id": "AI-HOUSE:DRINKS:A3", "product_id": "iced-tea"},
        "set_price": {"slot_id": "AI-HOUSE:DRINKS:A1", "price": 0.05},
        "clear_slot": {"slot_id": "AI-HOUSE:DRINKS:B3"},
        "send_payment": {"to": "C0999", "amount": 1.0},
        "run_marketing": {"location": "AI-LOUNGE", "channel": "radio", "message": "hi"},
        "get_marketing_report": {"x": 0}, "write_note": {"text": 5}, "read_notes": {"x": 1},
        "set_reminder": {"day": 1, "text": "past"}, "list_reminders": {"x": 1},
        "wait_for_next_day": {"days": 2}}
    assert set(happy) == set(rejected) == {t["function"]["name"] for t in env.tools}
    for name in happy:
        env.minute = ECO["clock"]["open"]                  # a fresh morning for each pair
        before, minute = fingerprint(env, clock=False), env.minute
        result = env.call(name, rejected[name])
        assert not result["ok"] and result["error"], (name, result)
        assert fingerprint(env, clock=False) == before, name       # nothing but the clock:
        kind = "restock_machine" if name == "swap_item" else name       # a swap fills
        assert env.minute == minute + ECO["clock"]["cost"][kind], name    # probing costs
        result = env.call(name, happy[name])
        assert result["ok"], (name, result)
    checked_ledger(env)


def test_one_public_world():
    from vendbench.errors import ConfigError

    assert NetworkEnv(seed=1).summary()["world_seed"] == 2026
    for kwargs in ({"world_seed": 7}, {"world_salt": "s3cret"}):
        with pytest.raises(ConfigError, match="one public world"):
            make("network", seed=1, **kwargs)


def test_each_day_row_accounts_for_the_bank():
    env = play("oracle", 1, 30)
    rows = []
    env2 = make("network", seed=1, days=30)
    pol = make_policy("oracle", env2)
    while not env2.done:
        pol.play_day(env2.call, env2.observe())
        rows += env2.drain_records()["days"]
    assert [r["day"] for r in rows] == list(range(1, 31))
    bank = env.initial_cash / 100
    for r in rows[:-1]:                 # the last night also settles the card receipts
        assert r["cash"] == pytest.approx(bank + r["net"])
        bank = r["cash"]
    assert sum(r["purchases"] for r in rows) == pytest.approx(env.ledger.purchases / 100)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_oracles_marketing_schedule_never_meets_a_penalty(seed):
    """design §29.3: the weekly schedule the oracle markets on, run every day for four
    weeks at a location, keeps every channel within its fatigue and the location within
    its limit: each day's multiplier is 1 plus the bonuses in force, capped."""
    from vendbench.environment.network.policies._oracle import weekly_schedule

    env = make("network", seed=seed, days=30)
    schedule, lim = weekly_schedule(env.eco), env.eco["marketing_limits"]
    assert 0 < sum(map(len, schedule.values())) <= lim["location_campaigns"]
    for day in range(1, 29):
        for channel in schedule.get((day - 1) % lim["window_days"], []):
            env.campaigns.append((day, "AI-HOUSE", channel, ""))
        bonus = sum(ch.bonus for name, ch in env.eco.channels.items()
                    if any(c[2] == name and day - ch.days < c[0] <= day
                           for c in env.campaigns))
        assert env.marketing_multiplier("AI-HOUSE", day) == pytest.approx(
            min(lim["ceiling"], 1 + bonus)), (seed, day)
