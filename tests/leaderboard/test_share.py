"""The headline share measures the business, not the starting cash (design §34).

share = (score − idle) / (oracle − idle), with idle what an operator that only ends its
days scores on the same world, seed and horizon: 0 % doing nothing, 100 % the oracle,
below 0 losing more than doing nothing; no share where the oracle gains too little over
doing nothing to divide by. The share of the score itself (what vendbench showed before)
gave doing nothing 25 % of the AutoVend oracle at 30 days on seed 1 and 100 % at 3.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from vendbench.environment import (RecordingSession, make, no_share, reference_anchors,
                                   share, share_bounds)
from vendbench.environment import play_day as play
from vendbench.results import shares


class Loser:
    """Runs no business and spends money on nothing: AutoVend, a day-1 order of stock it
    writes off as soon as it arrives; the network, a marketing campaign a day with
    nothing to sell."""

    name = "loser"

    def __init__(self, env: Any) -> None:
        self.env = env

    def play_day(self, call: Any, observation: str) -> None:
        if self.env.scenario == "autovend":
            if self.env.day == 1:
                found = call("search_catalog", {"page_size": 1})["rows"][0]
                call("place_order", {"items": [{"product_id": found["product_id"],
                                                "quantity": 100}]})
            held = [{"product_id": b["product_id"], "quantity": b["units"]}
                    for b in call("get_warehouse_inventory", {})["rows"] if b["units"]]
            if held:
                assert call("discard", {"items": held})["ok"]
            call("end_day", {})
        else:
            location = self.env.eco.locations[0].id
            call("run_marketing", {"location": location, "channel": "slack",
                                   "message": "nothing to sell yet"})
            call("wait_for_next_day", {})


def played(scenario: str, policy: str, days: int, seed: int = 1) -> float:
    """What ``policy`` ("loser", or a reference policy) scores, played through a
    recording session as every policy is."""
    from vendbench.environment import make_policy

    env = make(scenario, seed=seed, days=days)
    agent = Loser(env) if policy == "loser" else make_policy(policy, env)
    session = RecordingSession(env)
    while not env.done:
        play(session, agent)
    return float(env.final_state()["score"] if env.status == "completed" else 0.0)


def trial(tid: str, score: float, seed: int = 1) -> dict[str, Any]:
    return {"trial_id": tid, "status": "completed", "score": score, "world_seed": 2026,
            "seed": seed, "repeat": 1}


@pytest.mark.parametrize("scenario, days", [("autovend", 30), ("autovend", 180),
                                            ("network", 10), ("network", 30)])
def test_doing_nothing_scores_0_the_oracle_100_and_a_loser_below_0(scenario, days):
    anchors = reference_anchors(scenario, seed=1, days=days)
    assert anchors is not None
    idle, oracle, loser = (played(scenario, p, days) for p in ("idle", "oracle", "loser"))
    assert (idle, oracle) == (anchors.idle, anchors.oracle)     # the same episodes
    assert loser < idle < oracle
    got = shares([trial("idle", idle), trial("oracle", oracle), trial("loser", loser)],
                 scenario, {(2026, 1): anchors})
    assert got["idle"] == 0.0 and got["oracle"] == 1.0
    assert share_bounds(scenario, [anchors])[0] <= got["loser"] < 0
    # the share of the score itself counted the starting cash: at 30 days it gave doing
    # nothing a quarter of the AutoVend oracle and a third of the network's
    if days == 30:
        assert idle / oracle > 0.25


def test_past_the_day_doing_nothing_goes_bankrupt_nothing_scores_below_it():
    """The network at 180 days: rent alone bankrupts an idle operator (its score 0), so
    a loser, bankrupt sooner, scores 0 % too, and an oracle share is its old ratio."""
    anchors = reference_anchors("network", seed=1, days=180)
    assert anchors.idle == 0.0 and anchors.oracle > 0
    loser = played("network", "loser", 180)
    assert share(loser, anchors, "network") == 0.0
    assert share(anchors.oracle / 2, anchors, "network") == 0.5


@pytest.mark.parametrize("scenario", ["autovend", "network"])
def test_at_3_days_there_is_no_share_and_the_reason_is_said(scenario):
    """Nothing ordered has arrived (AutoVend) and what was bought is not yet sold (the
    network): the oracle gains nothing over doing nothing, so a share would divide by 0
    (or by noise), and none is made."""
    anchors = reference_anchors(scenario, seed=1, days=3)
    assert anchors.gain <= 0.05 * abs(anchors.oracle)
    assert share(anchors.oracle, anchors, scenario) is None
    why = no_share([anchors], scenario)
    assert why.startswith("no share of the oracle: it gains too little over doing nothing")
    assert "1 of 1 worlds and seeds" in why and "5% of its score" in why


def test_one_seed_that_does_not_divide_withholds_the_cohorts_shares():
    """At 5 days of AutoVend the oracle gains 4.8 % of its score on seed 3 and over 10 %
    on seeds 1 and 2: a mean over the seeds that divide would leave out the one where
    the oracle did worst, so the cohort shows none, and says why."""
    anchors = {(2026, s): reference_anchors("autovend", seed=s, days=5) for s in (1, 2, 3)}
    trials = [trial(f"t{s}", a.oracle, s) for (_, s), a in anchors.items()]
    assert set(shares(trials, "autovend", anchors).values()) == {None}
    assert "on 1 of 3 worlds and seeds" in no_share(anchors.values(), "autovend")
    del anchors[(2026, 3)]
    assert set(shares(trials[:2], "autovend", anchors).values()) == {1.0}


@pytest.mark.parametrize("days", [30, 180])
def test_ten_points_are_a_tenth_of_the_oracles_gain_at_every_horizon(days):
    anchors = reference_anchors("autovend", seed=2, days=days)
    base = anchors.idle + 0.35 * anchors.gain
    got = shares([trial("a", base, 2), trial("b", base + 0.10 * anchors.gain, 2)],
                 "autovend", {(2026, 2): anchors})
    assert got["b"] - got["a"] == pytest.approx(0.10)
    assert got["a"] == pytest.approx(0.35)


def test_a_run_of_the_reference_policies_ranks_idle_at_0_and_the_oracle_at_100(
        tmp_path, capsys):
    """Through the CLI, as the README's panel: doing nothing is 0 %, the oracle 100 %,
    order-up-to between; vs base is in points of the oracle's gain."""
    from vendbench.cli import main

    db = str(tmp_path / "share.duckdb")
    assert main(["run", "--models", "baseline/idle", "baseline/order-up-to",
                 "baseline/oracle", "--seeds", "1", "2", "--days", "30", "--db", db,
                 "--json"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    rows = {r["model"]: r for r in board["rows"]}
    assert rows["baseline/idle"]["oracle_share"] == 0.0
    assert rows["baseline/oracle"]["oracle_share"] == 1.0
    base = rows["baseline/order-up-to"]["oracle_share"]
    assert 0.05 < base < 0.5
    assert rows["baseline/oracle"]["vs_baseline_points"] == pytest.approx(1 - base)
    assert rows["baseline/idle"]["vs_baseline_points"] == pytest.approx(-base)
    low, high = board["share_bounds"]
    assert -0.5 < low < -0.3 and high == 1.25          # an unfinished trial's 0, the cap
    assert main(["leaderboard", "--db", db]) == 0
    table = capsys.readouterr().out
    assert "0% (0%–0%)" in table and "100% (100%–100%)" in table
    assert "0% only ends its days" in " ".join(table.split())


def test_a_file_written_before_is_re_scored_from_its_stored_scores(tmp_path, capsys):
    """A results file of schema 13 kept only the oracle's scores: its shares are made
    from its stored trial scores, doing nothing's score computed (never guessed), and
    the upgraded file gains the floors table."""
    import duckdb

    from vendbench.cli import main
    from vendbench.results import Store

    db = str(tmp_path / "old.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "--seeds", "1", "--days", "30",
                 "--db", db, "--json"]) == 0
    capsys.readouterr()
    con = duckdb.connect(db)                    # as schema 13 left it: no floors table
    con.execute("DROP TABLE floors")
    con.execute("UPDATE meta SET value = '13' WHERE key = 'schema_version'")
    con.close()
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    anchors = reference_anchors("autovend", seed=1, days=30)
    with Store(db, read_only=True) as store:
        score = store.con.execute("SELECT score FROM trials").fetchone()[0]
        assert store.con.execute("SELECT count(*) FROM floors").fetchone() == (0,)
    assert row["oracle_share"] == pytest.approx((score - anchors.idle) / anchors.gain)
