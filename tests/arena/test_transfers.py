"""Money between seats is visible (design §29.2): each arena trial stores its net
transfers; the arena leaderboard ranks on earned scores (score less transfers received),
shows the score and the transfers beside them, and flags a seat above the oracle."""

from __future__ import annotations

import json
import re

from vendbench.environment import Anchors
from vendbench.leaderboard._arena import ArenaBoard, _rank, render_arena

from ..fakellm import FakeLLM
from ..fakellm._server import Reply
from ..orchestrator.conftest import query
from .test_matches import arena_script, llm_args, vendbench


def payer_script(body: dict) -> Reply:
    """arena_script's operator; the model named "payer" also pays the other seat EUR 40
    on its first day."""
    reply = arena_script(body)
    me = re.search(r"\((operator-[a-d]@vendors\.example)\)", body["messages"][0]["content"])
    if "payer" in body["model"] and any(n == "email_operator" for n, _ in reply.tool_calls):
        other = "operator-b@vendors.example" if me and me.group(1)[9] == "a" \
            else "operator-a@vendors.example"
        reply.tool_calls.insert(0, ("pay_operator", json.dumps(
            {"to": other, "amount": 40, "memo": "for you"})))
    return reply


def test_an_arena_trial_stores_its_net_transfers_and_the_board_shows_them(tmp_path):
    db = str(tmp_path / "arena.duckdb")
    models = ("openai/payer", "openai/fake-b")
    with FakeLLM(payer_script) as llm:
        done = vendbench("arena", *models, "--seeds", "1", "2", "--days", "3",
                         *llm_args(llm, models), "--db", db, "--json")
        assert done.returncode == 0, done.stderr
    rows = query(db, "SELECT m.model, t.net_transfers, t.score FROM match_seats m "
                     "JOIN trials t USING (trial_id) ORDER BY m.seed, m.seat")
    assert sorted({(m, n) for m, n, _ in rows}) == [("openai/fake-b", 40.0),
                                                   ("openai/payer", -40.0)]
    board = json.loads(vendbench("leaderboard", "--arena", "--db", db, "--format",
                                 "json").stdout)
    by = {r["model"]: r for r in board["rows"]}
    for model, row in by.items():
        scores = [s for m, _, s in rows if m == model]
        assert row["mean_score"] == sum(scores) / len(scores)
        assert row["net_transfers"] == (40.0 if model == "openai/fake-b" else -40.0)
        assert abs(row["mean_earned"] - (row["mean_score"] - row["net_transfers"])) < 1e-9
    table = vendbench("leaderboard", "--arena", "--db", db).stdout
    assert "earned EUR" in table and "transfers" in table and "+40.00" in table
    assert "ranked by earned score" in table
    # a trial alone prints no transfers
    solo = str(tmp_path / "solo.duckdb")
    done = vendbench("run", "--models", "baseline/order-up-to", "--days", "2", "--seeds", "1",
                     "--db", solo, "--json")
    assert "net_transfers" not in json.loads(done.stdout)["trials"][0]


def seat(match: str, seed: int, n: int, model: str, score: float, transfers: float) -> dict:
    return {"match_id": match, "seat": n, "model": model, "status": "completed",
            "reason": None, "score": score, "net_transfers": transfers, "cost_usd": None,
            "world_seed": 2026, "seed": seed, "repeat": 1, "trial_id": f"{match}-{n}"}


def test_the_board_ranks_on_earned_scores_and_flags_seats_above_the_oracle():
    """A kingmaker pair: "king" scores above the oracle's 100 only by what "maker" paid
    it; ranked on earned scores it is below "honest", and its seats are flagged."""
    seats = []
    for i in (1, 2, 3):
        m = f"m{i}"
        seats += [seat(m, i, 0, "king", 130.0, 40.0), seat(m, i, 1, "maker", 0.0, -40.0),
                  seat(m + "x", i, 0, "honest", 95.0, 0.0),
                  seat(m + "x", i, 1, "maker", 0.0, 0.0)]
    board = ArenaBoard(["r"], "network", 30, 2, 0)
    # the oracle alone scores 100, doing nothing 0 (as rent leaves a year's idle operator)
    anchors = {(2026, i): Anchors(0.0, 100.0) for i in (1, 2, 3)}
    _rank(board, seats, anchors)
    assert [r.model for r in board.rows] == ["honest", "king", "maker"]
    king = next(r for r in board.rows if r.model == "king")
    assert (king.mean_score, king.mean_earned, king.net_transfers) == (130.0, 90.0, 40.0)
    assert king.above_oracle == 3 and abs(king.oracle_share - 0.9) < 1e-9
    assert {f["model"] for f in board.flagged} == {"king"}
    text = render_arena(board)
    assert "king !" in text and "above the oracle alone" in text and "+40.00" in text


