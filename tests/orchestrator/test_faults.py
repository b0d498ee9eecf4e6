"""Retries, billing of failed attempts, and the agent loop's error paths (design §3)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ..fakellm import FakeLLM, Reply
from ..fakellm._server import UNREADABLE
from .conftest import model, query, run, until


def statuses(db: str) -> list[tuple]:
    return query(db, "SELECT attempt, status, cost_usd, reserved_usd FROM exchanges "
                     "ORDER BY seq, attempt")


def test_429_is_retried_after_retry_after_and_not_billed(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("429", times=2, retry_after=0.05)
    result = run(db, days=2, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    rows = statuses(db)
    assert [r[:2] for r in rows[:3]] == [(1, "rate_limit"), (2, "rate_limit"), (3, "ok")]
    assert rows[0][2] == rows[1][2] == 0 and rows[2][2] > 0
    events = query(db, "SELECT event, concurrency, retry_after FROM provider_events "
                       "ORDER BY at_seconds")
    limited = [e for e in events if e[0] == "rate_limited"]
    assert len(limited) == 2 and limited[0][1] == 4.0 and limited[1][1] == 2.0   # AIMD: 8→4→2
    assert limited[0][2] == 0.05


def test_5xx_is_retried_and_not_billed(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("500", times=3)
    result = run(db, days=2, models=[model(llm)])
    rows = statuses(db)
    assert [r[1] for r in rows[:4]] == ["transient"] * 3 + ["ok"]
    assert all(r[2] == 0 for r in rows[:3])
    assert result.pool.spent == sum(r[2] for r in rows if r[1] == "ok")   # 5xx: not billed


def test_unknown_outcomes_are_retried_and_charged_in_full(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("hang", seconds=3)            # the client times out after 0.5 s
    llm.inject("drop")
    llm.inject("truncated")
    llm.inject("malformed")
    result = run(db, days=2, models=[model(llm, request_timeout_s=0.5)])
    rows = statuses(db)
    assert [r[1] for r in rows[:5]] == ["unknown"] * 4 + ["ok"]
    for attempt, _, cost, reserved in rows[:4]:
        assert cost == reserved > 0               # maybe billed: the reservation is spent
    trial_cost = query(db, "SELECT cost_usd FROM trials")[0][0]
    assert trial_cost == sum(r[2] for r in rows)
    # what the budget itself charged, not only what was logged: the pool holds every
    # reservation of an unknown outcome, plus the actual cost of each reply
    ok = sum(r[2] for r in rows if r[1] == "ok")
    assert result.pool.spent == ok + sum(r[3] for r in rows[:4]) == trial_cost


def test_usage_that_is_no_token_count_is_a_garbled_reply_charged_its_reservation(
        llm, tmp_path):
    """A reply claiming a trillion, or a negative number of, tokens is not a bill: its
    outcome is unknown (charged the reservation, retried), and nothing overflows."""
    from ..fakellm import vending_script

    garbage = iter([Reply(tool_calls=[("end_day", "{}")], prompt_tokens=10**12),
                    Reply(tool_calls=[("end_day", "{}")], completion_tokens=-5)])
    llm.script = lambda body: next(garbage, None) or vending_script(body)
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=2, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    rows = query(db, "SELECT attempt, status, cost_usd, reserved_usd, error FROM exchanges "
                     "WHERE seq = 1 ORDER BY attempt")
    assert [r[1] for r in rows] == ["unknown", "unknown", "ok"]
    for _, _, cost, reserved, error in rows[:2]:
        assert cost == reserved > 0 and "not a token count" in error
    assert "1000000000000" in rows[0][4] and "-5" in rows[1][4]
    assert query(db, "SELECT max(input_tokens) < 10000, min(output_tokens) >= 0 FROM "
                     "exchanges WHERE status = 'ok'") == [(True, True)]


def test_client_errors_are_never_retried(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("401")
    result = run(db, days=2, models=[model(llm)])
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "error" and "1 attempt" in trial["reason"]
    assert len(llm.requests) == 1 and statuses(db)[0][1] == "no"


def test_giving_up_after_max_attempts_is_a_harness_error(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("500", times=10)
    result = run(db, days=2, max_attempts=3, models=[model(llm)])
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "error" and "3 attempt" in trial["reason"]
    assert len(llm.requests) == 3


def test_the_same_server_error_for_the_same_request_ends_early_without_a_resume(
        llm, tmp_path, capsys):
    """A 500 that says the same thing about the same body three times (llama.cpp's chat
    template failing on it) will say it again: the trial ends after three attempts, not
    six, with the server's words, and no resume is offered. A server that is down says
    so in general words, and is retried as before."""
    from vendbench.cli import main

    db = str(tmp_path / "r.duckdb")
    llm.inject("500", times=3, message="Value is not callable: 'dict object' has no "
                                        "attribute 'content'")
    rc = main(["run", "--models", "openai/fake", "--api-base", llm.url, "--price",
               "openai/fake=0.4,1.6", "--days", "2", "--db", db])
    out, err = capsys.readouterr()
    assert rc == 3 and len(llm.requests) == 3
    (reason,) = query(db, "SELECT reason FROM trials")[0]
    assert "same error 3 times" in reason and "has no attribute 'content'" in reason
    assert "vendbench run --resume" not in out + err and "a resume would send" in err
    llm.inject("500", times=4)                        # an outage: retried, then it is back
    result = run(str(tmp_path / "s.duckdb"), days=2, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"


def test_bad_tool_calls_come_back_as_tool_errors(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("bad_arguments")
    llm.inject("unknown_tool")
    result = run(db, days=2, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    first = query(db, "SELECT name, ok, result_json FROM tool_calls ORDER BY seq LIMIT 2")
    assert first[0][0] == "place_order" and not first[0][1] and "JSON" in first[0][2]
    assert first[1][0] == "launch_rocket" and not first[1][1] and "unknown tool" in first[1][2]
    # the model saw those errors as tool results of its calls
    sent = llm.requests[2]["messages"]
    assert sent[-1]["role"] == "tool" and "unknown tool" in sent[-1]["content"]


def test_replies_without_tool_calls_get_a_nudge_then_stop_the_trial(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("no_tool_call", times=2)
    result = run(db, days=2, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    assert "did not call a tool" in llm.requests[1]["messages"][-1]["content"]
    llm.inject("no_tool_call", times=3)
    result = run(str(tmp_path / "s.duckdb"), days=2, models=[model(llm)])
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "agent_stopped" and trial["exchanges"] == 3


def test_the_silent_count_starts_again_after_a_reply_with_a_tool_call(tmp_path):
    """Two silent replies, then a tool call, then two silent replies, and so on: never
    three in a row, so the trial completes (without the reset it would stop at the
    fourth silent reply)."""
    replies = iter(["silent", "silent", "call"] * 40)

    def script(body):
        if next(replies) == "silent":
            return Reply(content="Let me think about the business.")
        return Reply(tool_calls=[("end_day", "{}")])

    with FakeLLM(script) as server:
        result = run(str(tmp_path / "r.duckdb"), days=4, models=[model(server)])
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "completed", trial
    assert trial["exchanges"] == 12 and trial["tool_calls"] == 4


def test_parallel_tool_calls_run_in_order_and_end_day_stops_the_rest(llm, tmp_path):
    def script(body):
        if body["messages"][-1]["role"] == "tool":
            return Reply(tool_calls=[("end_day", "{}")])
        return Reply(tool_calls=[("write_notes", '{"text": "a"}'), ("end_day", "{}"),
                                 ("write_notes", '{"text": "b"}')])

    llm.script = script
    db = str(tmp_path / "r.duckdb")
    run(db, days=2, models=[model(llm)])
    calls = query(db, "SELECT name, ok, result_json FROM tool_calls ORDER BY seq LIMIT 3")
    assert [c[0] for c in calls] == ["write_notes", "end_day", "write_notes"]
    assert calls[1][1] and not calls[2][1] and "already ended" in calls[2][2]


def test_daily_tool_budget_applies_to_llm_agents(llm, tmp_path):
    llm.script = lambda body: Reply(tool_calls=[("list_machines", "{}")] * 50)
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=2, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    per_day = query(db, "SELECT day, count(*), count(*) FILTER (WHERE ok) FROM tool_calls "
                        "GROUP BY day ORDER BY day")
    assert per_day[0][2] == 40                     # then the day ended for it
    assert Decimal(0) < query(db, "SELECT cost_usd FROM trials")[0][0]


def test_max_turns_ends_the_trial_with_that_status(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=30, max_turns=5, models=[model(llm)])
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "max_turns" and trial["exchanges"] == 5
    assert trial["final_net_assets"] is not None           # raw figures kept for diagnosis


def test_wall_clock_timeout_ends_the_trial_with_that_status(llm, tmp_path):
    llm.latency = 0.2                                     # 30 days need ~60 requests: ≥ 12 s
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=30, timeout_s=1.0, models=[model(llm), {"id": "baseline/oracle"}])
    by_model = {t["model"]: t for t in result.as_json()["trials"]}
    assert by_model["openai/fake-model"]["status"] == "timeout"
    assert by_model["baseline/oracle"]["status"] in ("completed", "timeout")
    status = query(db, "SELECT status, reason FROM trials WHERE model = 'openai/fake-model'")
    assert status[0][0] == "timeout" and "1 s" in status[0][1]


def test_a_request_interrupted_in_flight_is_logged_and_charged_in_full(llm, tmp_path):
    """Ctrl-C while the provider holds a request: it may be billed, so it is logged as an
    attempt of unknown outcome and charged its reservation; the trial's cost includes it."""
    import asyncio

    from vendbench.orchestrator import build_config, execute

    db = str(tmp_path / "r.duckdb")
    llm.inject("hang", seconds=3)
    config = build_config({"days": 2, "seeds": [1], "models": [model(llm)]})

    async def interrupt_when_sent() -> None:
        task = asyncio.create_task(execute(config, db))
        await until(lambda: llm.in_flight > 0, what="a request in flight")
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(interrupt_when_sent())
    (attempt, status, cost, reserved), = statuses(db)
    assert status == "unknown" and cost == reserved > 0
    error, = query(db, "SELECT error FROM exchanges")[0]
    assert "interrupted" in error
    assert query(db, "SELECT status, cost_usd FROM trials") == [("interrupted", cost)]


