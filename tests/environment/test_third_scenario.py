"""A third scenario from its own package plus one registration line (SPEC §14): it runs,
ranks, trends and serves, with its own record tables, metrics, policies and currency."""

from __future__ import annotations

import asyncio
import json

import pytest

from vendbench.cli import main
from vendbench.results import Store

from .toy_scenario import COST, START, cups


def expected(price: int, seed: int, days: int = 5) -> float:
    """What a fixed price earns, from the toy's own demand rule."""
    return (START + sum(cups(price, seed, d) * (price - COST) for d in range(1, days + 1))) / 100


def test_a_toy_scenario_runs_ranks_trends_and_serves(toy, tmp_path, capsys):
    db = str(tmp_path / "toy.duckdb")
    for _ in range(2):                                   # two runs, for the trend
        assert main(["run", "--scenario", "toy", "--models", "baseline/order-up-to",
                     "baseline/oracle", "--seeds", "1", "2", "--db", db, "--json"]) == 0
    capsys.readouterr()

    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    rows = {r["model"]: r for r in board["rows"]}
    assert rows["baseline/oracle"]["mean_net_assets"] == \
        pytest.approx((expected(275, 1) + expected(275, 2)) / 2)
    assert rows["baseline/order-up-to"]["mean_net_assets"] == \
        pytest.approx((expected(100, 1) + expected(100, 2)) / 2)
    # the toy's own metric, from its own record tables
    assert rows["baseline/oracle"]["cups_per_day"] == pytest.approx(
        sum(cups(275, s, d) for s in (1, 2) for d in range(1, 6)) / 10)
    assert board["cohort"]["scenario"] == "toy"
    assert main(["leaderboard", "--db", db, "--wide"]) == 0
    table = capsys.readouterr().out
    assert "USD/$" in table and "cups/day" in table

    assert main(["trend", "--db", db, "--format", "json"]) == 0
    trend = json.loads(capsys.readouterr().out)
    assert len(trend["runs"]) == 2

    with Store(db, read_only=True) as store:
        prices = store.con.execute("SELECT count(*), min(price), max(price) FROM "
                                   "toy_prices").fetchone()
        empty = store.con.execute("SELECT count(*) FROM days WHERE cups IS NULL").fetchone()
    assert prices == (2 * 2 * 2 * 5, 1.0, 2.75) and empty == (0,)


def test_a_toy_scenario_is_served_over_mcp_as_a_trial(toy, tmp_path, capsys):
    from vendbench.serve._server import ServeConfig, Session, WorldServer

    db = str(tmp_path / "served.duckdb")
    with Store(db) as store:
        world = WorldServer(ServeConfig(scenario="toy", days=5, db=db), store)
        session = Session(world, "tester")

        async def play() -> list[dict]:
            out = [await session.call("set_price", {"price": 3.0})]
            for _ in range(5):
                out.append(await session.call("end_day", {}))
            return out

        results = asyncio.run(play())
        world.close()
    assert results[0] == {"ok": True, "price": 3.0} and all(r["ok"] for r in results)
    assert main(["leaderboard", "--db", db, "--run", "all", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["model"] == "mcp/tester" and row["mean_net_assets"] == expected(300, 1)
