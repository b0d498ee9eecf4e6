"""What real servers do that our fakes did not: count tokens their own way, hold a
smaller context, ignore tools without tool_choice (design §6.1, §6.3)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from decimal import Decimal

import pytest

from vendbench.leaderboard import build
from vendbench.orchestrator import build_config, execute
from vendbench.providers import TokenCounter, rebuild_request
from vendbench.providers._litellm import context_limit
from vendbench.results import Store

from ..fakellm import FakeLLM
from .conftest import claude, model, query, run

COUNTER = TokenCounter("openai/fake-model")


def counting_like_us(scale: float, **options) -> FakeLLM:
    """A server whose token count is ours × ``scale``, message by message."""
    return FakeLLM(usage_scale=scale, **{"count_message": lambda m: COUNTER.count_now([m])[0],
                                         "count_tools": COUNTER.tools, **options})


def test_tool_choice_is_always_sent_so_a_llama_cpp_server_sees_the_tools(tmp_path):
    with FakeLLM(require_tool_choice=True) as llm:
        result = run(str(tmp_path / "r.duckdb"), days=3, models=[model(llm)])
        trial = result.as_json()["trials"][0]
        assert trial["status"] == "completed" and trial["tool_calls"] >= 3
        assert {r["tool_choice"] for r in llm.requests} == {"auto"}


def test_tool_call_messages_pass_a_template_as_strict_as_llama_cpps(tmp_path):
    """llama.cpp's chat templates read every message's content: an assistant message
    that carries tool calls goes with "content": "" (null is refused there too), so a
    multi-turn trial finishes."""
    with FakeLLM(strict_template=True) as llm:
        result = run(str(tmp_path / "r.duckdb"), days=4, models=[model(llm)])
        trial = result.as_json()["trials"][0]
        assert trial["status"] == "completed", trial["reason"]
        sent = [m for r in llm.requests for m in r["messages"] if m.get("tool_calls")]
        assert sent and all(m["content"] == "" for m in sent)


def test_tool_choice_required_reaches_each_wire_format(llm, tmp_path):
    run(str(tmp_path / "r.duckdb"), days=2,
        models=[model(llm, tool_choice="required"), claude(llm, tool_choice="required")])
    chosen = {p: {json.dumps(r["tool_choice"]) for r, q in zip(llm.requests, llm.paths)
                  if q == p} for p in set(llm.paths)}
    assert chosen == {"/v1/chat/completions": {'"required"'},
                      "/v1/messages": {json.dumps({"type": "any"})}}


@pytest.mark.parametrize("style", ["llama", "openai", "bare"])
def test_a_smaller_server_context_counting_above_ours_is_recovered(tmp_path, style):
    """The server counts 1.5x our tokens and holds 6,000 of them, against a configured
    10,000: the first overflow is recovered (evict, recalibrate, retry, logged as an
    attempt) and the trial completes; later requests fit without further refusals."""
    with counting_like_us(1.5, context_window=6_000, context_error=style) as llm:
        db = str(tmp_path / "r.duckdb")
        result = run(db, days=15, models=[model(llm, max_context_tokens=10_000)])
        trial = result.as_json()["trials"][0]
        assert trial["status"] == "completed", trial["reason"]
        refused = query(db, "SELECT seq, attempt FROM exchanges WHERE status = "
                            "'context_length' ORDER BY seq")
        assert 1 <= len(refused) <= (2 if style == "bare" else 1)
        for seq, attempt in refused:          # each was sent again, shorter, and answered
            again = query(db, "SELECT status, json_array_length(request_json, "
                              "'$.message_ids') FROM exchanges WHERE seq = ? AND attempt = ?",
                          [seq, attempt + 1])
            before = query(db, "SELECT json_array_length(request_json, '$.message_ids') "
                               "FROM exchanges WHERE seq = ? AND attempt = ?", [seq, attempt])
            assert again[0][0] == "ok" and again[0][1] < before[0][0]
        assert all(u["prompt_tokens"] <= 6_000 for u in llm.usages)


def test_a_context_that_cannot_hold_one_exchange_ends_context_overflow(tmp_path):
    with counting_like_us(1.5, context_window=2_500) as llm:
        db = str(tmp_path / "r.duckdb")
        result = run(db, days=3, models=[model(llm), {"id": "baseline/order-up-to"}])
        trial = next(t for t in result.as_json()["trials"] if t["model"] == "openai/fake-model")
        assert trial["status"] == "context_overflow"
        # the server's own context is the limit, not the configured one: say so (this
        # server's error gives no number through litellm, so the figure is an estimate)
        assert "the server's own context is about" in trial["reason"], trial["reason"]
        assert "--ctx-size" in trial["reason"]
        assert query(db, "SELECT count(*) FROM exchanges WHERE status = 'context_length'"
                     )[0][0] >= 1
        # a model-side failure: ranked as a zero, not set apart as a harness error
        board = build(db)
        row = next(r for r in board.rows if r.model == "openai/fake-model")
        assert (row.trials, row.completed, row.mean_net_assets) == (1, 0, 0.0)
        assert board.selection.set_apart == []
        # and --resume keeps it: nothing is sent again
        sent = len(llm.requests)
        config = build_config({"days": 3, "seeds": [1], "models": [model(llm)]})
        asyncio.run(execute(config, db, resume=result.run_id))
        assert len(llm.requests) == sent


def test_reservations_follow_the_servers_count(tmp_path):
    """A server counting 3x our tokens: once it has answered, every reservation covers
    the cost it then reports (input-priced, so the input count is what matters)."""
    with counting_like_us(3.0) as llm:
        db = str(tmp_path / "r.duckdb")
        run(db, days=4, models=[model(llm, input_usd_per_mtok="10", output_usd_per_mtok="0",
                                      prompt_caching=False)])
        rows = query(db, "SELECT seq, reserved_usd, cost_usd FROM exchanges ORDER BY seq")
        assert rows[0][1] < rows[0][2]                # before any reply: our count only
        assert all(reserved >= cost for seq, reserved, cost in rows[1:])


def test_a_server_that_drops_the_tools_is_reported_once(tmp_path):
    """The model cannot call a tool, so every trial stops: the run says why, once."""
    with FakeLLM(drop_tools=True) as llm:
        db = str(tmp_path / "r.duckdb")
        result = run(db, days=2, seeds=[1, 2], models=[model(llm)])
        assert {t["status"] for t in result.as_json()["trials"]} == {"agent_stopped"}
        warnings = query(db, "SELECT model, kind, message FROM run_warnings")
        assert len(warnings) == 1 and warnings[0][1] == "no_tool_calls"
        assert "never called a tool" in warnings[0][2] and "tool_choice" in warnings[0][2]
        assert result.as_json()["warnings"][0]["kind"] == "no_tool_calls"


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_a_server_counting_no_tool_schemas_is_reported_while_the_trial_goes_on(tmp_path,
                                                                             scale):
    """Tool calls still come back (a server that parses them from the text, say), but
    the server's count has no room for the schemas: its count at zero messages, measured
    from how it grows, is far below what the schemas take."""
    with counting_like_us(scale, count_tools=lambda tools: 0) as llm:
        db = str(tmp_path / "r.duckdb")
        result = run(db, days=4, seeds=[1, 2], models=[model(llm)])
        assert {t["status"] for t in result.as_json()["trials"]} == {"completed"}
        warnings = query(db, "SELECT kind, message FROM run_warnings")
        assert [w[0] for w in warnings] == ["tools_dropped"]
        assert "ignored the tools" in warnings[0][1]


def test_a_server_that_keeps_the_tools_raises_no_warning(tmp_path):
    for server in (counting_like_us(1.4), FakeLLM()):
        with server as llm:
            db = str(tmp_path / f"r{id(server)}.duckdb")
            result = run(db, days=6, models=[model(llm)])
            assert result.as_json()["warnings"] == []
            assert query(db, "SELECT count(*) FROM run_warnings") == [(0,)]


def test_the_rebuilt_body_posted_again_is_the_request_byte_for_byte(llm, tmp_path):
    """Every exchange of an OpenAI-format and an Anthropic trial, rebuilt from the log,
    is byte for byte one of the bodies the server received (each exactly once); posted
    again, the server receives the same bytes."""
    db = str(tmp_path / "r.duckdb")
    run(db, days=3, models=[model(llm, temperature=0.3, reasoning_effort="low"), claude(llm)])
    received = {raw: path for raw, path in zip(llm.raw, llm.paths)}
    assert len(received) == len(llm.raw)                    # no two requests alike
    with Store(db, read_only=True) as store:
        rows = store.con.execute("SELECT trial_id, seq FROM exchanges").fetchall()
        rebuilt = [rebuild_request(store, t, s) for t, s in rows]
    assert len(rebuilt) == len(llm.raw) and len({r["model"] for r in rebuilt}) == 2
    matched = set()
    for body in rebuilt:
        data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        assert data in received and data not in matched, body["model"]
        matched.add(data)
        path = received[data]
        urllib.request.urlopen(urllib.request.Request(
            llm.base + path, data=data, headers={"Content-Type": "application/json"}),
            timeout=10).read()
        assert llm.raw[-1] == data and llm.requests[-1] == body
    openai_body = next(b for b, p in zip(llm.requests, llm.paths) if p == "/v1/chat/completions")
    assert openai_body["model"] == "fake-model" and openai_body["temperature"] == 0.3
    assert len(openai_body["tools"]) == 18 and openai_body["tool_choice"] == "auto"


def test_an_anthropic_base_ending_in_v1_is_refused_with_the_fix(llm):
    from vendbench.errors import ConfigError

    with pytest.raises(ConfigError, match="drop the /v1"):
        build_config({"models": [claude(llm, api_base=llm.url)]})
    build_config({"models": [model(llm)]})               # OpenAI-style bases keep their /v1


def test_context_error_numbers_are_read_from_each_providers_words():
    cases = {
        '{"error": {"n_prompt_tokens": 9000, "n_ctx": 8192}}': (9000, 8192),
        "This model's maximum context length is 8192 tokens. However, you requested 9500 "
        "tokens (9000 in the messages, 500 in the completion).": (9000, 8192),
        "prompt is too long: 210000 tokens > 200000 maximum": (210000, 200000),
        "context length exceeded": (None, None),
    }
    for text, (prompt, window) in cases.items():
        limit = context_limit(text)
        assert (limit.prompt_tokens, limit.context_tokens) == (prompt, window), text


def test_retry_after_is_read_as_seconds_or_an_http_date():
    import datetime as dt
    import email.utils

    from vendbench.providers._litellm import _retry_after

    class Answer(Exception):
        def __init__(self, headers):
            self.litellm_response_headers = headers

    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=30)
    assert _retry_after(Answer({"retry-after": "1.5"})) == 1.5
    assert 25 < _retry_after(Answer({"retry-after": email.utils.format_datetime(later)})) <= 30
    assert _retry_after(Answer({"retry-after": "soon"})) is None
    assert _retry_after(Answer({})) is None


def test_decimal_costs_are_exact_after_recovery(tmp_path):
    with counting_like_us(1.5, context_window=6_000) as llm:
        db = str(tmp_path / "r.duckdb")
        run(db, days=10, models=[model(llm, max_context_tokens=10_000)])
        (trial_cost, summed), = query(db, """SELECT t.cost_usd, sum(e.cost_usd) FROM trials t
                                           JOIN exchanges e USING (trial_id) GROUP BY ALL""")
        assert trial_cost == summed and isinstance(summed, Decimal)


def test_a_server_on_this_machine_gets_time_for_a_cold_prompt():
    from vendbench.orchestrator._config import ModelConfig

    local = ModelConfig(id="openai/local", api_base="http://127.0.0.1:8080/v1")
    assert local.timeout_s == 600.0
    assert ModelConfig(id="openai/x", api_base="http://localhost:1/v1").timeout_s == 600.0
    assert ModelConfig(id="openai/gpt-4.1-mini").timeout_s == 120.0
    assert ModelConfig(id="openai/x", api_base="https://api.example.com/v1").timeout_s == 120.0
    assert ModelConfig(id="openai/local", api_base="http://127.0.0.1:8080/v1",
                       request_timeout_s=30).timeout_s == 30.0


def test_a_run_reuses_its_connections_as_a_keep_alive_server_allows(tmp_path):
    """design §25.3: the tests' server answers HTTP/1.1 with keep-alive, as providers do, and
    a trial's requests reuse one connection rather than opening one each."""
    import http.client

    with FakeLLM() as llm:
        connection = http.client.HTTPConnection("127.0.0.1", llm.port, timeout=10)
        for _ in range(2):                    # two requests on one socket
            connection.request("POST", "/v1/chat/completions", body=json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": "Day 2 of 3"}]}),
                headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            assert response.version == 11 and response.getheader("Connection") != "close"
            response.read()
        connection.close()
        assert len(llm.connections) == 1
        llm.connections.clear()
        result = run(str(tmp_path / "r.duckdb"), days=3, models=[model(llm)])
        assert result.as_json()["trials"][0]["status"] == "completed"
        assert llm.served >= 6 and len(llm.connections) == 1