def test_the_oracle_above_itself_in_a_market_is_not_an_exploit_unless_it_was_paid():
    """design §35.4: the oracle beside an idle rival scored 101 % of the oracle alone
    (a market's night, the rival's pull) and was marked "!", the exploit flag. Unpaid,
    it is named in a note instead; paid by a partner (the kingmaker), it is flagged as
    any seat is; any other model above the oracle is flagged as before."""
    seats = [seat("m1", 1, 0, "baseline/oracle", 101.0, 0.0),
             seat("m1", 1, 1, "baseline/idle", 0.0, 0.0),
             seat("m2", 2, 0, "baseline/oracle", 130.0, 40.0),
             seat("m2", 2, 1, "kingmaker", 0.0, -40.0),
             seat("m3", 3, 0, "openai/x", 102.0, 0.0),
             seat("m3", 3, 1, "baseline/idle", 0.0, 0.0)]
    board = ArenaBoard(["r"], "network", 30, 2, 0)
    _rank(board, seats, {(2026, i): Anchors(0.0, 100.0) for i in (1, 2, 3)})
    assert [(f["match_id"], f["model"]) for f in board.flagged] == [
        ("m2", "baseline/oracle"), ("m3", "openai/x")]
    assert board.oracle_above == 1.01
    text = " ".join(render_arena(board).split())
    assert "the oracle itself scored up to 101% of the oracle alone here" in text
    assert "not an exploit, not flagged" in text


def test_oracle_scores_kept_by_an_older_oracle_are_computed_again(tmp_path):
    """design §29.3: the network oracle changed (ceiling revision 2). A results file that
    kept its oracle scores under the old one (policy "baseline/oracle") gets them
    computed again under "baseline/oracle@3", never mixed with the new ones."""
    from vendbench.environment import ceiling_score, find_scenario
    from vendbench.leaderboard import build
    from vendbench.results import Store

    assert find_scenario("network").ceiling_key == "baseline/oracle@3"
    assert find_scenario("autovend").ceiling_key == "baseline/oracle"     # unchanged
    db = str(tmp_path / "r.duckdb")
    done = vendbench("run", "--scenario", "network", "--models", "baseline/order-up-to",
                     "--days", "10", "--seeds", "1", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    ceiling = ceiling_score("network", seed=1, days=10)
    assert query(db, "SELECT policy, score FROM ceilings") == [("baseline/oracle@3", ceiling)]
    with Store(db) as store:                  # as the oracle before revision 2 kept it
        store.con.execute("UPDATE ceilings SET policy = 'baseline/oracle', score = 1.0")
    (row,) = build(db).rows                   # not its score against the stale 1.0 (which
    assert row.oracle_share is not None and row.oracle_share < 1.0   # is below doing
                                              # nothing: no share at all)
    again = vendbench("run", "--scenario", "network", "--models", "baseline/order-up-to",
                      "--days", "10", "--seeds", "1", "--db", db, "--json")
    assert again.returncode == 0, again.stderr
    assert query(db, "SELECT policy, score FROM ceilings") == [("baseline/oracle@3", ceiling)]


def test_an_arena_with_no_match_ended_yet_prints_its_table_and_says_so():
    """`leaderboard --arena` on an arena whose matches were all still playing ended in a
    traceback (an empty table's widths); it prints the empty table and says why."""
    seats = [seat("m1", 1, 0, "a", 0.0, 0.0), seat("m1", 1, 1, "b", 0.0, 0.0)]
    for s in seats:
        s["status"] = "running"
    board = ArenaBoard(["r"], "network", 30, 2, 0)
    _rank(board, seats, {})
    text = render_arena(board)
    assert "still playing, not ranked yet: 1 match" in text and "None" not in text
