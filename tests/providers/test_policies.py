"""The reference policies: agent-visible tools only, the baseline command, calibration."""

from __future__ import annotations

import statistics

import pytest

from vendbench.environment import make
from vendbench.environment.autovend._tools import TOOLS
from vendbench.errors import ConfigError
from vendbench.providers.policies import OrderUpToPolicy, evaluate_policy, make_policy, run_policy


def test_baseline_acts_only_through_the_agent_tools():
    env = make("autovend", seed=1, days=20)
    used: set[str] = set()
    rejected = []

    def call(name, args=None):
        used.add(name)
        out = env.call(name, args)
        rejected.extend(out.get("rejected", []))
        assert out["ok"] or out.get("rejected"), (name, out)
        return out

    policy = OrderUpToPolicy()                 # constructed with nothing: no world, no env
    while not env.done:
        policy.play_day(call, env.observe())
    assert used <= set(TOOLS) and {"place_order", "restock", "end_day"} <= used
    assert rejected == []                       # it never asks for the impossible


def test_baseline_books_count_the_warehouse_unit_for_unit_every_day():
    env = make("autovend", seed=2, days=60)
    policy = OrderUpToPolicy()
    ids = [p.id for p in env.world.products]
    checked = 0

    def call(name, args=None):
        nonlocal checked
        if name == "end_day":      # after the day's restocks, removals and discards
            books = policy.books
            real = {ids[k]: sum(b.units for b in bs) for k, bs in env.business.warehouse.items()}
            assert {p: n for p, n in books.stock.items() if n} == \
                {p: n for p, n in real.items() if n}
            assert all(books.stock.get(p, 0) == sum(u for _, u in bs)
                       for p, bs in books.warehouse.items())
            checked += 1
        return env.call(name, args)

    while not env.done:
        policy.play_day(call, env.observe())
    assert checked == 60


def test_unknown_policy_is_a_clear_error():
    with pytest.raises(ConfigError, match="order-up-to"):
        make_policy("baseline/clever", make("autovend"))


def test_evaluate_policy_record_has_the_baseline_json_contract():
    rec = evaluate_policy("order-up-to", seed=1, days=10)
    for key in ("scenario", "seed", "days", "status", "initial_cash", "final_cash",
                "final_net_assets", "wall_seconds"):
        assert key in rec
    assert rec["initial_cash"] == 40_000 and rec["status"] == "completed"


@pytest.fixture(scope="module")
def calibration():
    return {(p, s): evaluate_policy(p, seed=s, days=180) for p in ("order-up-to", "oracle")
            for s in (1, 2, 3)}


def test_baseline_calibration_150k_to_280k_with_cv_under_5_percent(calibration):
    values = [calibration[("order-up-to", s)]["final_net_assets"] for s in (1, 2, 3)]
    assert all(150_000 <= v <= 280_000 for v in values), values
    assert statistics.stdev(values) / statistics.mean(values) < 0.05


def test_oracle_beats_the_baseline_on_every_seed(calibration):
    for s in (1, 2, 3):
        assert calibration[("oracle", s)]["final_net_assets"] > \
            calibration[("order-up-to", s)]["final_net_assets"]


def test_a_typical_well_stocked_machine_sells_20_to_60_units_a_day():
    env = make("autovend", seed=1, days=90)
    run_policy(env, make_policy("order-up-to", env))
    biz = env.business
    per_machine = []
    for m in range(20):      # machine-days of the last 30 days with the shelves over half full
        days = [rows[rows[:, 1] == m] for rows in biz.sales[-30:]]
        full = [d[:, 5].sum() for d in days if d[:, 4].sum() >= 100]
        if full:
            per_machine.append(statistics.mean(full))
    assert len(per_machine) >= 15
    assert 20 <= statistics.median(per_machine) <= 60, per_machine
