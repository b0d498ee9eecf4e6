"""Why a trial went as it did (design §32.1): each failure mode planted by a scripted
operator is found on its day and nowhere else; the diagnostics computed by hand on small
cases equal the code's; the network computes those that apply and says which do not."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict

import numpy as np
import pytest

from vendbench.environment import (Kept, RecordingSession, diagnose, make, make_policy,
                                   not_applicable, play_day)
from vendbench.environment._diagnostics import growth, windows
from vendbench.environment.autovend._diagnostics import FEE, _cycles, gap_of


def play(scenario: str, days: int, script: dict[int, list[tuple[str, dict]]], **kw):
    """A scripted operator: on each day the calls ``script`` lists, then the day tool.
    Returns the stored shapes the diagnostics read: record rows and tool-call rows."""
    env = make(scenario, seed=1, days=days, **kw)
    kept = Kept()
    session = RecordingSession(env, kept)
    day_tool = "end_day" if scenario == "autovend" else "wait_for_next_day"
    while not env.done:
        day = env.day
        for name, args in script.get(day, []):
            session.call(name, args)
        session.call(day_tool, {})
    return (*_stored(kept), env)


def found(diagnosis, kind: str) -> list[int]:
    return [i.day for i in diagnosis.incidents if i.kind == kind]


def restock(machine: str, product: str, units: int) -> tuple[str, dict]:
    return "restock", {"items": [{"machine_id": machine, "product_id": product,
                                  "quantity": units}]}


def order(product: str, units: int) -> tuple[str, dict]:
    return "place_order", {"items": [{"product_id": product, "quantity": units}]}


# P0133: 2.53 CNY, keeps 90 days, M01's customers like it best; P0020 is never bought
SCRIPT = {
    1: [order("P0133", 300)],
    2: [restock("M01", "P0020", 5)],                       # nothing to restock: rejected
    3: [("list_machines", {}), ("list_machines", {})],     # the same call twice
    4: [restock("M01", "P0020", 5)],                       # rejected again: not kept
    5: [("launch_rocket", {}), restock("M99", "P0133", 1)],  # names that do not exist
    8: [restock("M01", "P0133", 2)],                       # a visit
    9: [restock("M01", "P0133", 2)],                       # a visit after ~5 CNY of profit
    31: [order("P0133", 50)],                              # ~300 unsold units in stock
}


@pytest.fixture(scope="module")
def scripted():
    records, calls, env = play("autovend", 35, SCRIPT)
    return records, calls, diagnose("autovend", records, calls, seed=1, world_seed=2026,
                                    days=35, initial=40_000.0)


def test_each_failure_mode_planted_is_found_on_its_day_and_nowhere_else(scripted):
    _, calls, d = scripted
    assert found(d, "rejected_call") == [2, 4, 5, 5]
    assert found(d, "correction_not_kept") == [4]
    assert found(d, "repeated_call") == [3]
    assert found(d, "unknown_name") == [5, 5]
    assert found(d, "visit_above_profit") == [9]
    assert found(d, "bought_while_covered") == [31]
    assert found(d, "idle_day") == [day for day in range(1, 36) if day not in (1, 8, 9, 31)]
    # each instance names the call that made it (its number in the trial)
    (covered,) = [i for i in d.incidents if i.kind == "bought_while_covered"]
    call = next(c for c in calls if c["seq"] == covered.call)
    assert (call["day"], call["name"]) == (31, "place_order")
    assert "ordered 50 of P0133 with 296 unexpired units" in covered.detail   # 4 shelved
    (visit,) = [i for i in d.incidents if i.kind == "visit_above_profit"]
    assert "M01" in visit.detail and "since its visit on day 8" in visit.detail


def test_the_diagnostics_of_the_scripted_trial_equal_a_hand_count(scripted):
    records, _, d = scripted
    gp = defaultdict(float)
    for r in records["sales"]:
        gp[r["day"], r["machine_id"]] += r["revenue"] - r["cogs"]
    # one complete visit cycle: M01's visit on day 8 to its visit on day 9
    assert d.values["visit_cycle_contribution"] == pytest.approx(gp[8, "M01"] - FEE)
    sold = [r["day"] for r in records["days"] if r["units_sold"] > 0]
    assert d.values["last_sale_day"] == max(sold)
    # M01 listed P0133 with the warehouse full of it: each day its shelf stood empty
    exposed = {r["day"] for r in records["sales"] if r["units_on_shelf"] == 0}
    assert d.values["empty_site_exposure"] == pytest.approx(len(exposed) / (35 * 20))
    assert exposed
    # nothing stood on a shelf on day 30, the one checkpoint: no gap to measure
    assert not any(r["day"] == 30 and r["units_on_shelf"] for r in records["sales"])
    assert d.values["reassignment_gap"] is None


def test_the_reassignment_gap_is_the_best_permutation_against_the_own():
    rng = np.random.default_rng(7)
    for n in (2, 3, 4, 5):
        value = rng.uniform(0, 10, (n, n))
        best = max(sum(value[i, p[i]] for i in range(n))
                   for p in itertools.permutations(range(n)))
        assert gap_of(value) == pytest.approx((best - np.trace(value)) / best)
    assert gap_of(np.diag([3.0, 2.0, 1.0])) == 0.0          # already the best
    assert gap_of(np.zeros((3, 3))) is None                 # nothing earns anything


def test_the_best_placement_found_has_no_gap_of_its_own():
    """On a reference trial's checkpoint (order-up-to, 30 days): the machines'
    assortments moved to the placement the gap found best have a gap of 0 and earn what
    the gap said the best would: the value matrix's rows are assortments and its columns
    the machines they stand at."""
    from scipy.optimize import linear_sum_assignment

    from vendbench.environment.autovend._diagnostics import checkpoint_values
    from vendbench.environment.autovend._world import build_world

    (records, _), _ = _policy_records("order-up-to", 30)
    world = build_world()
    ((day, value),) = checkpoint_values(world, records["sales"], 30)
    gap = gap_of(value)
    assert day == 30 and 0 < gap < 1
    rows, cols = linear_sum_assignment(value, maximize=True)
    moved = {world.machines[i].id: world.machines[j].id for i, j in zip(rows, cols)}
    placed = [{**r, "machine_id": moved[r["machine_id"]]} for r in records["sales"]]
    ((_, best),) = checkpoint_values(world, placed, 30)
    assert gap_of(best) == pytest.approx(0.0, abs=1e-12)
    assert np.trace(best) == pytest.approx(value[rows, cols].sum())


def _policy_records(policy: str, days: int):
    """A reference policy's trial, in the shapes the diagnostics read."""
    env = make("autovend", seed=1, days=days)
    kept = Kept()
    session = RecordingSession(env, kept)
    player = make_policy(policy, env)
    while not env.done:
        play_day(session, player)
    return _stored(kept), env


