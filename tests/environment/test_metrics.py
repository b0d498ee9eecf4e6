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
    _, score = metrics._hidden_model_metrics(WORLD, sales_rows(3, top, refs))
    assert score == pytest.approx(1.0)
    worst = list(np.argsort(H.attraction[3])[:20])
    _, low = metrics._hidden_model_metrics(WORLD, sales_rows(
        3, worst, [WORLD.products[k].ref_price / 100 for k in worst]))
    assert low < 0.2


def test_pricing_regret_is_zero_at_the_best_grid_prices_and_positive_elsewhere():
    ks = reference_set(5, 8)
    ref = np.array([WORLD.products[k].ref_price for k in ks]) / 100
    units = np.full(len(ks), 10.0)
    volume = 1.0
    # brute force, one listing at a time, the others at their reference price
    best_prices = ref.copy()
    for i in range(len(ks)):
        gps = []
        for f in metrics.PRICE_GRID:
            trial = ref.copy()
            trial[i] = round(ref[i] * f, 2)
            gps.append(metrics._expected_gp(WORLD, 5, np.array(ks), units, trial, volume)[i])
        best_prices[i] = round(ref[i] * metrics.PRICE_GRID[int(np.argmax(gps))], 2)
    one_at_a_time = metrics._best_single_price_gp(WORLD, 5, np.array(ks), units, ref, volume)
    at_ref = metrics._expected_gp(WORLD, 5, np.array(ks), units, ref, volume)
    assert np.all(one_at_a_time >= at_ref - 1e-12)
    regret_ref, _ = metrics._hidden_model_metrics(WORLD, sales_rows(5, ks, list(ref)))
    regret_high, _ = metrics._hidden_model_metrics(WORLD, sales_rows(5, ks, list(ref * 2)))
    assert 0 < regret_ref < regret_high
    # a single listing at its best grid price has no regret
    solo = [ks[0]]
    p = [best_prices[0]]
    gp = [metrics._expected_gp(WORLD, 5, np.array(solo), np.array([10.0]),
                               np.array([round(ref[0] * f, 2)]), 1.0)[0]
          for f in metrics.PRICE_GRID]
    p = [round(ref[0] * metrics.PRICE_GRID[int(np.argmax(gp))], 2)]
    regret_solo, _ = metrics._hidden_model_metrics(WORLD, sales_rows(5, solo, p))
    assert regret_solo == pytest.approx(0.0, abs=1e-9)


def test_trial_metrics_counts_rejected_items_and_tool_calls():
    days = [{"cogs": 100.0, "waste_cost": 5.0, "revenue": 150.0, "net_assets": 1000.0,
             "cash": 800.0}] * 2
    calls = [{"result_json": '{"ok": false, "accepted": [{}], "rejected": [{}, {}, {}]}'},
             {"result_json": '{"ok": true, "accepted": [{}, {}, {}, {}]}'},
             {"result_json": '{"ok": true, "machines": []}'}]
    out = trial_metrics("autovend", days, [], calls)
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
    out = trial_metrics("autovend", days, sales, [])
    machine_days = 20 * 2
    assert out["empty_shelf_pct"] == pytest.approx(100 * (machine_days - 2) / machine_days)
    assert out["shelf_utilisation"] == pytest.approx(200 / (machine_days * 200))
