"""Accounting invariants every simulated day of full episodes (design §5)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from vendbench.environment import make
from vendbench.environment import make_policy

from ..conftest import play_checked


@pytest.mark.parametrize("policy", ["order-up-to", "oracle"])
def test_invariants_hold_every_day_of_a_180_day_episode(policy):
    env = make("autovend", seed=2, days=180)
    ledger = play_checked(env, make_policy(policy, env).play_day)
    assert ledger.days_checked == 180 and env.summary()["status"] == "completed"
    assert sum(r["units_sold"] for r in env.business.history) > 50_000


def test_invariants_hold_for_a_chaotic_agent():
    """Random but valid-looking actions: orders, restocks, removals, discards, delists."""
    env = make("autovend", seed=4, days=60, daily_tool_calls=25)
    rng = random.Random(4)
    products = [f"P{i:04d}" for i in rng.sample(range(1, 1373), 60)]
    machines = [f"M{i:02d}" for i in range(1, 21)]

    def chaos(call, _observation):
        for _ in range(rng.randint(3, 12)):
            tool = rng.choice(["place_order", "restock", "remove_stock", "discard", "delist",
                               "set_price"])
            item = {"product_id": rng.choice(products), "machine_id": rng.choice(machines),
                    "quantity": rng.randint(1, 60), "price": rng.uniform(0.5, 20)}
            keys = {"place_order": ("product_id", "quantity"),
                    "discard": ("product_id", "quantity"),
                    "delist": ("machine_id", "product_id"),
                    "set_price": ("machine_id", "product_id", "price")}.get(
                        tool, ("machine_id", "product_id", "quantity"))
            call(tool, {"items": [{k: item[k] for k in keys} for _ in range(rng.randint(1, 4))]})
        if rng.random() < 0.9:
            call("end_day", {})

    ledger = play_checked(env, chaos)
    biz = env.business
    assert ledger.days_checked == len(biz.history) >= 30, env.summary()
    assert biz.units.sold > 0 and biz.units.discarded > 0
    assert any(r["waste_cost"] for r in biz.history)


def test_common_random_numbers_same_customers_under_two_policies():
    runs = {}
    for policy in ("order-up-to", "oracle"):
        env = make("autovend", seed=3, days=40)
        play_checked(env, make_policy(policy, env).play_day)
        runs[policy] = env.business
    a, b = runs["order-up-to"], runs["oracle"]
    assert np.array_equal(np.array(a.attempts_log), np.array(b.attempts_log))
    assert [r["units_sold"] for r in a.history] != [r["units_sold"] for r in b.history]
    c = make("autovend", seed=4, days=40)
    play_checked(c, make_policy("oracle", c).play_day)
    assert not np.array_equal(np.array(b.attempts_log), np.array(c.business.attempts_log))