def _stored(kept: Kept):
    records: dict[str, list[dict]] = defaultdict(list)
    for batch in kept.rows:
        for table, rows in batch.items():
            records[table] += rows
    calls = [{"seq": c.seq, "exchange_seq": c.exchange, "day": c.day, "name": c.name,
              "args_json": json.dumps(c.arguments), "result_json": json.dumps(c.result)}
             for c in kept.calls]
    return dict(records), calls


def test_growth_windows_scale_with_the_horizon_and_read_as_the_paper_does():
    assert windows(180) == ((16, 45), (136, 165))
    assert windows(30) == ((3, 8), (23, 28))
    values = [100.0 + 10 * d for d in range(1, 181)]        # 10 a day throughout
    g = growth(values, 100.0, 180)
    assert (g["growth_early"], g["growth_late"], g["growth_ratio"]) == (10.0, 10.0, 1.0)
    assert g["growth_reading"] == "sustained growth"
    flat = [min(v, 100.0 + 10 * 60) for v in values]       # grows until day 60, then not
    assert growth(flat, 100.0, 180)["growth_reading"] == "early gains then stagnation"
    assert growth([100.0] * 180, 100.0, 180)["growth_reading"] == "no early growth"
    assert growth(values[:100], 100.0, 180)["growth_late"] is None   # never got there


