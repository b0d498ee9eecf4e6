"""An LLM trial in the network scenario, through litellm's real HTTP path: the same
scheduler, context and logging as for autovend; only the registry knows the world."""

from __future__ import annotations

import json

from ..fakellm import FakeLLM
from ..fakellm._server import Reply
from .conftest import model, query, run


def network_script(body: dict) -> Reply:
    """Find suppliers, order drinks, stock a slot when they arrive, end each day."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Reply(tool_calls=[("wait_for_next_day", "{}")])
    report = json.loads(last["content"]) if last["content"].startswith("{") else {}
    if report.get("day") == 1:
        items = [{"product_id": "cola", "quantity": 10}]
        return Reply(tool_calls=[
            ("search_web", json.dumps({"query": "drinks"})),
            ("order_goods", json.dumps({"supplier_id": "S-BEVDIRECT", "items": items}))])
    return Reply(tool_calls=[("restock_machine", json.dumps(
        {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola", "quantity": 10}))])


def test_an_llm_trial_plays_the_network_world(tmp_path):
    db = str(tmp_path / "net.duckdb")
    with FakeLLM(script=network_script) as llm:
        result = run(db, scenario="network", days=4, seeds=[1, 2],
                     models=[model(llm), {"id": "baseline/oracle"}])
    trials = {(t["model"], t["seed"]): t for t in result.as_json()["trials"]}
    assert all(t["status"] == "completed" for t in trials.values()), trials
    llm_trial = trials[("openai/fake-model", 1)]
    assert llm_trial["days_completed"] == 4 and llm_trial["exchanges"] > 4
    names = [n for n, in query(db, "SELECT name FROM tool_calls WHERE trial_id = ? ORDER BY "
                                   "seq", [llm_trial["trial_id"]])]
    assert names[:3] == ["search_web", "order_goods", "wait_for_next_day"]
    assert "restock_machine" in names
    ok = query(db, "SELECT bool_or(ok) FROM tool_calls WHERE trial_id = ? AND name = "
                   "'restock_machine'", [llm_trial["trial_id"]])[0][0]
    assert ok                                  # the cola arrived and went in
    run_row = query(db, "SELECT scenario, prompts_json FROM runs")[0]
    assert run_row[0] == "network" and "wait_for_next_day" in json.loads(run_row[1])["nudge"]
    # the reward: the final bank balance (an LLM that sells one slot loses rent money)
    assert 0 < llm_trial["score"] < 1500
    # the score is the bank; its net assets count the stock it holds too (design §21)
    score, bank, net = query(db, "SELECT score, final_cash, final_net_assets FROM trials "
                                 "WHERE trial_id = ?", [llm_trial["trial_id"]])[0]
    assert score == bank and net >= bank