def test_a_lone_surrogate_in_a_reply_is_replaced_where_the_reply_is_parsed(tmp_path):
    """JSON may escape half a character (``"\\ud800"``). Such a reply (in its text, and in
    a tool call's arguments that end in the notes) used to make the next request
    unencodable, and the trial ended ``error`` blaming "HTTP 500 … 3 times" on a server
    that had received one request. Now the halves become U+FFFD as the reply is parsed."""
    import json

    sent: list[int] = []

    def script(body):
        sent.append(1)
        if len(sent) == 1:
            return Reply(content="thinking \ud800 aloud",
                         tool_calls=[("write_notes", json.dumps({"text": "a \udc00 b"}))])
        if len(sent) == 2:
            return Reply(tool_calls=[("read_notes", "{}")])
        return Reply(tool_calls=[("end_day", "{}")])

    db = str(tmp_path / "r.duckdb")
    with FakeLLM(script=script) as llm:
        result = run(db, days=2, models=[model(llm)])
        assistant = [m for m in json.loads(llm.raw[1])["messages"]
                     if m["role"] == "assistant"]
        assert assistant[0]["content"] == "thinking \ufffd aloud"      # sent back whole
        assert "a \ufffd b" in json.loads(llm.raw[2])["messages"][-1]["content"]
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "completed", trial["reason"]
    notes = query(db, "SELECT result_json FROM tool_calls WHERE name = 'read_notes'")
    assert json.loads(notes[0][0])["text"] == "a \ufffd b"


