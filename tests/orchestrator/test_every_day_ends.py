"""Every day ends, and a stuck agent stops (design §35.0): in the network world a model
that kept calling a tool the world lacks (``end_day``, AutoVend's name) never reached
the next day: 1,909 requests in 120 s for a 2-day trial, and without --budget nothing
stopped the spend. Every scenario now ends a day after a stated interaction budget, and
the same failing call made again and again stops the trial as silence does."""

from __future__ import annotations

import json

import pytest

from vendbench.environment import (DAY_OVER, MAX_REPEATED_FAILURES, RecordingSession, Repeats,
                                   make, scenario)

from ..fakellm import FakeLLM
from ..fakellm._server import Reply
from .conftest import model, query, run


def lost(body: dict) -> Reply:
    """AutoVend's day tool, in the network: a tool that world does not have."""
    return Reply(tool_calls=[("end_day", "{}")])


def wanderer(body: dict) -> Reply:
    """Calls a tool the world lacks, each time with other arguments (so never the same
    failing call twice), and never ends a day."""
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return Reply(tool_calls=[("end_day", json.dumps({"attempt": turn}))])


def test_a_model_calling_a_missing_tool_is_stopped_after_a_few_requests(tmp_path):
    db = str(tmp_path / "lost.duckdb")
    with FakeLLM(script=lost) as llm:
        result = run(db, scenario="network", days=2, models=[model(llm)])
        served = llm.served
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "agent_stopped"
    assert trial["reason"] == (f"the same failing call (end_day) {MAX_REPEATED_FAILURES} "
                               "times in a row")
    assert trial["exchanges"] == MAX_REPEATED_FAILURES == served
    results = [json.loads(r) for r, in query(db, "SELECT result_json FROM tool_calls "
                                               "ORDER BY seq")]
    assert all(r["error"].startswith("unknown tool 'end_day'") for r in results)
    # the rule is told before it is applied
    assert [r.get("warning") for r in results] == [
        None, None, "the same failing call 3 times in a row: 2 more and the trial stops",
        "the same failing call 4 times in a row: 1 more and the trial stops",
        "the same failing call 5 times in a row: the trial stops"]


def test_a_model_that_never_ends_its_day_meets_the_days_interaction_budget(tmp_path):
    """A call the world does not know costs no working minutes, so only the day's
    interaction budget (the network's 100 calls) ends each day: the trial completes,
    its requests bounded by days x the budget."""
    db = str(tmp_path / "wanderer.duckdb")
    cap = scenario("network").calls_per_day
    with FakeLLM(script=wanderer) as llm:
        result = run(db, scenario="network", days=2, models=[model(llm)])
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "completed" and trial["days_completed"] == 2
    assert trial["exchanges"] == 2 * cap
    ended = query(db, "SELECT day, seq FROM tool_calls WHERE result_json LIKE "
                      "'%\"day_ended\":true%' ORDER BY seq")
    assert ended == [(1, cap), (2, 2 * cap)]


@pytest.mark.parametrize("world", ["autovend", "network"])
def test_each_world_states_its_days_interaction_budget_and_keeps_it(world):
    declared = scenario(world).calls_per_day
    env = make(world, seed=1, days=3)
    assert f"{declared}" in env.instructions              # the briefing says it
    session = RecordingSession(env)
    for n in range(1, declared + 1):                 # unknown calls count too
        result = session.call("no_such_tool", {"n": n})
        assert result["ok"] is False and env.day == (1 if n < declared else 2), n
    assert result["day_ended"] is True and f"all {declared} tool calls" in result["notice"]


def test_the_network_budget_is_the_economy_files():
    from vendbench.environment.autovend import DAILY_TOOL_CALLS
    from vendbench.environment.network._config import load

    assert scenario("network").calls_per_day == load()["clock"]["calls_per_day"]
    assert scenario("autovend").calls_per_day == DAILY_TOOL_CALLS


