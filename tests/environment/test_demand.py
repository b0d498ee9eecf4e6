"""Hidden demand (design §2): arrivals, gamma shocks, multinomial logit, multipliers."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from vendbench.environment.autovend import _demand as demand
from vendbench.environment.autovend import build_world
from vendbench.environment.autovend._calendar import day_info


def test_gamma_shock_has_mean_one_variance_one_over_r_and_persistence_rho():
    hidden = build_world().hidden
    arrivals = demand.Arrivals(seed=5, hidden=hidden)
    shocks = []
    for day in range(1, 4001):
        arrivals.draw(day, np.ones(len(hidden.volume)))
        shocks.append(arrivals._shock.copy())
    g = np.array(shocks)                                   # (days, machines)
    assert g.mean() == pytest.approx(1.0, abs=0.02)
    assert g.var() == pytest.approx(1 / demand.SHAPE_R, rel=0.06)
    lag1 = np.mean([np.corrcoef(g[:-1, m], g[1:, m])[0, 1] for m in range(g.shape[1])])
    assert lag1 == pytest.approx(demand.PERSISTENCE_RHO, abs=0.03)


def test_arrivals_are_overdispersed_poisson():
    hidden = build_world().hidden
    arrivals = demand.Arrivals(seed=3, hidden=hidden)
    n = np.array([arrivals.draw(d, np.ones(20)) for d in range(1, 2001)])
    mean, var = n[:, 0].mean(), n[:, 0].var()
    assert mean == pytest.approx(hidden.volume[0], rel=0.05)
    assert var > 3 * mean                                  # Poisson would give var ≈ mean


def test_arrivals_must_be_drawn_in_order():
    arrivals = demand.Arrivals(seed=1, hidden=build_world().hidden)
    with pytest.raises(ValueError):
        arrivals.draw(2, np.ones(20))


def test_choice_probabilities_follow_the_attraction_formula():
    hidden = build_world().hidden
    ks = np.array([3, 10, 400])
    units = np.array([2.0, 9.0, 5.0])
    prices = np.array([300.0, 450.0, 500.0])
    refs = np.array([250.0, 500.0, 500.0])
    heat = np.ones(1372)
    heat[10] = 1.5
    fill = 0.64
    p = demand.choice_probabilities(hidden, 4, ks, units, prices, refs, fill, heat)
    eps = hidden.elasticity[4]
    w = hidden.attraction[4, ks] * 0.8 * np.array([0.4, 1, 1]) * (prices / refs) ** -eps \
        * np.array([1, 1.5, 1])
    assert np.allclose(p, w / (hidden.no_purchase[4] + w.sum()))
    assert p.sum() < 1


def sell(draws: np.ndarray, probs: np.ndarray, units: np.ndarray) -> np.ndarray:
    """One machine's sales, the plain way: each draw picks a listing by its cumulative
    choice probability (past them all: no purchase); demand beyond stock is lost. The
    reference ``day_sales`` (all machines at once) must agree with."""
    if len(draws) == 0 or len(probs) == 0:
        return np.zeros(len(probs), dtype=np.int64)
    choice = np.searchsorted(np.cumsum(probs), draws, side="right")
    return np.minimum(np.bincount(choice, minlength=len(probs) + 1)[:-1], units)


def test_sales_never_exceed_stock_and_lost_demand_vanishes():
    draws = np.linspace(0, 0.999, 500)       # 500 customers spread over every option
    sold = sell(draws, np.array([0.5, 0.3]), np.array([3, 1000]))
    assert sold[0] == 3                      # 250 wanted it, 3 were on the shelf
    assert 140 <= sold[1] <= 160


def test_one_pass_over_all_machines_sells_what_each_machine_would_alone():
    """``day_sales`` (the day cycle's) equals ``sell`` under ``choice_probabilities``
    machine by machine, including machines with no stock and machines with no customers."""
    hidden = build_world().hidden
    rng = np.random.default_rng(7)
    heat = rng.uniform(0.7, 1.4, 1372)
    for trial in range(40):
        listings = rng.integers(0, 41, 20)
        listings[rng.integers(0, 20, 3)] = 0                # some machines hold nothing
        attempts = rng.poisson(60, 20)
        attempts[rng.integers(0, 20)] = 0                   # one has no customers
        ms = np.repeat(np.arange(20), listings)
        ks = np.concatenate([rng.choice(1372, n, replace=False) for n in listings])
        units = rng.integers(1, 30, len(ks))
        refs = rng.uniform(200, 800, len(ks))
        prices = refs * rng.uniform(0.5, 2.0, len(ks))
        draws = rng.random(int(attempts.sum()))
        got = demand.day_sales(hidden, ms, ks, units, prices, refs, heat, attempts, draws)
        want, at, first = [], 0, 0
        for m in range(20):
            own = slice(first, first + listings[m])
            fill = min(1.0, units[own].sum() / 200)
            probs = demand.choice_probabilities(hidden, m, ks[own], units[own], prices[own],
                                                refs[own], fill, heat)
            want.append(sell(draws[at:at + attempts[m]], probs, units[own]))
            at, first = at + attempts[m], first + listings[m]
        assert np.array_equal(got, np.concatenate(want)), trial
        assert got.sum() > 0


def test_site_multipliers():
    wx = demand.Weather(20.0, False)
    saturday, monday = day_info(dt.date(2026, 4, 11)), day_info(dt.date(2026, 4, 13))
    assert demand.site_multiplier("office", saturday, wx) < 0.2
    assert demand.site_multiplier("office", monday, wx) == 1.0
    assert demand.site_multiplier("commercial", saturday, wx) > 1.0
    summer = day_info(dt.date(2026, 7, 15))
    assert demand.site_multiplier("campus", summer, wx) <= demand.CAMPUS_BREAK
    rain = demand.Weather(20.0, True)
    assert demand.site_multiplier("commercial", monday, rain) < 0.8


def test_hot_days_lift_cold_drinks():
    heat = build_world().hidden.heat
    hot = demand.product_multiplier(heat, demand.Weather(34.0, False))
    water = build_world().hidden.subcategory == 0
    noodles = build_world().hidden.subcategory == 13
    assert hot[water].min() > 1.5 and hot[noodles].max() < 1.0


def test_weather_is_deterministic_per_seed_and_day():
    info = day_info(dt.date(2026, 7, 1))
    assert demand.weather(3, 92, info) == demand.weather(3, 92, info)
    temps = [demand.weather(3, d, info).temperature for d in range(1, 200)]
    assert np.mean(temps) == pytest.approx(28.9, abs=0.6)