def test_a_request_that_cannot_be_encoded_here_is_not_the_servers_fault():
    """An encoding failure on this machine (litellm reports it as an HTTP 500) is a
    permanent local failure: never retried, and never said to be the server's."""
    import litellm

    from vendbench.providers import RetryKind, make_provider

    exc = litellm.InternalServerError(
        message="OpenAIException - 'utf-8' codec can't encode character '\\ud800' in "
                "position 5186: surrogates not allowed", llm_provider="openai", model="x")
    failure = make_provider("openai/x").classify(exc)
    assert failure.kind is RetryKind.NO and failure.status is None
    assert "never sent" in failure.message and "not the server's" in failure.message
    assert "HTTP 500" not in failure.message


def test_litellm_error_names_are_said_once():
    import litellm

    from vendbench.providers import make_provider

    exc = litellm.NotFoundError(message="OpenAIException - model gpt-x does not exist",
                                llm_provider="openai", model="gpt-x")
    message = make_provider("openai/x").classify(exc).message
    assert message.count("NotFoundError") == 1, message
    assert message.startswith("NotFoundError: ") and "does not exist" in message


def test_tool_results_reach_the_model_as_utf8_text(llm, tmp_path):
    """Escapes cost tokens: the daily report's ``°C`` is sent as UTF-8, not ``\\u00b0C``."""
    calls = iter([[("get_daily_report", "{}")]])
    llm.script = lambda body: Reply(tool_calls=next(calls, [("end_day", "{}")]))
    run(str(tmp_path / "r.duckdb"), days=1, models=[model(llm)])
    tool = [m for m in llm.requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert "°C" in tool and "\\u00b0" not in llm.raw[1].decode("utf-8")


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_a_billed_reply_that_cannot_be_read_is_charged_never_free(llm, tmp_path, kind):
    """design §30: a 200 whose body no client can read (no choices, not JSON, usage that
    is NaN, Infinity or words) was filed as a server's 500 at $0 and retried: the server
    billed it, the file did not. Now its outcome is unknown: charged its reservation,
    retried, named in one line."""
    db = str(tmp_path / "r.duckdb")
    llm.inject(kind)
    result = run(db, days=2, models=[model(llm)])
    (status, cost, reserved, error), = query(
        db, "SELECT status, cost_usd, reserved_usd, error FROM exchanges "
            "WHERE status <> 'ok'")
    assert status == "unknown" and cost == reserved > 0
    assert "\n" not in error and "Traceback" not in error and "reply" in error, error
    assert result.as_json()["trials"][0]["status"] == "completed"
    assert result.pool.spent == query(db, "SELECT cost_usd FROM trials")[0][0] >= reserved


def test_a_garbled_usage_prints_no_library_warning_on_the_command_line(llm, tmp_path):
    """design §35.6: litellm's pydantic models warned ("Pydantic serializer warnings:
    PydanticSerializationUnexpectedValue ...") whenever a reply's usage was no number;
    vendbench names such a reply itself, once."""
    import os
    import subprocess
    import sys

    llm.inject("words_usage")
    out = subprocess.run(
        [sys.executable, "-m", "vendbench", "run", "--models", "openai/fake", "--api-base",
         llm.url, "--price", "openai/fake=0.4,1.6", "--days", "1", "--db",
         str(tmp_path / "r.duckdb")], capture_output=True, text=True, timeout=120,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-warnings", "PYTHONWARNINGS": ""})
    assert out.returncode == 0, out.stderr
    assert "Pydantic serializer" not in out.stderr and "Warning" not in out.stderr, out.stderr
    (error,), = query(str(tmp_path / "r.duckdb"),
                      "SELECT error FROM exchanges WHERE status = 'unknown'")
    assert "could not be read" in error                       # the garbled reply came


def test_an_output_count_above_max_tokens_is_garbled_not_a_bill(llm, tmp_path):
    """A reply claiming 6,000 output tokens for a request that allowed 512 is not a bill
    ($10,000 were once recorded against a $0.05 cap this way): charged its reservation."""
    from ..fakellm import vending_script

    first = iter([Reply(tool_calls=[("end_day", "{}")], completion_tokens=6_000)])
    llm.script = lambda body: next(first, None) or vending_script(body)
    db = str(tmp_path / "r.duckdb")
    run(db, days=2, budget_usd="0.05", models=[model(llm, max_output_tokens=512)])
    (status, cost, reserved, error), = query(
        db, "SELECT status, cost_usd, reserved_usd, error FROM exchanges "
            "WHERE status <> 'ok'")
    assert status == "unknown" and cost == reserved and "above the 512" in error
    assert query(db, "SELECT max(cost_usd) FROM exchanges")[0][0] < Decimal("0.05")
