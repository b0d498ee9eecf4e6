"""Shared fixtures: fresh worlds, and the accounting invariants checked every day."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings

# Hypothesis on a fixed profile: the same examples on every run and machine, so that CI is
# deterministic (a failure reproduces). HYPOTHESIS_PROFILE=explore searches afresh, longer.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

from vendbench.environment import make
from vendbench.environment.autovend import AutoVendEnv


@pytest.fixture
def env() -> AutoVendEnv:
    """A 30-day world with an unlimited daily tool budget (so tests control the days)."""
    return make("autovend", seed=1, days=30, daily_tool_calls=10**9)


def next_day(env: AutoVendEnv, n: int = 1) -> None:
    for _ in range(n):
        assert env.call("end_day", {})["ok"]


def stock_machine(env: AutoVendEnv, machine: str = "M01", product: str = "P0001",
                  quantity: int = 30, ordered: int = 60) -> None:
    """Order ``ordered`` units, wait for delivery, restock ``quantity`` onto ``machine``."""
    assert env.call("place_order", {"items": [{"product_id": product, "quantity": ordered}]})["ok"]
    while env.business.warehouse.get(int(product[1:]) - 1) is None:
        next_day(env)
    out = env.call("restock", {"items": [{"machine_id": machine, "product_id": product,
                                           "quantity": quantity}]})
    assert out["ok"], out


class Ledger:
    """Checks design §5's accounting invariants at the end of every simulated day."""

    def __init__(self, env: AutoVendEnv) -> None:
        self.env = env
        biz = env.business
        self.cash = 4_000_000
        self.net_assets = 4_000_000
        self.days_checked = 0
        assert biz.day == 1

    def check(self) -> None:
        biz = self.env.business
        for row in biz.history[self.days_checked:]:
            # cash moves only by sales, purchases, fees and fines (and, in an arena,
            # payments between operators)
            expected_cash = (self.cash + row["revenue"] - row["purchases"] - row["fees"]
                             - row["visit_fees"] - row["fines"] + row["transfers"])
            assert row["cash"] == expected_cash, f"day {row['day']}: cash drifted"
            # net assets move only by what the business earned or lost
            assert row["net_assets"] == self.net_assets + row["net"], \
                f"day {row['day']}: net assets {row['net_assets']} != " \
                f"{self.net_assets} + {row['net']}"
            self.cash, self.net_assets = row["cash"], row["net_assets"]
            self.days_checked += 1
        # the running stock valuation agrees with a recount of every batch
        assert biz.inventory_value() == biz.recount_inventory_value()
        # units are conserved from order to sale, discard or write-off
        census = biz.unit_census()
        assert census["transit"] + census["warehouse"] + census["shelves"] + census["sold"] \
            + census["discarded"] + census["written_off"] == biz.units.ordered
        for m in range(len(biz.shelves)):
            assert biz.on_shelf[m] == biz.stock.count_shelf(m) <= 200
            assert len(biz.shelves[m]) <= 40
            for lst in biz.shelves[m].values():   # each listing: units = its batches, which
                keys = [(b.expiry, b.arrived) for b in lst.batches]   # are distinct, in order
                assert lst.units == sum(b.units for b in lst.batches)
                assert keys == sorted(set(keys)) and all(b.units > 0 for b in lst.batches)
        assert all(b.units > 0 for bs in biz.warehouse.values() for b in bs)
        # the figures the day cycle keeps without a scan agree with a recount
        wh_units, expiring, value = biz.stock.recount(biz.day)
        assert biz.wh_units == wh_units == census["warehouse"]
        wh = {"units": 0, "value": 0, "soon": 0, "expired": 0}
        for k, batches in biz.warehouse.items():
            for b in batches:
                wh["units"] += b.units
                if b.expiry <= biz.day:
                    wh["expired"] += b.units
                else:
                    wh["value"] += b.units * biz.cost[k]
                    wh["soon"] += b.units if b.expiry <= biz.day + 7 else 0
        assert biz.warehouse_summary() == tuple(wh.values())
        by_expiry = biz.stock.expiry_costs()
        assert by_expiry.get(biz.day, 0) == expiring
        assert sum(c for e, c in by_expiry.items() if e > biz.day) == value
        assert biz.stock.value_on(biz.day) == (expiring, value)


def play_checked(env: AutoVendEnv, play_day: Callable[[Callable[..., Any], str], None]) -> Ledger:
    """Play a whole episode, checking the invariants after every day."""
    ledger = Ledger(env)
    while not env.done:
        day = env.day
        play_day(env.call, env.observe())
        if not env.done and env.day == day:
            env.call("end_day", {})
        ledger.check()
    assert ledger.days_checked == len(env.business.history)
    return ledger