def test_visit_cycles_count_complete_cycles_only():
    gp = {(1, "M01"): 50.0, (2, "M01"): 20.0, (3, "M01"): 10.0, (4, "M01"): 99.0,
          (5, "M01"): 7.0, (2, "M02"): 5.0}
    visits = {1: {0}, 4: {0, 1}, 6: {0}, 2: {1}}
    # M01: days 1->4 (50+20+10-35 over 3 days), 4->6 (99+7-35 over 2); M02: 2->4 (5-35
    # over 2); the cycles after each last visit are incomplete and left out
    expected = ((80 - FEE) + (106 - FEE) + (5 - FEE)) / (3 + 2 + 2)
    assert _cycles(visits, gp, 6, ["M01", "M02"]) == pytest.approx(expected)
    assert _cycles({3: {0}}, gp, 6, ["M01"]) is None


def test_the_network_computes_what_applies_and_says_what_does_not():
    script = {2: [("send_email", {"to": "boss@nowhere.example", "subject": "hi",
                                  "body": "hello"})],
              3: [("search_web", {"query": "vending suppliers"})]}
    records, calls, _ = play("network", 5, script)
    d = diagnose("network", records, calls, seed=1, world_seed=2026, days=5,
                 initial=500.0)
    assert [i.day for i in d.incidents if i.kind == "email_not_a_supplier"] == [2]
    assert set(d.not_applicable) == set(not_applicable("network")) >= {
        "reassignment_gap", "visit_cycle_contribution"}
    assert "reassignment_gap" not in d.values and d.values["empty_site_exposure"] == 0.0
    assert [i.day for i in d.incidents if i.kind == "idle_day"] == [1, 2, 3, 4, 5]


def test_a_repeat_is_the_same_answer_asked_for_again():
    """A read again after an action, or an action that took twice, is no repeat; a read
    again with nothing between, or a rejected action again, is."""
    import re

    from vendbench.environment import DAY_OVER
    from vendbench.environment._diagnostics import call_incidents

    ok, no = {"ok": True}, {"ok": False, "error": "nothing to restock"}
    rows = [("look", {}, ok), ("look", {}, ok),            # 2: repeat
            ("buy", {"n": 1}, ok), ("look", {}, ok),       # 4: after an action, fresh
            ("buy", {"n": 1}, ok),                         # 5: an action that took
            ("buy", {"n": 2}, no), ("buy", {"n": 2}, no),  # 7: a rejected action again
            ("look", {}, DAY_OVER)]                        # refused by the harness
    calls = [{"seq": i, "exchange_seq": None, "day": 1, "name": n,
              "args_json": json.dumps(a), "result_json": json.dumps(r)}
             for i, (n, a, r) in enumerate(rows, 1)]
    found = call_incidents(calls, actions=frozenset({"buy"}), day_tool="end",
                           unknown=re.compile("unknown"), days=1, refusal=DAY_OVER)
    assert [i.call for i in found if i.kind == "repeated_call"] == [2, 7]
    assert [i.call for i in found if i.kind == "rejected_call"] == [6, 7]
    assert not [i for i in found if i.kind == "idle_day"]          # day 1 acted


def test_the_network_finds_a_buy_its_depot_already_covered_on_its_day():
    """Sixty cans of cola sit unsold in the depot (never put on a shelf); buying more
    on day 31 is covered; the first buy, and one before day 31, are not."""
    buy = ("order_goods", {"supplier_id": "S-BEVDIRECT",
                           "items": [{"product_id": "cola", "quantity": 30}]})
    script = {1: [("search_web", {"query": "drinks supplier"}), buy], 2: [buy], 31: [buy]}
    records, calls, _ = play("network", 33, script)
    d = diagnose("network", records, calls, seed=1, world_seed=2026, days=33,
                 initial=500.0)
    (covered,) = [i for i in d.incidents if i.kind == "bought_while_covered"]
    assert covered.day == 31 and "ordered 30 of cola with 60 units" in covered.detail
    assert next(c for c in calls if c["seq"] == covered.call)["name"] == "order_goods"
