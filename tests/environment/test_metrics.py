"""The AutoVend metrics that need the hidden demand model: known answers."""

from __future__ import annotations

import numpy as np
import pytest

from vendbench.environment import trial_metrics
from vendbench.environment.autovend import _metrics as metrics
from vendbench.environment.autovend import build_world

WORLD = build_world()
H = WORLD.hidden


def sales_rows(machine: int, products: list[int], prices: list[float], units: int = 10,
               day: int = 1) -> list[dict]:
    return [{"day": day, "machine_id": WORLD.machines[machine].id,
             "product_id": WORLD.products[k].id, "price": p, "units_on_shelf": units,
             "units_sold": 0, "revenue": 0.0, "cogs": 0.0} for k, p in zip(products, prices)]


def reference_set(machine: int, size: int) -> list[int]:
    cost = np.array([p.unit_cost for p in WORLD.products]) / 100
    ref = np.array([p.ref_price for p in WORLD.products]) / 100
    return list(np.argsort(-(H.attraction[machine] * (ref - cost)))[:size])


def test_assortment_score_is_one_for_the_reference_and_lower_otherwise():
    top = reference_set(3, 20)
    refs = [WORLD.products[k].ref_price / 100 for k in top]
    *_, score = metrics._hidden_model_metrics(WORLD, sales_rows(3, top, refs))
    assert score == pytest.approx(1.0)
    worst = list(np.argsort(H.attraction[3])[:20])
    *_, low = metrics._hidden_model_metrics(WORLD, sales_rows(
        3, worst, [WORLD.products[k].ref_price / 100 for k in worst]))
    assert low < 0.2


def test_pricing_regret_is_zero_at_the_best_grid_prices_and_positive_elsewhere():
    ks = reference_set(5, 8)
    ref = np.array([WORLD.products[k].ref_price for k in ks]) / 100
    units = np.full(len(ks), 10.0)
    volume = 1.0
    for volume, units in ((1.0, np.full(len(ks), 10.0)), (40.0, np.full(len(ks), 3.0))):
        # brute force, one listing at a time, the others at their reference price; the
        # second case has more buyers than units, so the shelf caps the sales
        brute = []
        for i in range(len(ks)):
            gps = []
            for f in metrics.PRICE_GRID:
                trial = ref.copy()
                trial[i] = round(ref[i] * f, 2)
                gps.append(metrics._expected_gp(WORLD, 5, np.array(ks), units, trial,
                                                volume)[i])
            brute.append(max(gps))
        one_at_a_time = metrics._best_single_price_gp(WORLD, 5, np.array(ks), units, ref,
                                                      volume)
        assert one_at_a_time == pytest.approx(brute)
        at_ref = metrics._expected_gp(WORLD, 5, np.array(ks), units, ref, volume)
        assert np.all(one_at_a_time >= at_ref - 1e-12)
    regret_ref, share_ref, _ = metrics._hidden_model_metrics(WORLD, sales_rows(5, ks, list(ref)))
    regret_high, share_high, _ = metrics._hidden_model_metrics(WORLD,
                                                              sales_rows(5, ks, list(ref * 2)))
    assert 0 < regret_ref < regret_high and 0 < share_ref < share_high < 1
    # a single listing at its best grid price has no regret (with stock to spare, the
    # best price does not depend on the day's volume)
    solo = [ks[0]]
    gp = [metrics._expected_gp(WORLD, 5, np.array(solo), np.array([10_000.0]),
                               np.array([round(ref[0] * f, 2)]), 1.0)[0]
          for f in metrics.PRICE_GRID]
    p = [round(ref[0] * metrics.PRICE_GRID[int(np.argmax(gp))], 2)]
    regret_solo, share_solo, _ = metrics._hidden_model_metrics(
        WORLD, sales_rows(5, solo, p, units=10_000))
    assert regret_solo == pytest.approx(0.0, abs=1e-9) and share_solo == pytest.approx(0.0)


def test_regret_as_a_share_does_not_grow_with_volume():
    """The same listings at the same prices on a machine-day with twice the buyers: the
    CNY regret doubles (while stock is not binding), the share stays."""
    ks = reference_set(5, 8)
    ref = np.array([WORLD.products[k].ref_price for k in ks]) / 100
    units = np.full(len(ks), 1000.0)                   # plenty: no stock cap binds
    prices = ref * 1.6
    gp = {}
    for volume in (1.0, 2.0):
        actual = metrics._expected_gp(WORLD, 5, np.array(ks), units, prices, volume)
        best = np.maximum(actual, metrics._best_single_price_gp(WORLD, 5, np.array(ks), units,
                                                                prices, volume))
        gp[volume] = ((best - actual).sum(), (best - actual).sum() / best.sum())
    assert gp[2.0][0] == pytest.approx(2 * gp[1.0][0])
    assert gp[2.0][1] == pytest.approx(gp[1.0][1]) and 0 < gp[1.0][1] < 1


