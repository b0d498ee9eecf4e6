"""The public Python API of design §2.2, exactly as the README shows it."""

from __future__ import annotations

import pytest

from vendbench.environment import Environment, make
from vendbench.errors import ConfigError


def test_gym_style_api():
    env = make("autovend", seed=1, days=180)
    assert isinstance(env, Environment)
    assert len(env.tools) == 18
    assert env.observe().startswith("Day 1 of 180")
    search = env.call("search_catalog", {"subcategory": "water", "page_size": 1})
    pid = search["rows"][0]["product_id"]
    out = env.call("place_order", {"items": [{"product_id": pid, "quantity": 24}]})
    assert out["ok"] and out["accepted"][0]["order_id"] == "O00001"
    assert env.call("end_day", "{}")["ok"]
    assert (env.done, env.day) == (False, 2)
    summary = env.summary()
    for key in ("status", "day", "cash", "net_assets", "initial_cash", "seed", "world_seed"):
        assert key in summary
    assert summary["status"] == "running"


def test_records_hook_hands_over_plain_rows_once():
    env = make("autovend", seed=1, days=5)
    env.call("end_day", {})
    env.call("end_day", {})
    first = env.drain_records()
    assert [r["day"] for r in first["days"]] == [1, 2]
    assert set(first["days"][0]) >= {"day", "date", "cash", "net_assets", "revenue", "cogs",
                                     "fees", "visit_fees", "fines", "waste_cost", "units_sold"}
    assert env.drain_records() == {"days": [], "sales": []}
    env.call("end_day", {})
    assert [r["day"] for r in env.drain_records()["days"]] == [3]


def test_world_seed_changes_the_world_not_the_tools():
    a, b = make("autovend", world_seed=1), make("autovend", world_seed=2)
    assert a.tools == b.tools
    assert a.world.products != b.world.products


@pytest.mark.parametrize("kwargs,match", [
    ({"days": 0}, "days must be 1"), ({"days": 366}, "days must be 1"),
    ({"seed": -1}, "non-negative"), ({"seed": "1"}, "integer"), ({"days": 1.5}, "integer"),
    ({"colour": "red"}, "colour"),
])
def test_bad_construction_is_a_clear_error(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        make("autovend", **kwargs)


def test_unknown_scenario_names_the_available_ones():
    with pytest.raises(ConfigError, match="Did you mean: autovend"):
        make("autovendd")
