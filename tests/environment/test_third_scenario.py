"""A third scenario from its own package plus one registration line (design §14, §21): it
runs, ranks, trends, compares, is viewed and serves, with its own record tables, metrics,
policies (by role, not by name) and currency; installed, it is found through its entry
point."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vendbench.cli import main
from vendbench.results import Store

from .toy_scenario import COST, START, cups


def expected(price: int, seed: int, days: int = 5) -> float:
    """What a fixed price earns, from the toy's own demand rule."""
    return (START + sum(cups(price, seed, d) * (price - COST) for d in range(1, days + 1))) / 100


def share(price: int, seed: int) -> float:
    """A fixed price's share of the oracle's gain (design §34): doing nothing keeps the
    stand's opening $1.00, the ceiling policy sells at $2.75."""
    return (expected(price, seed) - expected(100, seed)) / \
        (expected(275, seed) - expected(100, seed))


def test_a_toy_scenario_runs_ranks_trends_and_serves(toy, tmp_path, capsys):
    db = str(tmp_path / "toy.duckdb")
    for _ in range(2):                                   # two runs, for the trend
        assert main(["run", "--scenario", "toy", "--models", "baseline/fixed-price",
                     "baseline/best-price", "--seeds", "1", "2", "--db", db, "--json"]) == 0
    capsys.readouterr()

    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    rows = {r["model"]: r for r in board["rows"]}
    assert rows["baseline/best-price"]["mean_net_assets"] == \
        pytest.approx((expected(275, 1) + expected(275, 2)) / 2)
    assert rows["baseline/fixed-price"]["mean_net_assets"] == \
        pytest.approx((expected(150, 1) + expected(150, 2)) / 2)
    # the toy's own metric, from its own record tables
    # its roles: "vs base" pairs with its reference policy, shares divide by its ceiling
    best, fixed = rows["baseline/best-price"], rows["baseline/fixed-price"]
    assert best["vs_baseline_points"] == pytest.approx(
        sum(1 - share(150, s) for s in (1, 2)) / 2)
    assert best["beats_baseline"] == 2 and fixed["vs_baseline_points"] is None
    assert best["oracle_share"] == 1.0 and fixed["oracle_share"] == pytest.approx(
        sum(share(150, s) for s in (1, 2)) / 2)
    assert 0 < fixed["oracle_share"] < 1
    assert rows["baseline/best-price"]["cups_per_day"] == pytest.approx(
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
    assert prices == (2 * 2 * 2 * 5, 1.5, 2.75) and empty == (0,)


def test_a_toy_scenario_is_compared_and_viewed(toy, tmp_path, capsys):
    """``compare`` pairs its policies by world and seed and divides by its ceiling role;
    ``view`` draws its trials, its own tools and results on a day's page."""
    db = str(tmp_path / "toy.duckdb")
    assert main(["compare", "--scenario", "toy", "baseline/fixed-price",
                 "baseline/best-price", "--max-pairs", "40", "--batch", "10", "--db", db,
                 "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert (verdict["verdict"], verdict["best"]) == ("winner", "baseline/best-price")
    first = verdict["steps"][0]["intervals"][0]           # B - A, in oracle shares
    seeds = range(1, first["n"] + 1)
    assert first["mean"] == pytest.approx(
        sum(1 - share(150, s) for s in seeds) / first["n"])

    site = tmp_path / "site"
    assert main(["view", "--db", db, "--static", str(site)]) == 0
    capsys.readouterr()
    trial = next(p for p in (site / "trial").iterdir() if "best-price-s1-" in p.name)
    day = (trial / "day-1.html").read_text()
    assert "set_price" in day and "\"cups\": " in day     # the result, a line per key


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


def installed_toy(folder: Path) -> tuple[dict[str, str], Path]:
    """The environment of a fresh process in which the toy is an installed scenario
    (a distribution in ``folder`` declaring its entry point), and that declaration."""
    dist = folder / "lemonade_stand-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lemonade-stand\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[vendbench.scenarios]\ntoy = tests.environment.toy_scenario.scenario:SCENARIO\n")
    root = Path(__file__).resolve().parents[2]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(root)])}, dist


def test_an_installed_scenario_is_found_through_its_entry_point(tmp_path):
    """A package plus one line of its distribution's metadata: a fresh process that never
    registered the toy finds it by name, runs it and ranks it (design §21)."""
    env, dist = installed_toy(tmp_path)
    db = str(tmp_path / "toy.duckdb")
    done = subprocess.run(
        [sys.executable, "-m", "vendbench", "run", "--scenario", "toy", "--models",
         "baseline/fixed-price", "baseline/best-price", "--db", db, "--json"],
        capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    trials = {t["model"]: t for t in json.loads(done.stdout)["trials"]}
    assert trials["baseline/best-price"]["score"] == expected(275, 1)
    board = subprocess.run([sys.executable, "-m", "vendbench", "leaderboard", "--db", db,
                            "--format", "json"], capture_output=True, text=True, env=env,
                           timeout=300)
    rows = {r["model"]: r for r in json.loads(board.stdout)["rows"]}
    assert rows["baseline/fixed-price"]["oracle_share"] == pytest.approx(share(150, 1))
    # without the line it is unknown, and the error names the scenarios there are
    (dist / "entry_points.txt").write_text("")
    gone = subprocess.run([sys.executable, "-m", "vendbench", "run", "--scenario", "toy",
                           "--models", "baseline/fixed-price", "--db", db],
                          capture_output=True, text=True, env=env, timeout=300)
    assert gone.returncode != 0 and "toy" in gone.stderr and "autovend" in gone.stderr


def test_a_broken_entry_point_is_named(tmp_path):
    from vendbench.environment import _registry
    from vendbench.errors import ConfigError

    dist = tmp_path / "broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[vendbench.scenarios]\nbroken = no_such_module_here:SCENARIO\n")
    sys.path.insert(0, str(tmp_path))
    try:
        _registry._discovered = False
        with pytest.raises(ConfigError, match="broken.*no_such_module_here"):
            _registry.find("broken")
    finally:
        sys.path.remove(str(tmp_path))
        _registry._discovered = False
        _registry.REGISTRY.pop("broken", None)