def test_expected_sales_never_exceed_the_shelf():
    ks = np.array(reference_set(5, 3))
    ref = np.array([WORLD.products[k].ref_price for k in ks]) / 100
    cost = np.array([WORLD.products[k].unit_cost for k in ks]) / 100
    gp = metrics._expected_gp(WORLD, 5, ks, np.array([1.0, 1.0, 1.0]), ref, 10_000.0)
    assert gp == pytest.approx(ref - cost)             # one unit each, whatever the crowd


def test_trial_metrics_counts_rejected_items_and_tool_calls():
    days = [{"cogs": 100.0, "waste_cost": 5.0, "revenue": 150.0, "net_assets": 1000.0,
             "cash": 800.0}] * 2
    calls = [{"day": 1, "result_json": '{"ok": false, "accepted": [{}], "rejected": [{}, {}, '
                                       '{}]}'},
             {"day": 2, "result_json": '{"ok": true, "accepted": [{}, {}, {}, {}]}'},
             {"day": 2, "result_json": '{"ok": true, "machines": []}'}]
    out = trial_metrics("autovend", {"days": days, "sales": []}, calls)
    assert out["rejected_item_rate"] == pytest.approx(3 / 8)
    assert out["tool_calls_per_day"] == 1.5
    assert out["waste_rate"] == pytest.approx(10 / 200)
    assert out["pricing_regret"] is None and out["assortment_score"] is None


def test_empty_shelves_and_utilisation_from_sales_rows():
    days = [{"cogs": 0.0, "waste_cost": 0.0, "revenue": 0.0, "net_assets": 1.0,
             "cash": 1.0}] * 2
    m1, m2 = WORLD.machines[0].id, WORLD.machines[1].id
    sales = [  # day 1: M01 holds 100 + 60 units, M02 an empty listing; day 2: M01 40 units
        {"day": 1, "machine_id": m1, "product_id": "P0001", "price": 2.0,
         "units_on_shelf": 100, "units_sold": 0, "revenue": 0.0, "cogs": 0.0},
        {"day": 1, "machine_id": m1, "product_id": "P0002", "price": 3.0,
         "units_on_shelf": 60, "units_sold": 0, "revenue": 0.0, "cogs": 0.0},
        {"day": 1, "machine_id": m2, "product_id": "P0002", "price": 3.0,
         "units_on_shelf": 0, "units_sold": 0, "revenue": 0.0, "cogs": 0.0},
        {"day": 2, "machine_id": m1, "product_id": "P0001", "price": 2.0,
         "units_on_shelf": 40, "units_sold": 0, "revenue": 0.0, "cogs": 0.0},
    ]
    out = trial_metrics("autovend", {"days": days, "sales": sales}, [])
    machine_days = 20 * 2
    assert out["empty_machine_rate"] == pytest.approx((machine_days - 2) / machine_days)
    assert out["stockout_rate"] == pytest.approx(1 / 4)     # one listed product-day of four
    assert out["shelf_utilisation"] == pytest.approx(200 / (machine_days * 200))


def test_calls_per_day_count_the_day_a_trial_stopped_in():
    """A trial that made 60 calls and stopped during day 2 played two days: 30 a day, not
    60 over its one finished day (the cap is 40)."""
    days = [{"cogs": 0.0, "waste_cost": 0.0, "revenue": 0.0, "net_assets": 1.0,
             "cash": 1.0}]
    calls = [{"day": 1 + (i >= 40), "result_json": '{"ok": true}'} for i in range(60)]
    records = {"days": days, "sales": []}
    assert trial_metrics("autovend", records, calls)["tool_calls_per_day"] == 30.0
    assert trial_metrics("autovend", records, calls[:40])["tool_calls_per_day"] == 40.0


def test_a_private_world_needs_its_salt_for_the_hidden_model_metrics():
    salted = build_world(2026, "s3cret-salt")
    rows = [{"day": 1, "machine_id": salted.machines[0].id, "product_id": p.id,
             "price": p.ref_price / 100, "units_on_shelf": 10, "units_sold": 0,
             "revenue": 0.0, "cogs": 0.0} for p in salted.products[:10]]
    days = [{"cogs": 0.0, "waste_cost": 0.0, "revenue": 0.0, "net_assets": 1.0, "cash": 1.0}]
    blind = trial_metrics("autovend", {"days": days, "sales": rows}, [], 2026, private=True)
    assert blind["pricing_regret"] is None and blind["assortment_score"] is None
    assert blind["stockout_rate"] == 0.0                  # the rest needs no hidden model
    seen = trial_metrics("autovend", {"days": days, "sales": rows}, [], 2026,
                         world_salt="s3cret-salt",
                         private=True)
    public = trial_metrics("autovend", {"days": days, "sales": rows}, [], 2026)
    assert seen["assortment_score"] is not None
    assert seen["assortment_score"] != public["assortment_score"]   # its own world