def test_a_failing_call_repeated_in_a_row_and_nothing_else_is_stuck():
    repeats = Repeats()
    bad = {"ok": False, "error": "no"}
    for _ in range(MAX_REPEATED_FAILURES - 1):
        repeats.saw("place_order", {"items": [1]}, bad)
    assert repeats.stuck() is None
    repeats.saw("place_order", '{"items": [1]}', bad)           # the same, as JSON text
    assert repeats.stuck() == (f"the same failing call (place_order) "
                               f"{MAX_REPEATED_FAILURES} times in a row")
    repeats.saw("place_order", {"items": [1]}, DAY_OVER)          # the harness's: no count
    assert repeats.count == MAX_REPEATED_FAILURES
    repeats.saw("place_order", {"items": [2]}, bad)               # other arguments: anew
    assert repeats.count == 1
    repeats.saw("place_order", {"items": [2]}, {"ok": True})      # a success ends the run
    assert (repeats.key, repeats.count) == (None, 0)
    for _ in range(2 * MAX_REPEATED_FAILURES):                    # alternating: never
        repeats.saw("a", {}, bad)
        repeats.saw("b", {}, bad)
    assert repeats.stuck() is None


def test_a_resumed_trial_keeps_its_count_of_repeats(tmp_path):
    """Killed after three repeats, a trial resumed stops after two more, not five."""
    from vendbench.orchestrator._replay import _repeats
    from vendbench.results import Store

    db = str(tmp_path / "lost.duckdb")
    with FakeLLM(script=lost) as llm:
        run(db, scenario="network", days=2, models=[model(llm)])
    with Store(db, read_only=True) as store:
        (trial_id,) = [t["trial_id"] for t in store.trials(store.runs()[0]["run_id"])]
        history = store.history(trial_id)
    assert _repeats(history).count == MAX_REPEATED_FAILURES
    history.tool_calls[:] = history.tool_calls[:3]
    assert _repeats(history).count == 3


def test_a_two_seat_arena_of_lost_models_stops(tmp_path, capsys):
    """A 2-day arena of two such seats made 11,385 requests."""
    from vendbench.cli import main

    db = str(tmp_path / "arena.duckdb")
    with FakeLLM(script=lost) as llm:
        assert main(["arena", "openai/a", "openai/b", "--scenario", "network", "--days",
                     "2", "--api-base", llm.url, "--price", "openai/a=0.4,1.6", "--price",
                     "openai/b=0.4,1.6", "--db", db, "--json"]) == 0
        served = llm.served
    seats = json.loads(capsys.readouterr().out)["matches"]
    assert len(seats) == 4 and {s["status"] for s in seats} == {"agent_stopped"}
    assert served == 4 * MAX_REPEATED_FAILURES         # two matches (seeds) of two seats


def test_a_run_without_a_budget_says_what_a_trial_may_spend_at_most(capsys, monkeypatch):
    from vendbench.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    assert main(["check", "--models", "openai/gpt-4.1-mini", "--days", "30",
                 "--no-request"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 30 days x 40 calls x 3 (two replies without a call allowed before each)
    assert "no --budget: a trial may spend up to $" in out and "3,600 requests at most" in out
    from vendbench.orchestrator import build_config, forecast_run
    from vendbench.ui import forecast_lines

    gpt = {"id": "openai/gpt-4.1-mini"}
    free = forecast_run(build_config({"days": 30, "models": [gpt]})).models[0]
    assert free.most == 3_600 * free.full_reserve and free.most_requests == 3_600
    capped = forecast_run(build_config({"days": 30, "budget_usd": "2", "models": [gpt]}))
    assert capped.models[0].most == 2
    assert "no --budget" not in " ".join(forecast_lines(capped.as_json(), 30))
    turns = forecast_run(build_config({"days": 30, "max_turns": 50, "models": [gpt]}))
    assert turns.models[0].most_requests == 50
